// The OAuth 2 protocol endpoints' use cases: the authorization request (checked before the
// consent page, then decided through the library), the token endpoint (through the library)
// and token revocation (RFC 7009, which the library lacks).
import type OAuth2Server from '@node-oauth/oauth2-server';
import type { AppDeps } from '../../context.ts';
import { sha256 } from '../../platform/secrets.ts';
import type { UserRow } from '../accounts/repository.ts';
import { authenticateClient, createModel, grantableScopes, type Scope } from './model.ts';
import {
  deleteAccessToken,
  findAccessToken,
  findApplicationByClientId,
  findRefreshToken,
  revokeRefreshToken,
  type ApplicationRow,
} from './repository.ts';
import { loadOAuthLibrary, type OAuthLibrary } from './library.ts';

/** Request parameters as single strings; `repeated` names one given more than once (RFC 6749 §3.1). */
export interface OAuthParams {
  readonly values: Readonly<Record<string, string>>;
  readonly repeated: string | undefined;
}

export function readParams(input: unknown): OAuthParams {
  const values: Record<string, string> = {};
  let repeated: string | undefined;
  if (typeof input === 'object' && input !== null) {
    for (const [key, value] of Object.entries(input)) {
      if (typeof value === 'string') values[key] = value;
      else if (typeof value === 'number' || typeof value === 'boolean') values[key] = String(value);
      else if (Array.isArray(value)) repeated ??= key;
    }
  }
  return { values, repeated };
}

// ---------------------------------------------------------------- authorization endpoint

/** The parameters the consent form carries back to the decision. */
export const AUTHORIZATION_PARAMS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
] as const;

export type AuthorizationCheck =
  /** Client or redirect URI not trustworthy: tell the user, never redirect (RFC 6749 §4.1.2.1). */
  | { kind: 'refused'; error: string; description: string }
  | { kind: 'redirect'; location: string }
  | { kind: 'consent'; application: ApplicationRow; scopes: Scope[]; params: Record<string, string> };

function errorRedirect(redirectUri: string, error: string, description: string, state: string | undefined): AuthorizationCheck {
  const url = new URL(redirectUri);
  url.searchParams.set('error', error);
  url.searchParams.set('error_description', description);
  if (state) url.searchParams.set('state', state);
  return { kind: 'redirect', location: url.toString() };
}

const PKCE_CHALLENGE = /^[A-Za-z0-9._~-]{43,128}$/;
const VISIBLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * Checks an authorization request before the consent page, with the errors RFC 6749 §4.1.2.1
 * defines. The decision runs these checks again, so a tampered consent form gains nothing.
 */
export async function checkAuthorizationRequest(deps: AppDeps, params: OAuthParams): Promise<AuthorizationCheck> {
  const p = params.values;
  if (params.repeated === 'client_id' || params.repeated === 'redirect_uri') {
    return { kind: 'refused', error: 'invalid_request', description: `Parameter \`${params.repeated}\` is repeated.` };
  }
  const clientId = p['client_id'];
  if (!clientId) return { kind: 'refused', error: 'invalid_request', description: 'Missing parameter: `client_id`' };
  const application = await findApplicationByClientId(deps.db, clientId);
  if (!application) return { kind: 'refused', error: 'invalid_client', description: 'Invalid client: unknown `client_id`' };
  const registered = application.redirect_uris.split(/\s+/).filter(Boolean);
  const requested = p['redirect_uri'];
  if (requested !== undefined && !registered.includes(requested)) {
    return { kind: 'refused', error: 'invalid_request', description: 'Invalid request: `redirect_uri` does not match the registered one' };
  }
  const redirectUri = requested ?? registered[0];
  if (!redirectUri) return { kind: 'refused', error: 'invalid_client', description: 'Invalid client: no registered `redirect_uri`' };

  const state = p['state'];
  const fail = (error: string, description: string) => errorRedirect(redirectUri, error, description, state);
  if (params.repeated) return fail('invalid_request', `Parameter \`${params.repeated}\` is repeated.`);
  if (state !== undefined && !VISIBLE_ASCII.test(state)) return fail('invalid_request', 'Invalid parameter: `state`');
  const responseType = p['response_type'];
  if (!responseType) return fail('invalid_request', 'Missing parameter: `response_type`');
  if (responseType !== 'code') return fail('unsupported_response_type', 'Only `response_type=code` is supported.');
  const scopes = grantableScopes(p['scope']?.trim().split(/\s+/).filter(Boolean));
  if (!scopes) return fail('invalid_scope', 'Invalid scope: known scopes are read, write and groups.');
  const challenge = p['code_challenge'];
  const method = p['code_challenge_method'];
  if (method !== undefined && method !== 'S256') return fail('invalid_request', 'PKCE code_challenge_method must be S256.');
  if (challenge !== undefined && !PKCE_CHALLENGE.test(challenge)) return fail('invalid_request', 'Invalid parameter: `code_challenge`');
  if (challenge === undefined && method !== undefined) return fail('invalid_request', 'PKCE code_challenge is required.');
  if (challenge === undefined && application.client_type === 'public') {
    return fail('invalid_request', 'PKCE code_challenge is required for public clients.');
  }

  const forward: Record<string, string> = {};
  for (const name of AUTHORIZATION_PARAMS) {
    const value = p[name];
    if (value !== undefined) forward[name] = value;
  }
  forward['redirect_uri'] = redirectUri;
  forward['scope'] = scopes.join(' ');
  return { kind: 'consent', application, scopes, params: forward };
}

