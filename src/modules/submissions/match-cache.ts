// The ordered ids of the records a data query matches, kept per process so that paging through
// a query scans the form's records once instead of twice per page (count and page).
// An entry is valid only for the form data version it was computed under (see
// formDataVersion): any submission, edit or deletion changes the version and the next request
// computes the list again.

export interface MatchList {
  readonly version: string;
  readonly ids: Int32Array;
}

export class MatchCache {
  readonly #entries = new Map<string, MatchList>();
  #bytes = 0;

  /** @param budgetBytes the most id bytes kept; the least recently used lists go first. */
  constructor(readonly budgetBytes: number) {}

  get(key: string, version: string): Int32Array | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    if (entry.version !== version) {
      this.#bytes -= entry.ids.byteLength;
      return undefined;
    }
    this.#entries.set(key, entry); // most recently used goes last
    return entry.ids;
  }

  set(key: string, version: string, ids: Int32Array): void {
    const previous = this.#entries.get(key);
    if (previous) {
      this.#entries.delete(key);
      this.#bytes -= previous.ids.byteLength;
    }
    if (ids.byteLength > this.budgetBytes) return;
    this.#entries.set(key, { version, ids });
    this.#bytes += ids.byteLength;
    for (const [oldKey, oldEntry] of this.#entries) {
      if (this.#bytes <= this.budgetBytes) break;
      this.#entries.delete(oldKey);
      this.#bytes -= oldEntry.ids.byteLength;
    }
  }

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }
}
