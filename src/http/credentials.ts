// What authentication needs from the auth and OAuth modules, named here so that src/http imports
// no module: src/app.ts hands the modules' implementation in (credentialChecks there).
import type { AppDeps } from '../context.ts';
import type { Principal } from '../access/principal.ts';

type User = Extract<Principal, { kind: 'user' }>['user'];

export type TokenCheck = { ok: true; user: User } | { ok: false; reason: 'unknown' | 'inactive' | 'expired' };

export type PasswordCheck =
  | { ok: true; user: User }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'locked'; retryAfterSeconds: number };

export type BearerCheck = { ok: true; user: User } | { ok: false; reason: 'invalid' | 'inactive' };

export type DigestCheck =
  | { ok: true; user: User }
  | { ok: false; reason: 'protocol' | 'stale'; detail: string }
  | { ok: false; reason: 'invalid'; remaining: number }
  | { ok: false; reason: 'locked'; retryAfterSeconds: number };

/** One app's Digest machinery (nonce key, nonce-count windows). */
export interface DigestChecker {
  /** The WWW-Authenticate value with a fresh nonce; `stale` when the old one only expired. */
  challenge(now: number, stale: boolean): string;
  check(deps: AppDeps, request: { credentials: string; method: string; uri: string; ip: string }): Promise<DigestCheck>;
}

export interface CredentialChecks {
  apiToken(deps: AppDeps, key: string): Promise<TokenCheck>;
  tempToken(deps: AppDeps, key: string): Promise<TokenCheck>;
  password(deps: AppDeps, login: string, password: string, ip: string): Promise<PasswordCheck>;
  bearerToken(deps: AppDeps, key: string): Promise<BearerCheck>;
  /** The user of a sealed browser session, if it is genuine and current. */
  sessionUser(deps: AppDeps, sealed: string): Promise<User | undefined>;
  digest: DigestChecker;
}