function isOAuthError(library: OAuthLibrary, error: unknown): error is OAuth2Server.OAuthError {
  return error instanceof library.OAuthError;
}

/** A library error that is our fault: its cause goes to the error handler (500, logged). */
function rethrowServerError(library: OAuthLibrary, error: unknown): void {
  if (!isOAuthError(library, error) || error.code >= 500) {
    const inner: unknown = isOAuthError(library, error) ? (error as { inner?: unknown }).inner : undefined;
    throw inner ?? error;
  }
}

/** The signed-in user allowed (the library issues a code) or denied the request. */
export async function decideAuthorization(deps: AppDeps, user: UserRow, params: OAuthParams, allowed: boolean): Promise<AuthorizationCheck> {
  const check = await checkAuthorizationRequest(deps, params);
  if (check.kind !== 'consent') return check;
  if (!allowed) {
    // Answered here: the library's error redirect drops a query the registered URI already has.
    const { redirect_uri: redirectUri = '', state } = check.params;
    return errorRedirect(redirectUri, 'access_denied', 'The user denied access to the application.', state);
  }
  const library = await loadOAuthLibrary();
  const server = new library({
    model: createModel(deps, 'authorize', library),
    authorizationCodeLifetime: deps.config.oauthAuthorizationCodeSeconds,
    allowEmptyState: true,
    authenticateHandler: { handle: () => user },
  });
  const request = new library.Request({
    method: 'POST',
    headers: {},
    query: {},
    body: { ...check.params },
  });
  const response = new library.Response();
  try {
    await server.authorize(request, response);
  } catch (error) {
    rethrowServerError(library, error);
    const location: unknown = response.get('location');
    if (typeof location === 'string') return { kind: 'redirect', location };
    const oauthError = error as OAuth2Server.OAuthError;
    return { kind: 'refused', error: oauthError.name, description: oauthError.message };
  }
  const location: unknown = response.get('location');
  if (typeof location !== 'string') throw new Error('authorization succeeded without a redirect');
  return { kind: 'redirect', location };
}

// ---------------------------------------------------------------- token and revocation endpoints

export interface EndpointResult {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** undefined: an empty body. */
  readonly body: Record<string, unknown> | undefined;
}

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

function oauthError(status: number, error: string, description: string, basicUsed = false): EndpointResult {
  return {
    status,
    headers: { ...NO_STORE, ...(basicUsed ? { 'www-authenticate': 'Basic realm="Gather"' } : {}) },
    body: { error, error_description: description },
  };
}

export interface ClientRequest {
  /** Lower-case header names, single values. */
  readonly headers: Readonly<Record<string, string>>;
  readonly params: OAuthParams;
}

const SUPPORTED_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
/** The library's message when a token request's redirect_uri differs from the code's (oauth.test.ts holds it to it). */
const REDIRECT_MISMATCH = 'Invalid request: `redirect_uri` is invalid';

