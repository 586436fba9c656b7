// CSV rows streamed from a file with constant memory: UTF-8 checked as it is decoded (onadata
// refuses other encodings), the delimiter guessed among onadata's (, ; TAB |), blank lines skipped.
import { createReadStream } from 'node:fs';
import { Transform, type TransformCallback } from 'node:stream';
import Papa from 'papaparse';
import { ImportFileError } from './errors.ts';

export const NOT_UTF8 = 'CSV file must be utf-8 encoded';

/** Bytes → text, refusing anything that is not UTF-8 (a leading BOM is dropped). */
class Utf8Decode extends Transform {
  readonly #decoder = new TextDecoder('utf-8', { fatal: true });

  constructor() {
    super({ decodeStrings: true, readableObjectMode: false, encoding: 'utf8' });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      callback(null, this.#decoder.decode(chunk, { stream: true }));
    } catch {
      callback(new ImportFileError(NOT_UTF8));
    }
  }

  override _flush(callback: TransformCallback): void {
    try {
      callback(null, this.#decoder.decode());
    } catch {
      callback(new ImportFileError(NOT_UTF8));
    }
  }
}

export async function* readCsvRows(path: string): AsyncGenerator<string[]> {
  const file = createReadStream(path, { highWaterMark: 256 * 1024 });
  const decode = new Utf8Decode();
  const parser = Papa.parse(Papa.NODE_STREAM_INPUT, { delimitersToGuess: [',', ';', '\t', '|'], skipEmptyLines: 'greedy' });
  const fail = (error: Error): void => {
    parser.destroy(error);
  };
  file.on('error', fail);
  decode.on('error', fail);
  file.pipe(decode).pipe(parser);
  try {
    for await (const row of parser as AsyncIterable<string[]>) yield row;
  } finally {
    file.destroy();
    decode.destroy();
    parser.destroy();
  }
}

const QUOTE = 0x22;
const NEWLINE = 0x0a;
/** Bytes that do not make a line count as a row: line ends, delimiters and spaces. */
const BLANK = new Uint8Array(256);
for (const byte of [0x0d, 0x0a, 0x2c, 0x3b, 0x09, 0x7c, 0x20]) BLANK[byte] = 1;

/**
 * Counts the data rows of a CSV file fed to it piece by piece (quote-aware, blank lines left out)
 * many times faster than parsing it: the total of an import job's progress. It jumps from quote
 * to line end with indexOf rather than visiting every byte.
 */
export class CsvRowCounter {
  #lines = 0;
  #inQuotes = false;
  /** The current line has something besides blanks. */
  #filled = false;

  add(chunk: Uint8Array): void {
    const data = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const end = data.length;
    // The next quote and line end at or after `at`; `end` when the piece has none left.
    const next = (byte: number, from: number): number => {
      const found = data.indexOf(byte, from);
      return found < 0 ? end : found;
    };
    let at = 0;
    let quote = -1;
    let newline = -1;
    while (at < end) {
      if (this.#inQuotes) {
        // Everything up to the closing quote belongs to the field (line ends included).
        const close = next(QUOTE, at);
        if (close === end) return;
        this.#inQuotes = false;
        at = close + 1;
        continue;
      }
      if (quote < at) quote = next(QUOTE, at);
      if (newline < at) newline = next(NEWLINE, at);
      if (quote < newline) {
        this.#filled = true;
        this.#inQuotes = true;
        at = quote + 1;
        continue;
      }
      if (!this.#filled) this.#filled = hasContent(data, at, newline);
      if (newline === end) return;
      if (this.#filled) this.#lines++;
      this.#filled = false;
      at = newline + 1;
    }
  }

  /** Data rows so far (the header is not one), counting a last line without a line end. */
  get rows(): number {
    return Math.max(this.#lines + (this.#filled ? 1 : 0) - 1, 0);
  }
}

function hasContent(data: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (BLANK[data[i] as number] === 0) return true;
  return false;
}
