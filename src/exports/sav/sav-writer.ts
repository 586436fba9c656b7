// A streaming SPSS system-file (.sav) writer: the dictionary first, then one case per row,
// in chunks, with memory bounded by one case and one compression block. Pure: bytes in,
// bytes out; the caller decides where they go.
import { ByteWriter } from './byte-writer.ts';
import { CaseEncoder } from './case-encoder.ts';
import { Compressor } from './compressor.ts';
import { CASE_COUNT_OFFSET, encodeDictionary } from './dictionary.ts';
import { resolveLayout, type Layout } from './layout.ts';
import type { SavRow, SavVariable, SavWriterOptions } from './types.ts';

export const DEFAULT_STRING_WIDTH = 255;

export interface SavWriter {
  /** Dictionary records up to and including the 999 terminator. Call once, first. */
  header(): Uint8Array;
  /**
   * The bytes of one row, in variable order. null/undefined are system-missing for numerics and
   * blanks for strings. With compression, bytes may lag by up to one block (possibly empty).
   */
  row(values: SavRow): Uint8Array;
  /** Whatever compression still holds. Call once, last. */
  end(): Uint8Array;
  /** The final SPSS names, in order. */
  variableNames(): string[];
}

/** Writes rows into a caller-owned buffer, for batching many rows into one chunk. */
export interface SavCaseSink {
  writeRow(values: SavRow, out: ByteWriter): void;
  finish(out: ByteWriter): void;
}

function numericSlotMask(layout: Layout): Uint8Array {
  const mask = new Uint8Array(layout.slotCount);
  for (const variable of layout.variables) {
    if (variable.type !== 'numeric') continue;
    for (const segment of variable.segments) mask[segment.firstSlot] = 1;
  }
  return mask;
}

export function createSavWriter(
  variables: ReadonlyArray<SavVariable>,
  options: SavWriterOptions = {},
): SavWriter & SavCaseSink {
  const layout = resolveLayout(variables, options.defaultStringWidth ?? DEFAULT_STRING_WIDTH);
  const compressed = options.compression ?? true;
  const encoder = new CaseEncoder(layout);
  const compressor = compressed ? new Compressor(numericSlotMask(layout)) : undefined;
  const rowBuffer = new ByteWriter(layout.slotCount * 9 + 72);
  let rowsWritten = 0;

  const writeRow = (values: SavRow, out: ByteWriter): void => {
    const caseBytes = encoder.encode(values);
    if (compressor) compressor.compress(caseBytes, out);
    else out.bytes(caseBytes);
    rowsWritten += 1;
  };

  const finish = (out: ByteWriter): void => {
    if (options.rowCount !== undefined && options.rowCount !== rowsWritten) {
      throw new Error(`sav writer: header promised ${options.rowCount} rows but ${rowsWritten} were written`);
    }
    compressor?.finish(out);
  };

  return {
    header: () =>
      encodeDictionary(layout, {
        fileLabel: options.fileLabel ?? '',
        compressed,
        caseCount: options.rowCount ?? -1,
        now: options.now ?? new Date(),
      }),
    row(values) {
      rowBuffer.clear();
      writeRow(values, rowBuffer);
      return rowBuffer.toBytes();
    },
    end() {
      rowBuffer.clear();
      finish(rowBuffer);
      return rowBuffer.toBytes();
    },
    variableNames: () => layout.variables.map((v) => v.name),
    writeRow,
    finish,
  };
}

/** Little-endian int32 bytes to write at `offset` once the row count is known (for seekable outputs). */
export function savCaseCountPatch(rowCount: number): { offset: number; bytes: Uint8Array } {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setInt32(0, rowCount, true);
  return { offset: CASE_COUNT_OFFSET, bytes };
}

/**
 * The whole file as a stream of chunks of about `chunkBytes` (default 64 KiB), pulling rows
 * from a sync or async iterable one at a time.
 */
export async function* savChunks(
  variables: ReadonlyArray<SavVariable>,
  rows: Iterable<SavRow> | AsyncIterable<SavRow>,
  options: SavWriterOptions & { readonly chunkBytes?: number } = {},
): AsyncGenerator<Uint8Array, void, undefined> {
  const chunkBytes = options.chunkBytes ?? 64 * 1024;
  const writer = createSavWriter(variables, options);
  yield writer.header();
  const out = new ByteWriter(chunkBytes + 1024);
  for await (const row of rows) {
    writer.writeRow(row, out);
    if (out.length >= chunkBytes) {
      yield out.toBytes();
      out.clear();
    }
  }
  writer.finish(out);
  if (out.length > 0) yield out.toBytes();
}
