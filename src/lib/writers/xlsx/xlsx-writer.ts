// A streaming XLSX writer: sheets of rows in, the bytes of an .xlsx file out, with memory bounded
// by a chunk of XML per sheet and the compressors' queues, whatever the number of rows.
// Worksheets are written first; the workbook part that names them comes last, once continuation
// sheets are known. Two ways in:
// - xlsxChunks: sheets one after another, each read to its end before the next is asked for;
// - xlsxOnePassChunks: every sheet's rows side by side (an export that reads its records once
//   for all sheets); the first sheet streams out, the others are compressed into spools and
//   copied out after it.
// Pure: no fs, network or db.
import type { Spool, SpoolFactory } from '../spool.ts';
import { ZipWriter, type SpooledEntryWriter, type ZipEntryWriter } from '../zip/zip-writer.ts';
import type { Cell, SheetSource } from './cell.ts';
import {
  contentTypesXml,
  rootRelsXml,
  stylesXml,
  workbookRelsXml,
  workbookXml,
  worksheetPath,
} from './package-parts.ts';
import type { SheetLimits } from './sheet-parts.ts';
import { SheetNames } from './sheet-names.ts';
import { SheetWriter, type WrittenRows } from './sheet-writer.ts';

export const XLSX_LIMITS: SheetLimits = { maxRows: 1_048_576, maxColumns: 16_384 };

export interface XlsxOptions {
  /** zlib level, 0 (store) to 9. Default 1: see the README for the measurements. */
  readonly compressionLevel?: number;
  /** Row limit per sheet; only tests lower it. */
  readonly maxRows?: number;
  /** Modification time stamped on the zip entries. Default now. */
  readonly date?: Date;
  /** Bytes of XML gathered before a chunk is handed to the compressor. Default 65,536. */
  readonly chunkBytes?: number;
}

/** A sheet of a one-pass workbook: its rows arrive in the batches. */
export interface WorkbookSheet {
  readonly name: string;
  /** Leading rows repeated at the top of each continuation sheet. Default 0. */
  readonly repeatRows?: number;
}

/** Rows whose XML was written elsewhere (another thread), numbered on from the sheet's rows so far. */
export interface RenderedRows {
  readonly rendered: readonly Uint8Array[];
  readonly count: number;
}

/**
 * The rows one step (a record, or a range of them) adds to each sheet, by the sheet's index
 * (missing: none): cells, written by the caller, or rendered already.
 */
export type RowBatch = ReadonlyArray<ReadonlyArray<readonly Cell[]> | WrittenRows | RenderedRows | undefined>;

interface Settings {
  readonly limits: SheetLimits;
  readonly chunkBytes: number;
}

function settingsOf(options: XlsxOptions): Settings {
  return { limits: { ...XLSX_LIMITS, maxRows: options.maxRows ?? XLSX_LIMITS.maxRows }, chunkBytes: options.chunkBytes ?? 65_536 };
}

function zipOf(options: XlsxOptions): ZipWriter {
  return new ZipWriter({ level: options.compressionLevel ?? 1, date: options.date ?? new Date() });
}

/** Sheet titles in workbook order: each sheet's, then its continuations'. */
function partNames(sheets: ReadonlyArray<SheetWriter<ZipEntryWriter>>): string[] {
  const names = new SheetNames();
  const out: string[] = [];
  for (const sheet of sheets) {
    const base = names.claim(sheet.name);
    out.push(base);
    for (let part = 2; part <= sheet.entries.length; part += 1) out.push(names.continuation(base, part));
  }
  return out;
}

