// Authorization header → Principal. Each scheme is an Authenticator keyed by its keyword; a header
// whose keyword no authenticator knows is ignored (the request is anonymous), as DRF does. Digest
// (OpenRosa) is one more authenticator; when registered, its challenge is the default one.
import type { AppDeps } from '../context.ts';
import { errors } from '../errors.ts';
import { anonymous, type Principal } from '../access/principal.ts';
import { checkApiToken, checkPassword, checkTempToken, type TokenCheck } from '../modules/auth/service.ts';
import { checkBearerToken } from '../modules/oauth/service.ts';
import { checkDigest, standInDigestSecrets, type DigestState } from '../modules/auth/digest-service.ts';
import { DigestNonces, NonceCounts } from '../modules/auth/digest.ts';
import type { SessionAttempt } from './session-auth.ts';

export interface AuthAttempt {
  /** Everything after the scheme keyword, untrimmed. */
  readonly credentials: string;
  readonly ip: string;
  /** The request method and target as sent (path and query): Digest signs them. */
  readonly method?: string;
  readonly uri?: string;
}

export interface Authenticator {
  /** Lower-case scheme keyword, e.g. `token`. */
  readonly keyword: string;
  /** The WWW-Authenticate value sent when this scheme's credentials are refused. */
  challenge(): string;
  /** Returns the principal, or throws a 401 AppError for credentials of this scheme that fail. */
  authenticate(deps: AppDeps, attempt: AuthAttempt): Promise<Principal>;
}

/** DRF's checks on `<Keyword> <key>` headers, shared by Token and TempToken. */
function singleKey(credentials: string, challenge: string): string {
  const parts = credentials.trim().split(/\s+/).filter(Boolean);
  if (parts.length === 0) throw errors.tokenHeaderEmpty(challenge);
  if (parts.length > 1) {
    throw errors.tokenHeaderHasSpaces(challenge);
  }
  const key = parts[0] ?? '';
  if (!/^[\x20-\x7e]+$/.test(key)) {
    throw errors.tokenHeaderHasInvalidCharacters(challenge);
  }
  return key;
}

function tokenPrincipal(result: TokenCheck, scheme: 'token' | 'temptoken'): Principal {
  if (result.ok) return { kind: 'user', user: result.user, scheme };
  throw scheme === 'token' ? errors.apiTokenRefused(result.reason) : errors.tempTokenRefused(result.reason);
}

export const tokenAuthenticator: Authenticator = {
  keyword: 'token',
  challenge: () => 'Token',
  async authenticate(deps, attempt) {
    const key = singleKey(attempt.credentials, 'Token');
    return tokenPrincipal(await checkApiToken(deps, key), 'token');
  },
};

export const tempTokenAuthenticator: Authenticator = {
  keyword: 'temptoken',
  challenge: () => 'TempToken',
  async authenticate(deps, attempt) {
    const key = singleKey(attempt.credentials, 'TempToken');
    return tokenPrincipal(await checkTempToken(deps, key), 'temptoken');
  },
};

/**
 * A temporary token given as the `temp_token` query parameter, on the routes that accept one: the
 * same checks and 401 bodies as the TempToken header.
 */
export async function authenticateTempTokenParameter(deps: AppDeps, key: string): Promise<Principal> {
  return tokenPrincipal(await checkTempToken(deps, key), 'temptoken');
}

/**
 * OAuth 2 access tokens. An unknown, expired or revoked token gets 401 here, where onadata
 * (django-oauth-toolkit) would quietly treat the request as anonymous.
 */
export const bearerAuthenticator: Authenticator = {
  keyword: 'bearer',
  challenge: () => 'Bearer realm="Gather"',
  async authenticate(deps, attempt) {
    const challenge = this.challenge();
    const key = singleKey(attempt.credentials, challenge);
    const result = await checkBearerToken(deps, key);
    if (result.ok) return { kind: 'user', user: result.user, scheme: 'bearer' };
    throw errors.accessTokenRefused(result.reason === 'inactive', challenge);
  },
};

export const basicAuthenticator: Authenticator = {
  keyword: 'basic',
  challenge: () => 'Basic realm="Gather"',
  async authenticate(deps, attempt) {
    const challenge = this.challenge();
    const encoded = attempt.credentials.trim();
    if (!encoded || /\s/.test(encoded)) {
      throw errors.basicHeaderEmpty(challenge);
    }
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) {
      throw errors.basicHeaderNotBase64(challenge);
    }
    const result = await checkPassword(deps, decoded.slice(0, colon), decoded.slice(colon + 1), attempt.ip);
    if (result.ok) return { kind: 'user', user: result.user, scheme: 'basic' };
    if (result.reason === 'locked') throw errors.throttled(result.retryAfterSeconds);
    throw errors.wrongPassword(challenge);
  },
};

