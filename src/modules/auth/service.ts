// Authentication use cases: checking credentials, and issuing, showing and expiring tokens.
import type { AppDeps } from '../../context.ts';
import { errors } from '../../errors.ts';
import { hashPassword, needsRehash, newTokenKey, sha256, verifyPasswordOrStandIn } from '../../platform/secrets.ts';
import type { DbOrTx } from '../../platform/db.ts';
import { findActiveUserById, findUserByLogin, updateUser, type UserPatch, type UserRow } from '../accounts/repository.ts';
import {
  clearLoginFailures,
  deleteToken,
  findLoginFailures,
  findTokenOfUser,
  findTokenWithUser,
  recordLoginFailure,
  replaceToken,
  type TokenKind,
} from './repository.ts';
import { AuthCache } from './auth-cache.ts';
import { refreshDigestSecrets } from './digest.ts';

export type TokenCheck =
  | { ok: true; user: UserRow }
  | { ok: false; reason: 'unknown' | 'inactive' | 'expired' };

/** Finds a token's user, through the per-process cache. */
async function lookupToken(deps: AppDeps, kind: TokenKind, key: string): Promise<{ user: UserRow; tokenCreatedAt: Date } | undefined> {
  const hash = sha256(key);
  const cacheKey = `${kind}:${hash.toString('base64')}`;
  const now = deps.clock.now().getTime();
  const cached = deps.authCache.getToken(cacheKey, now);
  if (cached) return cached;
  const found = await findTokenWithUser(deps.db, kind, hash);
  if (!found) return undefined;
  const value = { user: found.user, tokenCreatedAt: found.token.created_at };
  deps.authCache.setToken(cacheKey, value, now);
  return value;
}

export async function checkApiToken(deps: AppDeps, key: string): Promise<TokenCheck> {
  const found = await lookupToken(deps, 'api_tokens', key);
  if (!found) return { ok: false, reason: 'unknown' };
  if (!found.user.is_active) return { ok: false, reason: 'inactive' };
  return { ok: true, user: found.user };
}

export function tempTokenExpired(deps: AppDeps, createdAt: Date): boolean {
  return deps.clock.now().getTime() - createdAt.getTime() > deps.config.tempTokenExpirySeconds * 1000;
}

export async function checkTempToken(deps: AppDeps, key: string): Promise<TokenCheck> {
  const found = await lookupToken(deps, 'temp_tokens', key);
  if (!found) return { ok: false, reason: 'unknown' };
  if (!found.user.is_active) return { ok: false, reason: 'inactive' };
  if (tempTokenExpired(deps, found.tokenCreatedAt)) return { ok: false, reason: 'expired' };
  return { ok: true, user: found.user };
}

export type PasswordCheck =
  | { ok: true; user: UserRow }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'locked'; retryAfterSeconds: number };

function failureKey(scope: string, login: string, ip: string): string {
  return `${scope}:${login.toLowerCase()}:${ip}`;
}

function secondsUntil(deps: AppDeps, until: Date): number {
  return Math.max(1, Math.ceil((until.getTime() - deps.clock.now().getTime()) / 1000));
}

/**
 * Checks a username (or e-mail) and password, counting failures per account and address.
 * After MAX_LOGIN_ATTEMPTS failures the pair is locked for LOCKOUT_TIME, even for the right password.
 */
export async function checkPassword(deps: AppDeps, login: string, password: string, ip: string): Promise<PasswordCheck> {
  const user = await findUserByLogin(deps.db, login);
  const key = failureKey('login', user?.username ?? login, ip);
  const failures = await findLoginFailures(deps.db, key);
  const now = deps.clock.now();
  if (failures?.locked_until && failures.locked_until > now) {
    return { ok: false, reason: 'locked', retryAfterSeconds: secondsUntil(deps, failures.locked_until) };
  }

  const cacheKey = AuthCache.passwordKey(login, password);
  const cached = deps.authCache.getPassword(cacheKey, now.getTime());
  if (user && cached && cached.userId === user.id && cached.passwordHash === user.password_hash && user.is_active) {
    return { ok: true, user };
  }

  // An unknown, inactive or organisation account is checked against a stand-in hash: a wrong
  // password takes as long whether or not the account exists.
  const usable = user !== undefined && user.is_active && !user.is_org ? user : undefined;
  const valid = await verifyPasswordOrStandIn(password, usable?.password_hash);
  if (!valid || !user) {
    const lockedUntil = new Date(now.getTime() + deps.config.lockoutSeconds * 1000);
    const row = await recordLoginFailure(deps.db, key, now, deps.config.maxLoginAttempts, lockedUntil);
    if (row.locked_until && row.locked_until > now) {
      return { ok: false, reason: 'locked', retryAfterSeconds: secondsUntil(deps, row.locked_until) };
    }
    return { ok: false, reason: 'invalid' };
  }
  if (failures) await clearLoginFailures(deps.db, key);
  let current = user;
  const patch: UserPatch = {};
  if (needsRehash(user.password_hash)) patch.password_hash = await hashPassword(password);
  // The password is at hand: store the Digest HA1 if missing or outdated (accounts from before
  // Digest, a rename, another DIGEST_REALM), so Digest works from now on.
  const digest = refreshDigestSecrets(deps.sealer, deps.config.digestRealm, user, password);
  if (digest !== undefined) patch.digest_ha1_sealed = digest;
  if (Object.keys(patch).length) current = await updateUser(deps.db, user.id, patch);
  deps.authCache.setPassword(cacheKey, current.id, current.password_hash, now.getTime());
  return { ok: true, user: current };
}

