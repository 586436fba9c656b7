// Digest use cases: checking an `Authorization: Digest …` header against the stored HA1 values,
// with the same lockout as Basic, and producing the sealed HA1 values when a password is set.
import type { AppDeps } from '../../context.ts';
import { constantTimeEqual, type Sealer } from '../../platform/secrets.ts';
import { findUserByLogin, type UserRow } from '../accounts/repository.ts';
import { checkLoginLockout, countFailedLogin, forgetFailedLogins } from './service.ts';
import {
  expectedResponse,
  openDigestSecrets,
  parseDigestCredentials,
  pruneDigestSecrets,
  sealDigestSecrets,
  uriMatches,
  DigestNonces,
  NonceCounts,
  type DigestIdentity,
} from './digest.ts';

export interface DigestRequest {
  /** Everything after the `Digest` keyword. */
  readonly credentials: string;
  readonly method: string;
  /** The request target as sent (path and query), which the `uri` parameter must name. */
  readonly uri: string;
  readonly ip: string;
}

export type DigestCheck =
  | { ok: true; user: UserRow }
  /** Not a usable Digest header (malformed, wrong realm or uri, forged nonce…): not counted. */
  | { ok: false; reason: 'protocol'; detail: string }
  /** Wrong password or unknown account: counted in the lockout. */
  | { ok: false; reason: 'invalid'; remaining: number }
  | { ok: false; reason: 'locked'; retryAfterSeconds: number }
  /** The right credentials over an expired nonce or a used nonce count: retry with a new nonce. */
  | { ok: false; reason: 'stale'; detail: string };

/** The machinery one app instance keeps: the nonce key and this process's nonce-count windows. */
export interface DigestState {
  readonly nonces: DigestNonces;
  readonly counts: NonceCounts;
  /** Opened in place of a missing account's HA1 values, so that both cost the same (see checkDigest). */
  readonly standInSecrets: string;
}

/** Sealed HA1 values for no realm and no login: opening them matches nothing. */
export function standInDigestSecrets(sealer: Sealer): string {
  return sealer.seal(JSON.stringify({ realm: '', ha1: {} }));
}

const HEX_NC = /^[0-9a-fA-F]{8}$/;

export async function checkDigest(deps: AppDeps, state: DigestState, request: DigestRequest): Promise<DigestCheck> {
  const parsed = parseDigestCredentials(request.credentials);
  if (!parsed.ok) return { ok: false, reason: 'protocol', detail: parsed.problem };
  const c = parsed.credentials;
  const algorithm = c.algorithm.toUpperCase();
  if (algorithm !== 'MD5' && algorithm !== 'MD5-SESS') {
    return { ok: false, reason: 'protocol', detail: `Invalid digest header. Unsupported algorithm ${c.algorithm}.` };
  }
  if (c.qop !== 'auth') return { ok: false, reason: 'protocol', detail: 'Invalid digest header. qop="auth" is required.' };
  if (!c.nc || !HEX_NC.test(c.nc) || !c.cnonce) {
    return { ok: false, reason: 'protocol', detail: 'Invalid digest header. nc and cnonce are required with qop.' };
  }
  if (c.realm !== state.nonces.realm) return { ok: false, reason: 'protocol', detail: 'Invalid digest header. Wrong realm.' };
  if (!uriMatches(c.uri, request.uri)) {
    return { ok: false, reason: 'protocol', detail: 'Invalid digest header. The uri does not match the request.' };
  }
  if (!state.nonces.opaqueMatches(c.opaque)) return { ok: false, reason: 'protocol', detail: 'Invalid digest header. Wrong opaque.' };
  const nowMs = deps.clock.now().getTime();
  const nonceState = state.nonces.check(c.nonce, nowMs);
  if (nonceState === 'invalid') return { ok: false, reason: 'protocol', detail: 'Invalid digest header. Unknown nonce.' };

  const user = await findUserByLogin(deps.db, c.username);
  const account = user?.username ?? c.username;
  const lockout = await checkLoginLockout(deps, account, request.ip);
  if (lockout.locked) return { ok: false, reason: 'locked', retryAfterSeconds: lockout.retryAfterSeconds };

  // The HA1 for the exact spelling the client typed; none (unknown user, no HA1 stored yet for
  // this spelling or realm) fails like a wrong password, so the answer says nothing about accounts.
  // Without an account, stand-in values are opened: the same work, so the time says nothing either.
  const usable = user && user.is_active && !user.is_org ? user : undefined;
  const secrets = openDigestSecrets(deps.sealer, usable?.digest_ha1_sealed ?? state.standInSecrets);
  const ha1 = secrets?.realm === state.nonces.realm ? secrets.ha1[c.username] : undefined;
  const expected = expectedResponse(ha1 ?? '0'.repeat(32), request.method, c);
  const matches = constantTimeEqual(expected, c.response.toLowerCase());
  if (!user || ha1 === undefined || !matches) {
    const failed = await countFailedLogin(deps, account, request.ip);
    if (failed.locked) return { ok: false, reason: 'locked', retryAfterSeconds: failed.retryAfterSeconds };
    return { ok: false, reason: 'invalid', remaining: failed.remaining };
  }
  if (nonceState === 'stale') return { ok: false, reason: 'stale', detail: 'Stale nonce.' };
  if (!state.counts.use(c.nonce, Number.parseInt(c.nc, 16), state.nonces.expiresAt(c.nonce), nowMs)) {
    return { ok: false, reason: 'stale', detail: 'Nonce count already used.' };
  }
  if (!lockout.hadFailures) return { ok: true, user };
  await forgetFailedLogins(deps, account, request.ip);
  return { ok: true, user };
}

/** The sealed HA1 values for a password being set (registration, password change). */
export function digestSecretsFor(deps: AppDeps, identity: DigestIdentity, password: string): string {
  return sealDigestSecrets(deps.sealer, deps.config.digestRealm, identity, password);
}

/**
 * The sealed HA1 values after the username or e-mail changes. With the password at hand they are
 * recomputed; without it only the spellings still current are kept, and Digest with the new
 * spelling works after the next password change or Basic login (both store fresh values).
 */
export function digestSecretsAfterRename(
  deps: AppDeps,
  stored: string | null,
  identity: DigestIdentity,
  password: string | undefined,
): string | null {
  if (password !== undefined) return digestSecretsFor(deps, identity, password);
  return pruneDigestSecrets(deps.sealer, stored, identity);
}

/**
 * One app's Digest machinery, for src/http's Digest authenticator: the nonce key (from
 * SECRET_KEY) and this process's nonce-count windows.
 */
export function digestChecker(deps: AppDeps): {
  challenge(now: number, stale: boolean): string;
  check(requestDeps: AppDeps, request: DigestRequest): Promise<DigestCheck>;
} {
  const state: DigestState = {
    nonces: new DigestNonces(deps.config.secretKey, deps.config.digestRealm),
    counts: new NonceCounts(),
    standInSecrets: standInDigestSecrets(deps.sealer),
  };
  return {
    challenge: (now, stale) => state.nonces.challenge(now, stale),
    check: (requestDeps, request) => checkDigest(requestDeps, state, request),
  };
}