/**
 * HTTP Digest (RFC 7616; MD5 or MD5-sess, qop="auth"), for ODK Collect and Briefcase. One per app:
 * it holds the nonce key (from SECRET_KEY) and this process's nonce-count windows.
 */
export function digestAuthenticator(deps: AppDeps): Authenticator {
  const state: DigestState = {
    nonces: new DigestNonces(deps.config.secretKey, deps.config.digestRealm),
    counts: new NonceCounts(),
    standInSecrets: standInDigestSecrets(deps.sealer),
  };
  const challenge = (stale = false): string => state.nonces.challenge(deps.clock.now().getTime(), stale);
  const lockoutMinutes = Math.floor(deps.config.lockoutSeconds / 60);
  return {
    keyword: 'digest',
    challenge: () => challenge(),
    async authenticate(requestDeps, attempt) {
      const result = await checkDigest(requestDeps, state, {
        credentials: attempt.credentials,
        method: attempt.method ?? '',
        uri: attempt.uri ?? '',
        ip: attempt.ip,
      });
      if (result.ok) return { kind: 'user', user: result.user, scheme: 'digest' };
      switch (result.reason) {
        case 'locked':
          throw errors.throttled(result.retryAfterSeconds);
        case 'stale':
          throw errors.digestRefused(result.detail, challenge(true));
        case 'protocol':
          throw errors.digestRefused(result.detail, challenge());
        case 'invalid':
          throw errors.wrongPasswordWithAttemptsLeft(result.remaining, lockoutMinutes, challenge());
      }
    },
  };
}

export class AuthenticatorRegistry {
  readonly #byKeyword = new Map<string, Authenticator>();
  /** Requests without an Authorization header: the browser session cookie (session-auth.ts). */
  readonly #session: ((deps: AppDeps, attempt: SessionAttempt) => Promise<Principal>) | undefined;

  constructor(authenticators: readonly Authenticator[], session?: (deps: AppDeps, attempt: SessionAttempt) => Promise<Principal>) {
    for (const a of authenticators) this.#byKeyword.set(a.keyword, a);
    this.#session = session;
  }

  /** Challenge for a 401 on a request that presented no usable credentials. */
  defaultChallenge(): string {
    return (this.#byKeyword.get('digest') ?? basicAuthenticator).challenge();
  }

  /** The challenge to send with a 401 given the scheme the request used (if any). */
  challengeFor(header: string | undefined): string {
    const keyword = header?.trim().split(/\s+/, 1)[0]?.toLowerCase();
    const authenticator = keyword ? this.#byKeyword.get(keyword) : undefined;
    return authenticator && keyword !== 'basic' ? authenticator.challenge() : this.defaultChallenge();
  }

  async authenticate(
    deps: AppDeps,
    header: string | undefined,
    ip: string,
    request?: { readonly method: string; readonly uri: string } & Partial<Pick<SessionAttempt, 'headers' | 'baseUrl'>>,
  ): Promise<Principal> {
    if (!header) {
      const { headers, baseUrl } = request ?? {};
      return this.#session && request && headers && baseUrl ? this.#session(deps, { method: request.method, uri: request.uri, headers, baseUrl }) : anonymous;
    }
    const trimmed = header.trimStart();
    const space = trimmed.search(/\s/);
    const keyword = (space < 0 ? trimmed : trimmed.slice(0, space)).toLowerCase();
    const authenticator = this.#byKeyword.get(keyword);
    if (!authenticator) return anonymous;
    return authenticator.authenticate(deps, {
      credentials: space < 0 ? '' : trimmed.slice(space + 1),
      ip,
      ...(request ? { method: request.method, uri: request.uri } : {}),
    });
  }
}

/** Every scheme; Digest (whose challenge then becomes the default) needs the app's dependencies. */
export function defaultAuthenticators(deps?: AppDeps): Authenticator[] {
  const digest = deps ? [digestAuthenticator(deps)] : [];
  return [...digest, basicAuthenticator, tempTokenAuthenticator, tokenAuthenticator, bearerAuthenticator];
}
