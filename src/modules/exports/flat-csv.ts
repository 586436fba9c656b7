// Flat CSV: the flat layout through the CSV writer, a database page of records at a time. On
// PostgreSQL a big export is rendered on helper threads as well (csv-threads.ts).
import { csvLine, CsvEncoder } from '../../lib/writers/csv/writer.ts';
import { compileCsvRows, type CsvRowWriter } from '../../lib/writers/csv/compiled-rows.ts';
import { planFlatLayout, type FlatLayout } from '../../lib/writers/layout/flat.ts';
import { rawCsvWriter, type RawCsvWriter } from '../../lib/writers/csv/raw-rows.ts';
import { ROW_META_KEYS } from './record-rows.ts';
import { borrowHelpers, csvHelperModule, returnHelpers, renderRanges, type CsvHelperSetup } from './csv-threads.ts';
import { RANGE_SIZE, type ExportSource, type ExportTarget, type IdRange, type RecordPage, type SplitPass } from './source.ts';

/**
 * How a flat CSV's records become lines: from their stored text's bytes where every column has a
 * rule (raw-rows.ts: about 30% less CPU a record than parsing it, and no parsed objects to collect),
 * else through the parsed records and the compiled row writer.
 */
export interface FlatCsvLines {
  readonly write: CsvRowWriter;
  readonly raw: RawCsvWriter | undefined;
}

export function flatCsvLines(layout: FlatLayout): FlatCsvLines {
  return { write: compileCsvRows(layout.columns), raw: rawCsvWriter(layout.columns, ROW_META_KEYS) };
}

/**
 * The CSV lines of a page's records, after whatever `encoder` holds, as UTF-8 chunks of about
 * 64 KiB; the encoder's last lines stay in it unless `flush`. Text is encoded as soon as a chunk
 * of it is ready: a page's text held whole grew into a rope that young-generation collections
 * kept copying while the page's records were parsed.
 */
export function flatCsvBytes(lines: FlatCsvLines, page: RecordPage, encoder: CsvEncoder, flush = true): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  if (lines.raw && page.rawLines) {
    const held = encoder.flush();
    if (held.byteLength > 0) chunks.push(held);
    chunks.push(...page.rawLines(lines.raw));
    return chunks;
  }
  for (const record of page.records) {
    const chunk = encoder.line(lines.write(record));
    if (chunk) chunks.push(chunk);
  }
  if (flush) {
    const last = encoder.flush();
    if (last.byteLength > 0) chunks.push(last);
  }
  return chunks;
}

/** Helper threads for big exports on PostgreSQL (EXPORT_THREADS, EXPORT_THREAD_MIN_RECORDS). */
export interface CsvThreading {
  readonly threads: number;
  readonly minRecords: number;
  readonly databaseUrl: string | undefined;
  readonly target: ExportTarget;
}

/** The pages, each told to the source once written (an export job's progress). */
async function* noted(source: ExportSource, pages: Iterable<RecordPage> | AsyncIterable<RecordPage>): AsyncGenerator<RecordPage> {
  for await (const page of pages) {
    yield page;
    await source.noteWritten(page.count);
  }
}

export async function flatCsvChunks(source: ExportSource, threading?: CsvThreading): Promise<AsyncIterable<Uint8Array>> {
  const module = threading && threading.threads > 0 && threading.databaseUrl ? csvHelperModule() : undefined;
  // The pass is split (its ranges listed) while the repeat counts are read: two queries at once,
  // about 0.3 s sooner to the first record of 1,000,000.
  const [shape, osmTagKeys, split] = await Promise.all([source.repeatShape(), source.osmTagKeys(), module ? source.splitPass() : undefined]);
  const layout = planFlatLayout(source.form, source.options, shape, { baseUrl: source.baseUrl }, osmTagKeys);
  const lines = flatCsvLines(layout);
  const encoder = new CsvEncoder({ bom: source.options.winExcelUtf8 });
  for (const row of layout.headerRows) encoder.add(csvLine(row));

  /** Chunks of about 64 KiB as the pages' records are rendered; a record costs no promise of its own. */
  async function* byPage(pages: AsyncIterable<RecordPage>): AsyncGenerator<Uint8Array> {
    for await (const page of pages) yield* flatCsvBytes(lines, page, encoder, false);
  }

  async function* threaded(split: SplitPass, setup: CsvHelperSetup, threads: number, module: URL): AsyncGenerator<Uint8Array> {
    // The helpers start (a thread, its modules, a connection) while the first page is rendered here.
    const helpers = borrowHelpers(module, setup, threads);
    try {
      yield* flatCsvBytes(lines, split.first, encoder);
      await source.noteWritten(split.first.count);
      const rangeEncoder = new CsvEncoder();
      const here = {
        read: (range: IdRange) => split.readRange(range),
        render: (page: RecordPage) => {
          const chunks = flatCsvBytes(lines, page, rangeEncoder);
          return { records: page.count, take: () => chunks };
        },
      };
      for await (const rendered of renderRanges(split.ranges, helpers, here)) {
        yield* rendered.take();
        await source.noteWritten(rendered.records);
      }
    } finally {
      await returnHelpers(module, helpers);
    }
    for await (const page of split.rest()) {
      yield* flatCsvBytes(lines, page, encoder, false);
      await source.noteWritten(page.count);
    }
  }

  async function* chunks(): AsyncGenerator<Uint8Array> {
    if (!threading?.databaseUrl || !module || !split) {
      yield* byPage(source.pages());
    } else if (split.ranges.length * RANGE_SIZE < threading.minRecords) {
      yield* byPage(noted(source, [split.first]));
      yield* byPage(noted(source, split.remaining()));
    } else {
      const setup: CsvHelperSetup = {
        databaseUrl: threading.databaseUrl,
        formJson: threading.target.formJson,
        options: source.options,
        baseUrl: source.baseUrl,
        repeatCounts: shape.keyedCounts(),
        osmTagKeys,
        facts: split.facts,
      };
      yield* threaded(split, setup, threading.threads, module);
    }
    const last = encoder.flush();
    if (last.byteLength > 0) yield last;
  }
  return chunks();
}