/** POST /o/token: authorization_code and refresh_token grants, by the library. */
export async function issueToken(deps: AppDeps, request: ClientRequest): Promise<EndpointResult> {
  if (request.params.repeated) return oauthError(400, 'invalid_request', `Parameter \`${request.params.repeated}\` is repeated.`);
  // The library also knows the password and client_credentials grants; this server offers neither.
  const grantType = request.params.values['grant_type'];
  if (grantType && !(SUPPORTED_GRANT_TYPES as readonly string[]).includes(grantType)) {
    return oauthError(400, 'unsupported_grant_type', 'Unsupported grant type: use authorization_code or refresh_token.');
  }
  const library = await loadOAuthLibrary();
  const server = new library({
    model: createModel(deps, 'token', library),
    accessTokenLifetime: deps.config.oauthAccessTokenSeconds,
    // Required by the library; the model keeps refresh tokens by its own setting.
    refreshTokenLifetime: deps.config.oauthRefreshTokenSeconds ?? 10 * 365 * 86400,
    // The model authenticates every client by its type, so the library never insists on a secret.
    requireClientAuthentication: { authorization_code: false, refresh_token: false },
    alwaysIssueNewRefreshToken: true,
  });
  const libraryRequest = new library.Request({ method: 'POST', headers: { ...request.headers }, query: {}, body: { ...request.params.values } });
  const response = new library.Response();
  try {
    const token = await server.token(libraryRequest, response);
    return {
      status: 200,
      headers: NO_STORE,
      body: {
        access_token: token.accessToken,
        expires_in: deps.config.oauthAccessTokenSeconds,
        token_type: 'Bearer',
        scope: (token.scope ?? []).join(' '),
        ...(token.refreshToken ? { refresh_token: token.refreshToken } : {}),
      },
    };
  } catch (error) {
    rethrowServerError(library, error);
    const failure = error as OAuth2Server.OAuthError;
    // A redirect_uri other than the one the code was issued for makes the grant itself invalid
    // (RFC 6749 §5.2: it "does not match the redirection URI used in the authorization
    // request"); the library calls that invalid_request.
    const name = failure.message === REDIRECT_MISMATCH ? 'invalid_grant' : failure.name;
    return oauthError(failure.code, name, failure.message, response.get('www-authenticate') !== undefined);
  }
}

/** Client credentials from HTTP Basic (form-encoded, RFC 6749 §2.3.1) or from the body. */
function clientCredentials(request: ClientRequest): { clientId: string | undefined; secret: string | undefined; basic: boolean } {
  const header = request.headers['authorization'] ?? '';
  const match = /^basic\s+(\S+)\s*$/i.exec(header);
  if (match?.[1]) {
    const decoded = Buffer.from(match[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return { clientId: undefined, secret: undefined, basic: true };
    const decode = (part: string) => {
      try {
        return decodeURIComponent(part.replace(/\+/g, ' '));
      } catch {
        return part;
      }
    };
    return { clientId: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)), basic: true };
  }
  const values = request.params.values;
  return { clientId: values['client_id'], secret: values['client_secret'], basic: false };
}

/**
 * POST /o/revoke_token/ (RFC 7009): the client revokes one of its own tokens. A refresh token
 * takes its access token with it. Unknown tokens answer 200 too, as the RFC asks.
 */
export async function revokeToken(deps: AppDeps, request: ClientRequest): Promise<EndpointResult> {
  const { clientId, secret, basic } = clientCredentials(request);
  if (request.params.repeated) return oauthError(400, 'invalid_request', `Parameter \`${request.params.repeated}\` is repeated.`);
  const application = clientId ? await authenticateClient(deps, clientId, secret) : undefined;
  if (!application) return oauthError(basic ? 401 : 400, 'invalid_client', 'Invalid client: client is invalid', basic);
  const token = request.params.values['token'];
  if (!token) return oauthError(400, 'invalid_request', 'Missing parameter: `token`');

  const hash = sha256(token);
  const lookups = [
    async () => {
      const access = await findAccessToken(deps.db, hash);
      return access && { applicationId: access.application_id, revoke: () => deleteAccessToken(deps.db, access.id) };
    },
    async () => {
      const refresh = await findRefreshToken(deps.db, hash);
      return refresh && { applicationId: refresh.application_id, revoke: () => revokeRefreshToken(deps.db, hash, deps.clock.now()) };
    },
  ];
  if (request.params.values['token_type_hint'] === 'refresh_token') lookups.reverse();
  for (const lookup of lookups) {
    const found = await lookup();
    if (!found) continue;
    if (found.applicationId !== application.id) {
      return oauthError(400, 'unauthorized_client', 'The token was not issued to this client.');
    }
    await found.revoke();
    break;
  }
  return { status: 200, headers: NO_STORE, body: undefined };
}
