// Authorization header → Principal. Each scheme is an Authenticator keyed by its keyword; a header
// whose keyword no authenticator knows is ignored (the request is anonymous), as DRF does. Digest
// (OpenRosa) is one more authenticator; when registered, its challenge is the default one.
import type { AppDeps } from '../context.ts';
import { errors } from '../errors.ts';
import { anonymous, type Principal } from '../access/principal.ts';
import type { CredentialChecks, DigestChecker, TokenCheck } from './credentials.ts';
import { authenticateSession, type SessionAttempt } from './session-auth.ts';

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

const tokenAuthenticator = (checks: CredentialChecks): Authenticator => ({
  keyword: 'token',
  challenge: () => 'Token',
  async authenticate(deps, attempt) {
    const key = singleKey(attempt.credentials, 'Token');
    return tokenPrincipal(await checks.apiToken(deps, key), 'token');
  },
});

const tempTokenPrincipal = (result: TokenCheck): Principal => tokenPrincipal(result, 'temptoken');

const tempTokenAuthenticator = (checks: CredentialChecks): Authenticator => ({
  keyword: 'temptoken',
  challenge: () => 'TempToken',
  async authenticate(deps, attempt) {
    return tempTokenPrincipal(await checks.tempToken(deps, singleKey(attempt.credentials, 'TempToken')));
  },
});

/**
 * OAuth 2 access tokens. An unknown, expired or revoked token gets 401 here, where onadata
 * (django-oauth-toolkit) would quietly treat the request as anonymous.
 */
const bearerAuthenticator = (checks: CredentialChecks): Authenticator => ({
  keyword: 'bearer',
  challenge: () => 'Bearer realm="Gather"',
  async authenticate(deps, attempt) {
    const challenge = 'Bearer realm="Gather"';
    const key = singleKey(attempt.credentials, challenge);
    const result = await checks.bearerToken(deps, key);
    if (result.ok) return { kind: 'user', user: result.user, scheme: 'bearer' };
    throw errors.accessTokenRefused(result.reason === 'inactive', challenge);
  },
});

const BASIC_CHALLENGE = 'Basic realm="Gather"';

const basicAuthenticator = (checks: CredentialChecks): Authenticator => ({
  keyword: 'basic',
  challenge: () => BASIC_CHALLENGE,
  async authenticate(deps, attempt) {
    const challenge = BASIC_CHALLENGE;
    const encoded = attempt.credentials.trim();
    if (!encoded || /\s/.test(encoded)) {
      throw errors.basicHeaderEmpty(challenge);
    }
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) {
      throw errors.basicHeaderNotBase64(challenge);
    }
    const result = await checks.password(deps, decoded.slice(0, colon), decoded.slice(colon + 1), attempt.ip);
    if (result.ok) return { kind: 'user', user: result.user, scheme: 'basic' };
    if (result.reason === 'locked') throw errors.throttled(result.retryAfterSeconds);
    throw errors.wrongPassword(challenge);
  },
});

/**
 * HTTP Digest (RFC 7616; MD5 or MD5-sess, qop="auth"), for ODK Collect and Briefcase. One per app:
 * it holds the nonce key (from SECRET_KEY) and this process's nonce-count windows.
 */
function digestAuthenticator(deps: AppDeps, digest: DigestChecker): Authenticator {
  const challenge = (stale = false): string => digest.challenge(deps.clock.now().getTime(), stale);
  const lockoutMinutes = Math.floor(deps.config.lockoutSeconds / 60);
  return {
    keyword: 'digest',
    challenge: () => challenge(),
    async authenticate(requestDeps, attempt) {
      const result = await digest.check(requestDeps, {
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
  /** The modules' checks, handed in by src/app.ts; the session cookie's (session-auth.ts) among them. */
  readonly #checks: CredentialChecks;

  /** Every scheme, Digest's challenge the default one, and the browser session. */
  constructor(deps: AppDeps, checks: CredentialChecks) {
    const authenticators = [digestAuthenticator(deps, checks.digest), basicAuthenticator(checks), tempTokenAuthenticator(checks), tokenAuthenticator(checks), bearerAuthenticator(checks)];
    for (const a of authenticators) this.#byKeyword.set(a.keyword, a);
    this.#checks = checks;
  }

  /** Challenge for a 401 on a request that presented no usable credentials. */
  defaultChallenge(): string {
    return this.#byKeyword.get('digest')?.challenge() ?? BASIC_CHALLENGE;
  }

  /**
   * A temporary token given as the `temp_token` query parameter, on the routes that accept one:
   * the same checks and 401 bodies as the TempToken header.
   */
  async authenticateTempTokenParameter(deps: AppDeps, key: string): Promise<Principal> {
    return tempTokenPrincipal(await this.#checks.tempToken(deps, key));
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
      return request && headers && baseUrl ? authenticateSession(deps, this.#checks, { method: request.method, uri: request.uri, headers, baseUrl }) : anonymous;
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
