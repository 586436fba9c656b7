// A streaming RFC 4180 CSV writer: rows of text in, UTF-8 chunks of about 64 KiB out.
// Fields holding a comma, a quote, CR or LF are quoted (quotes doubled); lines end with `\n`
// as onadata's exports do.
//
// win_excel_utf8: one byte-order mark at the start of the file. onadata writes a BOM before
// every line (its encoder restarts per row); a BOM inside the file is a stray U+FEFF in the
// first cell of every row for every reader, Excel included, so we deliberately write it once,
// which is all Excel needs to read the file as UTF-8.

import type { RowEncoder } from '../zip/one-pass.ts';

export const BOM = '\uFEFF';
const CHUNK_CHARS = 64 * 1024;
const NEEDS_QUOTES = /[",\r\n]/;

export interface CsvOptions {
  /** Start the file with a UTF-8 byte-order mark (Excel on Windows). */
  readonly bom?: boolean;
}

/** A field as CSV writes it: quoted (quotes doubled) when it holds a comma, a quote, CR or LF. */
export function csvField(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** One CSV line (with its `\n`). A single empty field is written `""` so the line is not blank. */
export function csvLine(cells: readonly string[]): string {
  if (cells.length === 1 && cells[0] === '') return '""\n';
  let line = '';
  for (let i = 0; i < cells.length; i++) {
    if (i > 0) line += ',';
    line += csvField(cells[i] ?? '');
  }
  return `${line}\n`;
}

/** Accumulates lines and hands out UTF-8 chunks once about 64 KiB of text is waiting. */
export class CsvEncoder {
  private pending: string;
  private readonly encoder = new TextEncoder();

  constructor(options: CsvOptions = {}) {
    this.pending = options.bom ? BOM : '';
  }

  /** Adds a row; returns a chunk when enough text has gathered. */
  row(cells: readonly string[]): Uint8Array | undefined {
    return this.line(csvLine(cells));
  }

  /** Adds a line as csvLine writes it; returns a chunk when enough text has gathered. */
  line(text: string): Uint8Array | undefined {
    this.pending += text;
    if (this.pending.length < CHUNK_CHARS) return undefined;
    return this.flush();
  }

  /** Adds a line as csvLine wrote it; the caller decides when to flush. */
  add(line: string): void {
    this.pending += line;
  }

  /** Whatever is left (possibly empty). */
  flush(): Uint8Array {
    const chunk = this.encoder.encode(this.pending);
    this.pending = '';
    return chunk;
  }
}

export interface CsvRowEncoder extends RowEncoder<readonly string[]> {
  add(row: readonly string[]): Uint8Array | undefined;
  end(): Uint8Array;
}

/** A CSV file row by row (one file of a one-pass csvzip, or csvChunks): its header rows, then rows of text. */
export function csvRowEncoder(headerRows: Iterable<readonly string[]>, options: CsvOptions = {}): CsvRowEncoder {
  const encoder = new CsvEncoder(options);
  for (const row of headerRows) encoder.add(csvLine(row));
  return { head: '', add: (row) => encoder.row(row), end: () => encoder.flush() };
}

/** CSV chunks for header rows followed by data rows from a sync or async iterable. */
export async function* csvChunks(
  headerRows: Iterable<readonly string[]>,
  rows: Iterable<readonly string[]> | AsyncIterable<readonly string[]>,
  options: CsvOptions = {},
): AsyncGenerator<Uint8Array> {
  const encoder = csvRowEncoder(headerRows, options);
  for await (const row of rows) {
    const chunk = encoder.add(row);
    if (chunk) yield chunk;
  }
  const last = encoder.end();
  if (last.byteLength > 0) yield last;
}
