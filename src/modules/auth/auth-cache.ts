// Per-process memory of recent successful authentications, so that a hot API path does not pay
// an argon2 verification (Basic) or a database round trip (tokens) on every request.
//
// - Password entries are keyed by a hash of the credentials and tied to the password hash they
//   were checked against, so a password change makes them useless at once.
// - Token entries live for `tokenTtlMs` (default 2 s). Every write that changes a user or their
//   tokens in this process calls `forgetUser`, so this process never serves stale data; another
//   process sharing the same PostgreSQL server sees a revocation at most `tokenTtlMs` late.
import { sha256 } from '../../platform/secrets.ts';
import type { AuthMemory, CachedPassword, CachedToken, UserTokens } from '../../caches.ts';

export type { CachedToken, UserTokens };

interface PasswordEntry extends CachedPassword {
  expiresAt: number;
}

interface TokenEntry extends CachedToken {
  expiresAt: number;
}

function evictOldest<V>(map: Map<string, V>, max: number): void {
  if (map.size < max) return;
  const oldest = map.keys().next();
  if (!oldest.done) map.delete(oldest.value);
}

interface UserTokensEntry extends UserTokens {
  expiresAt: number;
}

export class AuthCache implements AuthMemory {
  readonly #passwords = new Map<string, PasswordEntry>();
  readonly #tokens = new Map<string, TokenEntry>();
  readonly #userTokens = new Map<string, UserTokensEntry>();

  constructor(
    private readonly tokenTtlMs = 2_000,
    private readonly passwordTtlMs = 300_000,
    private readonly maxEntries = 10_000,
  ) {}

  static passwordKey(login: string, password: string): string {
    return sha256(`${login.toLowerCase()}\u0000${password}`).toString('base64');
  }

  getPassword(key: string, now: number): PasswordEntry | undefined {
    const entry = this.#passwords.get(key);
    if (entry && entry.expiresAt > now) return entry;
    if (entry) this.#passwords.delete(key);
    return undefined;
  }

  setPassword(key: string, userId: number, passwordHash: string, now: number): void {
    evictOldest(this.#passwords, this.maxEntries);
    this.#passwords.set(key, { userId, passwordHash, expiresAt: now + this.passwordTtlMs });
  }

  getToken(key: string, now: number): CachedToken | undefined {
    const entry = this.#tokens.get(key);
    if (entry && entry.expiresAt > now) return entry;
    if (entry) this.#tokens.delete(key);
    return undefined;
  }

  setToken(key: string, value: CachedToken, now: number): void {
    if (this.tokenTtlMs <= 0) return;
    evictOldest(this.#tokens, this.maxEntries);
    this.#tokens.set(key, { ...value, expiresAt: now + this.tokenTtlMs });
  }

  getUserTokens(userId: number, now: number): UserTokens | undefined {
    const entry = this.#userTokens.get(String(userId));
    if (entry && entry.expiresAt > now) return entry;
    if (entry) this.#userTokens.delete(String(userId));
    return undefined;
  }

  setUserTokens(userId: number, value: UserTokens, now: number): void {
    if (this.tokenTtlMs <= 0) return;
    evictOldest(this.#userTokens, this.maxEntries);
    this.#userTokens.set(String(userId), { ...value, expiresAt: now + this.tokenTtlMs });
  }

  forgetUser(userId: number): void {
    this.#userTokens.delete(String(userId));
    for (const [key, entry] of this.#passwords) if (entry.userId === userId) this.#passwords.delete(key);
    for (const [key, entry] of this.#tokens) if (entry.user.id === userId) this.#tokens.delete(key);
  }
}
