// A short-lived per-process cache of rendered list responses (GET /api/v1/forms and the like),
// which clients are already told may be cached for `max-age` seconds.
// Correctness across writes: every write this process makes (any unsafe HTTP method, any job that
// finishes) starts a new epoch, and an entry is only served in the epoch it was computed in, so a
// client always sees its own writes. Writes made by other processes (more servers on one
// PostgreSQL) are seen within `ttlMs`.

export interface CachedResponse {
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

interface Entry extends CachedResponse {
  readonly epoch: number;
  readonly expiresAt: number;
}

export class ResponseCache {
  readonly #entries = new Map<string, Entry>();
  #epoch = 0;

  /** @param ttlMs 0 turns the cache off. */
  constructor(
    readonly ttlMs: number,
    readonly maxEntries = 256,
  ) {}

  /** The current epoch: read it before computing a response that may be stored. */
  get epoch(): number {
    return this.#epoch;
  }

  /** After a write: nothing computed before it is served again. */
  invalidate(): void {
    this.#epoch++;
    this.#entries.clear();
  }

  get(key: string, now: number): CachedResponse | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.epoch !== this.#epoch || entry.expiresAt <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  /** Stores a response computed in `epoch` (ignored when a write happened meanwhile). */
  set(key: string, epoch: number, now: number, response: CachedResponse): void {
    if (this.ttlMs <= 0 || epoch !== this.#epoch) return;
    if (this.#entries.size >= this.maxEntries) this.#entries.clear();
    this.#entries.set(key, { ...response, epoch, expiresAt: now + this.ttlMs });
  }
}
