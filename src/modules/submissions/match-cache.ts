// The ordered ids of the records a data query matches, kept per process so that paging through
// a query scans the form's records once instead of twice per page (count and page).
// An entry is valid only for the form data version it was computed under (see
// formDataVersion). The data API's entries also carry what lets a new submission be merged in
// instead of scanning again (see match-list.ts): the highest record id they saw and, per id, the
// sort keys as numbers.

import type { MatchList, MatchMemory } from '../../caches.ts';

export type { MatchList };

function sizeOf(entry: MatchList): number {
  return entry.ids.byteLength + (entry.keys ?? []).reduce((n, k) => n + k.byteLength, 0);
}

export class MatchCache implements MatchMemory {
  readonly #entries = new Map<string, MatchList>();
  #bytes = 0;

  /** @param budgetBytes the most id (and key) bytes kept; the least recently used lists go first. */
  constructor(readonly budgetBytes: number) {}

  get(key: string, version: string): Int32Array | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.version !== version) {
      this.#remove(key, entry);
      return undefined;
    }
    this.#touch(key, entry);
    return entry.ids;
  }

  set(key: string, version: string, ids: Int32Array): void {
    this.put(key, { version, ids });
  }

  /** The entry under key whatever its version (the caller brings it up to date), most recently used now. */
  peek(key: string): MatchList | undefined {
    const entry = this.#entries.get(key);
    if (entry) this.#touch(key, entry);
    return entry;
  }

  put(key: string, entry: MatchList): void {
    const previous = this.#entries.get(key);
    if (previous) this.#remove(key, previous);
    const size = sizeOf(entry);
    if (size > this.budgetBytes) return;
    this.#entries.set(key, entry);
    this.#bytes += size;
    for (const [oldKey, oldEntry] of this.#entries) {
      if (this.#bytes <= this.budgetBytes) break;
      this.#remove(oldKey, oldEntry);
    }
  }

  #touch(key: string, entry: MatchList): void {
    this.#entries.delete(key);
    this.#entries.set(key, entry); // most recently used goes last
  }

  #remove(key: string, entry: MatchList): void {
    this.#entries.delete(key);
    this.#bytes -= sizeOf(entry);
  }

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }
}
