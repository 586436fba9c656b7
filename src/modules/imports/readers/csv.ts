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
