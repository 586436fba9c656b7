// A zip of several files written from one pass over their rows (csvzip, savzip): every file's
// rows arrive side by side in batches. The first file streams out as it is written; the others
// are compressed into spools and copied out after it. Pure: no fs, network or db.
import type { SpoolFactory } from '../spool.ts';
import { ZipWriter, type ZipEntryWriter, type ZipOptions } from './zip-writer.ts';

/** How one file turns its rows into bytes. */
export interface RowEncoder<Row, Piece = never> {
  /** The file's first bytes (its header). */
  readonly head: Uint8Array | string;
  /** Adds a row; returns bytes once enough have gathered to be worth writing. */
  add(row: Row): Uint8Array | string | undefined;
  /** Joins rows encoded elsewhere (another thread) after those added; returns the bytes now final. */
  join?(piece: Piece): readonly Uint8Array[];
  /** The file's last bytes. */
  end(): Uint8Array | string;
}

export interface OnePassFile<Row, Piece = never> {
  readonly name: string;
  readonly encoder: RowEncoder<Row, Piece>;
}

/** The rows one step (a record) adds to each file, by the file's index (missing: none). */
export type FileBatch<Row, Piece = never> = ReadonlyArray<ReadonlyArray<Row> | JoinedRows<Piece> | undefined>;

/** Rows a file's encoder joins whole (encoded elsewhere): see RowEncoder.join. */
export interface JoinedRows<Piece> {
  readonly joined: Piece;
}

export async function* zipOnePassChunks<Row, Piece = never>(
  files: ReadonlyArray<OnePassFile<Row, Piece>>,
  batches: AsyncIterable<Iterable<FileBatch<Row, Piece>>>,
  options: ZipOptions & { readonly createSpool: SpoolFactory },
): AsyncGenerator<Uint8Array, void, undefined> {
  const zip = new ZipWriter(options);
  try {
    const entries: ZipEntryWriter[] = [];
    for (const [index, file] of files.entries()) {
      const entry = index === 0 ? zip.openStreamed(file.name) : zip.openSpooled(await options.createSpool(), file.name);
      entries.push(entry);
      await entry.write(file.encoder.head);
    }
    yield* zip.take();
    // A group of steps (a page of records) is produced lazily, a step at a time, so that only one
    // step's rows are alive at once.
    for await (const steps of batches) {
      for (const batch of steps) {
        for (let i = 0; i < files.length; i += 1) {
          const rows = batch[i];
          const encoder = files[i]?.encoder;
          const entry = entries[i];
          if (!rows || !encoder || !entry) continue;
          if ('joined' in rows) {
            for (const bytes of encoder.join?.(rows.joined) ?? []) await entry.write(bytes);
            continue;
          }
          for (const row of rows) {
            const bytes = encoder.add(row);
            if (bytes !== undefined) await entry.write(bytes);
          }
        }
      }
      yield* zip.take();
    }
    for (const [index, entry] of entries.entries()) {
      const last = files[index]?.encoder.end();
      if (last !== undefined) await entry.write(last);
      await entry.close();
    }
    yield* zip.take();
    yield* zip.emitSpooled();
    yield zip.finish();
  } finally {
    await zip.dispose();
  }
}