/** The workbook, its relationships, styles and content types: the parts after the worksheets. */
async function* packageTail(zip: ZipWriter, names: string[]): AsyncGenerator<Uint8Array, void, undefined> {
  if (names.length === 0) {
    const empty = new SheetWriter('Sheet1', 0, XLSX_LIMITS, 1, async () => zip.openStreamed(worksheetPath(0)));
    await empty.end();
    names.push('Sheet1');
  }
  const parts: Array<[string, string]> = [
    ['xl/workbook.xml', workbookXml(names)],
    ['xl/_rels/workbook.xml.rels', workbookRelsXml(names.length)],
    ['xl/styles.xml', stylesXml()],
    ['_rels/.rels', rootRelsXml()],
    ['[Content_Types].xml', contentTypesXml(names.length)],
  ];
  for (const [name, xml] of parts) {
    const entry = zip.openStreamed(name);
    await entry.write(xml);
    await entry.close();
    yield* zip.take();
  }
  yield zip.finish();
}

/** The .xlsx file's bytes, in chunks. Errors (including SpreadsheetLimitError) surface from the iteration. */
export async function* xlsxChunks(sheets: SheetSource, options: XlsxOptions = {}): AsyncGenerator<Uint8Array, void, undefined> {
  const { limits, chunkBytes } = settingsOf(options);
  const zip = zipOf(options);
  const writers: SheetWriter<ZipEntryWriter>[] = [];
  let paths = 0;
  try {
    for await (const sheet of sheets) {
      const writer = new SheetWriter(sheet.name, sheet.repeatRows ?? 0, limits, chunkBytes, async () => zip.openStreamed(worksheetPath(paths++)));
      writers.push(writer);
      for await (const row of sheet.rows) {
        writer.add(row);
        if (writer.wantsFlush) {
          await writer.flush();
          yield* zip.take();
        }
      }
      await writer.end();
      yield* zip.take();
    }
    yield* packageTail(zip, partNames(writers));
  } finally {
    await zip.dispose();
  }
}

/**
 * The .xlsx file's bytes from one pass over rows of every sheet at once, in groups of steps. The
 * first sheet streams; the others wait, compressed, in spools from `createSpool` until it has ended.
 */
export async function* xlsxOnePassChunks(
  sheets: readonly WorkbookSheet[],
  batches: AsyncIterable<Iterable<RowBatch>>,
  options: XlsxOptions & { readonly createSpool: SpoolFactory },
): AsyncGenerator<Uint8Array, void, undefined> {
  const { limits, chunkBytes } = settingsOf(options);
  const zip = zipOf(options);
  let paths = 0;
  const spooledPart = async (): Promise<SpooledEntryWriter> => {
    const spool: Spool = await options.createSpool();
    return zip.openSpooled(spool);
  };
  const [first, ...rest] = sheets;
  const main = first ? [new SheetWriter(first.name, first.repeatRows ?? 0, limits, chunkBytes, async () => zip.openStreamed(worksheetPath(paths++)))] : [];
  const others = rest.map((sheet) => new SheetWriter(sheet.name, sheet.repeatRows ?? 0, limits, chunkBytes, spooledPart));
  const writers: SheetWriter<ZipEntryWriter>[] = [...main, ...others];
  try {
    // A group of steps (a page of records) is produced lazily, a step at a time, so that only one
    // step's rows are alive at once. The XML is handed on as soon as a chunk of it is ready: XML
    // held for a whole page grew into a rope that every young-generation collection copied
    // (garbage collection took 23% of the time instead of 11%).
    for await (const steps of batches) {
      for (const batch of steps) {
        for (let i = 0; i < writers.length; i += 1) {
          const rows = batch[i];
          const writer = writers[i];
          if (!rows || !writer) continue;
          if ('rendered' in rows) writer.addRendered(rows.rendered, rows.count);
          else if ('write' in rows) writer.addWritten(rows);
          else for (const row of rows) writer.add(row);
          if (writer.wantsFlush) await writer.flush();
        }
      }
      yield* zip.take();
    }
    for (const writer of writers) await writer.end();
    yield* zip.take();
    // The spooled parts follow the streamed ones, numbered and emitted in workbook order.
    const order = others.flatMap((writer) => writer.entries);
    for (const entry of order) entry.name = worksheetPath(paths++);
    yield* zip.emitSpooled(order);
    yield* packageTail(zip, partNames(writers));
  } finally {
    await zip.dispose();
  }
}
