// Verifying a password with argon2 costs tens of milliseconds, too much for every request made
// with HTTP Basic. Successful verifications are remembered for a short time, keyed by a hash of
// the credentials and tied to the password hash they were checked against: a password change
// makes the entry useless at once.
import { sha256 } from '../../platform/secrets.ts';

interface Entry {
  userId: number;
  passwordHash: string;
  expiresAt: number;
}

export class CredentialCache {
  readonly #entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs = 300_000,
    private readonly maxEntries = 10_000,
  ) {}

  static key(login: string, password: string): string {
    return sha256(`${login.toLowerCase()}\u0000${password}`).toString('base64');
  }

  get(key: string, now: number): Entry | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  set(key: string, userId: number, passwordHash: string, now: number): void {
    if (this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { userId, passwordHash, expiresAt: now + this.ttlMs });
  }

  forgetUser(userId: number): void {
    for (const [key, entry] of this.#entries) if (entry.userId === userId) this.#entries.delete(key);
  }
}
