// The storage model @node-oauth/oauth2-server calls during the authorization-code and
// refresh-token grants, kept in our database. The library owns the protocol checks (client
// grants, redirect_uri match, PKCE verification, code single use, refresh rotation); this file
// only loads and saves, and adds our policies: client authentication by type, PKCE required for
// public clients, our scopes and lifetimes measured on our clock.
import { timingSafeEqual } from 'node:crypto';
import type OAuth2Server from '@node-oauth/oauth2-server';
import type { AppDeps } from '../../context.ts';
import { sha256 } from '../../platform/secrets.ts';
import { findActiveUserById, type UserRow } from '../accounts/repository.ts';
import {
  deleteAuthorizationCodeByHash,
  deleteExpiredAuthorizationCodes,
  findAccessToken,
  findApplicationByClientId,
  findApplicationById,
  findAuthorizationCode,
  findRefreshToken,
  insertAccessToken,
  insertAuthorizationCode,
  insertRefreshToken,
  revokeRefreshToken,
  type ApplicationRow,
} from './repository.ts';
import { inTransaction } from '../../platform/db.ts';
import type { OAuthLibrary } from './library.ts';

/** onadata's OAUTH2_PROVIDER.SCOPES; a request without a scope gets all of them. */
export const SCOPES = { read: 'Read scope', write: 'Write scope', groups: 'Access to your groups' } as const;
export type Scope = keyof typeof SCOPES;
export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];

export function isScope(value: string): value is Scope {
  return Object.prototype.hasOwnProperty.call(SCOPES, value);
}

/** The requested scopes if all are known (all of them when none is named), else undefined. */
export function grantableScopes(requested: readonly string[] | undefined): Scope[] | undefined {
  if (!requested || requested.length === 0) return [...ALL_SCOPES];
  const scopes: Scope[] = [];
  for (const name of requested) {
    if (!isScope(name)) return undefined;
    if (!scopes.includes(name)) scopes.push(name);
  }
  return scopes;
}

export interface GatherClient extends OAuth2Server.Client {
  /** The public client_id. */
  id: string;
  grants: string[];
  redirectUris: string[];
  applicationId: number;
  clientType: 'confidential' | 'public';
  name: string;
}

export function toClient(application: ApplicationRow): GatherClient {
  return {
    id: application.client_id,
    grants: ['authorization_code', 'refresh_token'],
    redirectUris: application.redirect_uris.split(/\s+/).filter(Boolean),
    applicationId: application.id,
    clientType: application.client_type,
    name: application.name,
  };
}

export function secretMatches(application: ApplicationRow, secret: string): boolean {
  return application.client_secret_hash !== null && timingSafeEqual(sha256(secret), application.client_secret_hash);
}

/**
 * A client at the token and revocation endpoints: a confidential client must present its
 * secret; a public client has none and must present none.
 */
export async function authenticateClient(deps: AppDeps, clientId: string, secret: string | undefined): Promise<ApplicationRow | undefined> {
  const application = await findApplicationByClientId(deps.db, clientId);
  if (!application) return undefined;
  if (application.client_type === 'public') return secret === undefined || secret === '' ? application : undefined;
  return secret !== undefined && secretMatches(application, secret) ? application : undefined;
}

/** The library passes our own user objects back to us untyped. */
function userIdOf(library: OAuthLibrary, user: OAuth2Server.User): number {
  const id: unknown = user['id'];
  if (typeof id !== 'number') throw new library.ServerError('Server error: user has no id');
  return id;
}

function applicationIdOf(library: OAuthLibrary, client: OAuth2Server.Client): number {
  const id: unknown = client['applicationId'];
  if (typeof id !== 'number') throw new library.ServerError('Server error: client has no application id');
  return id;
}

function secondsFrom(now: Date, seconds: number): Date {
  return new Date(now.getTime() + seconds * 1000);
}

/** The client and the user behind a stored grant, if the application and an active user remain. */
async function clientAndUser(deps: AppDeps, applicationId: number, userId: number): Promise<{ client: GatherClient; user: UserRow } | undefined> {
  const application = await findApplicationById(deps.db, applicationId);
  const user = await findActiveUserById(deps.db, userId);
  if (!application || !user || user.is_org) return undefined;
  return { client: toClient(application), user };
}

export type ModelPurpose = 'authorize' | 'token';

export type GatherModel = OAuth2Server.AuthorizationCodeModel & OAuth2Server.RefreshTokenModel;

/**
 * The model for one request. `authorize` looks clients up by id alone (the user is the one
 * authenticated there); `token` authenticates them.
 */