export type LockoutCheck = { locked: true; retryAfterSeconds: number } | { locked: false; hadFailures: boolean };
export type FailedLogin = { locked: true; retryAfterSeconds: number } | { locked: false; remaining: number };

/**
 * The login lockout shared by every password-based scheme (Basic, Digest), per account and
 * address. `account` is the canonical username, or the login as typed when no account matches.
 */
export async function checkLoginLockout(deps: AppDeps, account: string, ip: string): Promise<LockoutCheck> {
  const failures = await findLoginFailures(deps.db, failureKey('login', account, ip));
  if (failures?.locked_until && failures.locked_until > deps.clock.now()) {
    return { locked: true, retryAfterSeconds: secondsUntil(deps, failures.locked_until) };
  }
  return { locked: false, hadFailures: failures !== undefined };
}

/** Counts a failed login in that lockout; says whether it is now locked, or how many tries remain. */
export async function countFailedLogin(deps: AppDeps, account: string, ip: string): Promise<FailedLogin> {
  const now = deps.clock.now();
  const lockedUntil = new Date(now.getTime() + deps.config.lockoutSeconds * 1000);
  const row = await recordLoginFailure(deps.db, failureKey('login', account, ip), now, deps.config.maxLoginAttempts, lockedUntil);
  if (row.locked_until && row.locked_until > now) return { locked: true, retryAfterSeconds: secondsUntil(deps, row.locked_until) };
  return { locked: false, remaining: Math.max(0, deps.config.maxLoginAttempts - row.failures) };
}

/** A successful login ends the count of failures for that account and address. */
export async function forgetFailedLogins(deps: AppDeps, account: string, ip: string): Promise<void> {
  await clearLoginFailures(deps.db, failureKey('login', account, ip));
}

/** Creates a token of this kind for the user, replacing any previous one; returns its key. */
export async function issueToken(deps: AppDeps, db: DbOrTx, kind: TokenKind, userId: number): Promise<string> {
  const key = newTokenKey();
  deps.authCache.forgetUser(userId);
  await replaceToken(db, kind, {
    user_id: userId,
    key_hash: sha256(key),
    key_sealed: deps.sealer.seal(key),
    created_at: deps.clock.now(),
  });
  return key;
}

/** The user's API token, created if missing (as onadata does on GET /api/v1/user). */
export async function apiTokenOf(deps: AppDeps, userId: number): Promise<string> {
  const existing = await findTokenOfUser(deps.db, 'api_tokens', userId);
  if (existing) return deps.sealer.open(existing.key_sealed);
  return issueToken(deps, deps.db, 'api_tokens', userId);
}

/** Both of the user's keys for /api/v1/user, creating or renewing them as needed. */
export async function tokensOf(deps: AppDeps, userId: number): Promise<{ apiToken: string; tempToken: string }> {
  const now = deps.clock.now();
  const cached = deps.authCache.getUserTokens(userId, now.getTime());
  if (cached && !tempTokenExpired(deps, cached.tempCreatedAt)) return cached;
  const apiToken = await apiTokenOf(deps, userId);
  const existing = await findTokenOfUser(deps.db, 'temp_tokens', userId);
  let tempToken: string;
  let tempCreatedAt: Date;
  if (existing && !tempTokenExpired(deps, existing.created_at)) {
    tempToken = deps.sealer.open(existing.key_sealed);
    tempCreatedAt = existing.created_at;
  } else {
    tempToken = await issueToken(deps, deps.db, 'temp_tokens', userId);
    tempCreatedAt = now;
  }
  deps.authCache.setUserTokens(userId, { apiToken, tempToken, tempCreatedAt }, now.getTime());
  return { apiToken, tempToken };
}

export async function expireTempToken(deps: AppDeps, userId: number): Promise<void> {
  deps.authCache.forgetUser(userId);
  const deleted = await deleteToken(deps.db, 'temp_tokens', userId);
  if (!deleted) throw errors.tempTokenNotFound();
}

export async function regenerateApiToken(deps: AppDeps, userId: number): Promise<string> {
  const existing = await findTokenOfUser(deps.db, 'api_tokens', userId);
  if (!existing) throw errors.tokenNotFound();
  return issueToken(deps, deps.db, 'api_tokens', userId);
}

export async function reloadActiveUser(deps: AppDeps, userId: number): Promise<UserRow | undefined> {
  return findActiveUserById(deps.db, userId);
}
