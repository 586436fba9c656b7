// A streaming SPSS system-file (.sav) writer: the dictionary first, then one case per row,
// in chunks, with memory bounded by one case and one compression block. Pure: bytes in,
// bytes out; the caller decides where they go.
import { CaseEncoder } from './case-encoder.ts';
import { CompressedSink, PlainSink } from './case-sinks.ts';
import { CASE_COUNT_OFFSET } from './constants.ts';
import { encodeDictionary } from './dictionary.ts';
import { resolveLayout } from './layout.ts';
import type { SavCaseOut, SavCasePieceRow, SavRow, SavVariable, SavWriterOptions, SavWrittenRow } from './types.ts';
import type { RowEncoder } from '../zip/one-pass.ts';

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

export function createSavWriter(
  variables: ReadonlyArray<SavVariable>,
  options: SavWriterOptions = {},
): SavWriter {
  return createSavEncoder(variables, options);
}

/** The writer plus what batching needs: rows can be added without taking their bytes each time. */
interface SavEncoder extends SavWriter {
  add(values: SavRow): void;
  addWritten(row: SavWrittenRow): void;
  /** Joins cases encoded elsewhere (compressed files only); the bytes now final. */
  join(row: SavCasePieceRow): Uint8Array[];
  readonly readyLength: number;
  take(): Uint8Array;
  finish(): void;
}

/**
 * Cases of a compressed file encoded apart from it (on another thread), a piece at a time: joined
 * into the file in order by its encoder (SavRowEncoder.join).
 */
export interface SavCasePieces {
  /** Begins a piece of cases that follow `casesBefore` cases of the file. */
  begin(casesBefore: number): void;
  add(row: SavRow | SavWrittenRow): void;
  /** The cases added since begin(), as a piece (its bytes copied out). */
  piece(): SavCasePieceRow;
}

export function savCasePieces(variables: ReadonlyArray<SavVariable>, options: SavWriterOptions = {}): SavCasePieces {
  const layout = resolveLayout(variables, options.defaultStringWidth ?? DEFAULT_STRING_WIDTH);
  if (options.compression === false) throw new Error('sav writer: only compressed cases are encoded apart');
  const encoder = new CaseEncoder(layout);
  const sink = new CompressedSink(layout.slotCount);
  let phase = 0;
  let cases = 0;
  const out: SavCaseOut = {
    cell: (index, cell) => encoder.cell(index, cell, sink),
    textBytes: (index, src, start, end) => encoder.textBytes(index, src, start, end, sink),
  };
  return {
    begin(casesBefore) {
      phase = (casesBefore * layout.slotCount) % 8;
      sink.startAt(phase);
      cases = 0;
    },
    add(row) {
      if ('write' in row) {
        sink.beginCase();
        row.write(out);
      } else encoder.encode(row, sink);
      cases += 1;
    },
    piece: () => ({ piece: sink.piece(phase), cases }),
  };
}

function createSavEncoder(variables: ReadonlyArray<SavVariable>, options: SavWriterOptions): SavEncoder {
  const layout = resolveLayout(variables, options.defaultStringWidth ?? DEFAULT_STRING_WIDTH);
  const compressed = options.compression ?? true;
  const encoder = new CaseEncoder(layout);
  const sink = compressed ? new CompressedSink(layout.slotCount) : new PlainSink(layout.slotCount);
  let rowsWritten = 0;

  const add = (values: SavRow): void => {
    encoder.encode(values, sink);
    rowsWritten += 1;
  };
  const out: SavCaseOut = {
    cell: (index, cell) => encoder.cell(index, cell, sink),
    textBytes: (index, src, start, end) => encoder.textBytes(index, src, start, end, sink),
  };
  const addWritten = (row: SavWrittenRow): void => {
    sink.beginCase();
    row.write(out);
    rowsWritten += 1;
  };
  const join = (row: SavCasePieceRow): Uint8Array[] => {
    if (!(sink instanceof CompressedSink)) throw new Error('sav writer: only compressed cases are joined');
    rowsWritten += row.cases;
    return sink.join(row.piece);
  };
  const finish = (): void => {
    if (options.rowCount !== undefined && options.rowCount !== rowsWritten) {
      throw new Error(`sav writer: header promised ${options.rowCount} rows but ${rowsWritten} were written`);
    }
    sink.finish();
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
      add(values);
      return sink.take();
    },
    end() {
      finish();
      return sink.take();
    },
    variableNames: () => layout.variables.map((v) => v.name),
    add,
    addWritten,
    join,
    get readyLength() {
      return sink.readyLength;
    },
    take: () => sink.take(),
    finish,
  };
}

/** Little-endian int32 bytes to write at `offset` once the row count is known (for seekable outputs). */
export function savCaseCountPatch(rowCount: number): { offset: number; bytes: Uint8Array } {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setInt32(0, rowCount, true);
  return { offset: CASE_COUNT_OFFSET, bytes };
}

/** A .sav file's bytes as rows are added: the dictionary, then cases in chunks of about `chunkBytes`. */
export interface SavRowEncoder extends RowEncoder<SavRow | SavWrittenRow, SavCasePieceRow> {
  readonly head: Uint8Array;
  add(row: SavRow | SavWrittenRow): Uint8Array | undefined;
  join(piece: SavCasePieceRow): Uint8Array[];
  end(): Uint8Array;
}

/** A .sav file row by row (one file of a one-pass savzip, or savChunks). */
export function savRowEncoder(
  variables: ReadonlyArray<SavVariable>,
  options: SavWriterOptions & { readonly chunkBytes?: number } = {},
): SavRowEncoder {
  const chunkBytes = options.chunkBytes ?? 64 * 1024;
  const writer = createSavEncoder(variables, options);
  return {
    head: writer.header(),
    join: (piece) => writer.join(piece),
    add(row) {
      if ('write' in row) writer.addWritten(row);
      else writer.add(row);
      return writer.readyLength >= chunkBytes ? writer.take() : undefined;
    },
    end() {
      writer.finish();
      return writer.take();
    },
  };
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
  const encoder = savRowEncoder(variables, options);
  yield encoder.head;
  // A plain for…of for synchronous sources: for await would cost a promise per row.
  if (Symbol.iterator in rows) {
    for (const row of rows) {
      const chunk = encoder.add(row);
      if (chunk) yield chunk;
    }
  } else {
    for await (const row of rows) {
      const chunk = encoder.add(row);
      if (chunk) yield chunk;
    }
  }
  const rest = encoder.end();
  if (rest.length > 0) yield rest;
}
