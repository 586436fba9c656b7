// Where a pure writer keeps bytes it cannot emit yet: the legacy XLS writer's cell records (its
// file header needs sizes known only at the end) and the one-pass zip writers' later entries
// (a zip entry's bytes must be contiguous, so sections written side by side cannot all stream).
// The caller provides the storage: temporary files in the server, memory in tests.
export interface Spool {
  /** Stores a copy of `chunk`: the caller reuses its memory once the promise resolves. */
  write(chunk: Uint8Array): Promise<void>;
  /** Everything written, in order. Called once, after the last write. */
  read(): AsyncIterable<Uint8Array>;
  /** Releases the spool's storage; called whether or not the file was finished. */
  dispose(): Promise<void>;
}

export type SpoolFactory = () => Promise<Spool>;

/** A spool in memory: for tests and small files. */
export function memorySpool(): Spool {
  let chunks: Uint8Array[] = [];
  return {
    write(chunk) {
      chunks.push(Uint8Array.from(chunk));
      return Promise.resolve();
    },
    async *read() {
      yield* chunks;
    },
    dispose() {
      chunks = [];
      return Promise.resolve();
    },
  };
}
