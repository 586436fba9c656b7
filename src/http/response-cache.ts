// A short-lived per-process cache of rendered list responses (GET /api/v1/forms and the like),
// which clients are already told may be cached for `max-age` seconds.
// Correctness across writes: every write this process makes (any unsafe HTTP method, any job that
// finishes) starts a new epoch, and an entry is only served in the epoch it was computed in, so a
// client always sees its own writes at once. Writes made by other processes (more servers on one
// PostgreSQL) are seen once an entry is older than `ttlMs`: an older entry is still answered
// once more while a fresh one is computed in the background (stale-while-revalidate), so a
// client sees them within about two lifetimes.

export interface CachedResponse {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
}

interface Entry extends CachedResponse {
  readonly epoch: number;
  readonly expiresAt: number;
}

export class ResponseCache {
  readonly #entries = new Map<string, Entry>();
  readonly #refreshing = new Set<string>();
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

  /** The entry for `key` from this epoch, and whether it has outlived `ttlMs`. */
  lookup(key: string, now: number): { response: CachedResponse; stale: boolean } | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.epoch !== this.#epoch) {
      this.#entries.delete(key);
      return undefined;
    }
    return { response: entry, stale: entry.expiresAt <= now };
  }

  /** Claims the background refresh of a stale entry; false when one is already running. */
  beginRefresh(key: string): boolean {
    if (this.#refreshing.has(key)) return false;
    this.#refreshing.add(key);
    return true;
  }

  endRefresh(key: string): void {
    this.#refreshing.delete(key);
  }

  /** Stores a response computed in `epoch` (ignored when a write happened meanwhile). */
  set(key: string, epoch: number, now: number, response: CachedResponse): void {
    if (this.ttlMs <= 0 || epoch !== this.#epoch) return;
    if (this.#entries.size >= this.maxEntries && !this.#entries.has(key)) this.#entries.clear();
    this.#entries.set(key, { ...response, epoch, expiresAt: now + this.ttlMs });
  }
}