export function createModel(deps: AppDeps, purpose: ModelPurpose, library: OAuthLibrary): GatherModel {
  const { config } = deps;
  return {
    async getClient(clientId, clientSecret) {
      if (purpose === 'authorize') {
        const application = await findApplicationByClientId(deps.db, clientId);
        return application ? toClient(application) : false;
      }
      const application = await authenticateClient(deps, clientId, clientSecret ?? undefined);
      return application ? toClient(application) : false;
    },

    async validateScope(_user, _client, scope) {
      return grantableScopes(scope) ?? false;
    },

    async validateRedirectUri(redirectUri, client) {
      return [client.redirectUris ?? []].flat().includes(redirectUri);
    },

    async saveAuthorizationCode(code, client, user) {
      if (client['clientType'] === 'public' && !code.codeChallenge) {
        throw new library.InvalidRequestError('PKCE code_challenge is required for public clients.');
      }
      const now = deps.clock.now();
      await deleteExpiredAuthorizationCodes(deps.db, now);
      // Expiry on our clock (the library's is the system clock), so tests can move time.
      const expiresAt = secondsFrom(now, config.oauthAuthorizationCodeSeconds);
      await insertAuthorizationCode(deps.db, {
        code_hash: sha256(code.authorizationCode),
        application_id: applicationIdOf(library, client),
        user_id: userIdOf(library, user),
        redirect_uri: code.redirectUri,
        scope: (code.scope ?? []).join(' '),
        code_challenge: code.codeChallenge ?? null,
        code_challenge_method: code.codeChallenge ? (code.codeChallengeMethod ?? 'S256') : null,
        expires_at: expiresAt,
      });
      return { ...code, expiresAt, client, user };
    },

    async getAuthorizationCode(authorizationCode) {
      const row = await findAuthorizationCode(deps.db, sha256(authorizationCode));
      if (!row || row.expires_at <= deps.clock.now()) return false;
      const owner = await clientAndUser(deps, row.application_id, row.user_id);
      if (!owner) return false;
      return {
        authorizationCode,
        expiresAt: row.expires_at,
        redirectUri: row.redirect_uri,
        scope: row.scope.split(' ').filter(Boolean),
        ...(row.code_challenge ? { codeChallenge: row.code_challenge, codeChallengeMethod: row.code_challenge_method ?? 'S256' } : {}),
        ...owner,
      };
    },

    async revokeAuthorizationCode(code) {
      return deleteAuthorizationCodeByHash(deps.db, sha256(code.authorizationCode));
    },

    async saveToken(token, client, user) {
      const now = deps.clock.now();
      const scope = (token.scope ?? []).join(' ');
      const applicationId = applicationIdOf(library, client);
      const userId = userIdOf(library, user);
      await inTransaction(deps.db, async (trx) => {
        const access = await insertAccessToken(trx, {
          token_hash: sha256(token.accessToken),
          application_id: applicationId,
          user_id: userId,
          scope,
          expires_at: secondsFrom(now, config.oauthAccessTokenSeconds),
        });
        if (token.refreshToken) {
          await insertRefreshToken(trx, {
            token_hash: sha256(token.refreshToken),
            access_token_id: access.id,
            application_id: applicationId,
            user_id: userId,
            scope,
          });
        }
      });
      // Refresh tokens expire on our clock in getRefreshToken, so none is stated here.
      const { refreshTokenExpiresAt: _unused, ...issued } = token;
      return { ...issued, client, user };
    },

    async getAccessToken(accessToken) {
      const row = await findAccessToken(deps.db, sha256(accessToken));
      if (!row || row.expires_at <= deps.clock.now()) return false;
      const owner = await clientAndUser(deps, row.application_id, row.user_id);
      if (!owner) return false;
      return { accessToken, accessTokenExpiresAt: row.expires_at, scope: row.scope.split(' ').filter(Boolean), ...owner };
    },

    async getRefreshToken(refreshToken) {
      const row = await findRefreshToken(deps.db, sha256(refreshToken));
      if (!row || row.revoked_at !== null) return false;
      const lifetime = config.oauthRefreshTokenSeconds;
      if (lifetime !== undefined && secondsFrom(row.created_at, lifetime) <= deps.clock.now()) return false;
      const owner = await clientAndUser(deps, row.application_id, row.user_id);
      if (!owner) return false;
      return { refreshToken, scope: row.scope.split(' ').filter(Boolean), ...owner };
    },

    async revokeToken(token) {
      return revokeRefreshToken(deps.db, sha256(token.refreshToken), deps.clock.now());
    },
  };
}
