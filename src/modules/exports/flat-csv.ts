// Flat CSV: the flat layout through the CSV writer, a database page of records at a time. On
// PostgreSQL a big export is rendered on helper threads as well (csv-threads.ts).
import { csvLine, CsvEncoder } from '../../exports/csv/writer.ts';
import { planFlatLayout, type FlatLayout } from '../../exports/layout/flat.ts';
import type { ExportRecord } from '../../exports/layout/types.ts';
import { CsvHelper, csvHelperModule, renderRanges, type CsvHelperSetup } from './csv-threads.ts';
import { RECORD_PAGE_SIZE, type ExportSource, type ExportTarget, type IdRange, type SplitPass } from './source.ts';

/** The CSV lines of these records. */
export function flatCsvText(layout: FlatLayout, records: Iterable<ExportRecord>): string {
  let text = '';
  for (const record of records) text += csvLine(layout.row(record));
  return text;
}

/** Helper threads for big exports on PostgreSQL (EXPORT_THREADS, EXPORT_THREAD_MIN_RECORDS). */
export interface CsvThreading {
  readonly threads: number;
  readonly minRecords: number;
  readonly databaseUrl: string | undefined;
  readonly target: ExportTarget;
}

/** The pages, each told to the source once written (an export job's progress). */
async function* noted(source: ExportSource, pages: Iterable<ExportRecord[]> | AsyncIterable<ExportRecord[]>): AsyncGenerator<ExportRecord[]> {
  for await (const page of pages) {
    const records = page.length; // the reader empties the page
    yield page;
    await source.noteWritten(records);
  }
}

export async function flatCsvChunks(source: ExportSource, threading?: CsvThreading): Promise<AsyncIterable<Uint8Array>> {
  const [shape, osmTagKeys] = await Promise.all([source.repeatShape(), source.osmTagKeys()]);
  const layout = planFlatLayout(source.form, source.options, shape, { baseUrl: source.baseUrl }, osmTagKeys);
  const encoder = new CsvEncoder({ bom: source.options.winExcelUtf8 });
  const textEncoder = new TextEncoder();
  for (const row of layout.headerRows) encoder.add(csvLine(row));

  /** One chunk per page: each record costs no promise or generator step of its own. */
  async function* byPage(pages: AsyncIterable<ExportRecord[]>): AsyncGenerator<Uint8Array> {
    for await (const page of pages) {
      encoder.add(flatCsvText(layout, page));
      page.length = 0;
      yield encoder.flush();
    }
  }

  async function* threaded(split: SplitPass, setup: CsvHelperSetup, threads: number, module: URL): AsyncGenerator<Uint8Array> {
    encoder.add(flatCsvText(layout, split.first));
    await source.noteWritten(split.first.length);
    yield encoder.flush();
    const helpers = Array.from({ length: threads }, () => new CsvHelper(module, setup));
    try {
      const here = {
        read: (range: IdRange) => split.readRange(range),
        render: ({ count, records }: { count: number; records: Iterable<ExportRecord> }) => ({ bytes: textEncoder.encode(flatCsvText(layout, records)), records: count }),
      };
      for await (const rendered of renderRanges(split.ranges, helpers, here)) {
        yield rendered.bytes;
        await source.noteWritten(rendered.records);
      }
    } finally {
      await Promise.all(helpers.map((helper) => helper.close()));
    }
    for await (const page of split.rest()) {
      encoder.add(flatCsvText(layout, page));
      await source.noteWritten(page.length);
      yield encoder.flush();
    }
  }

  async function* chunks(): AsyncGenerator<Uint8Array> {
    const module = threading && threading.threads > 0 && threading.databaseUrl ? csvHelperModule() : undefined;
    const split = module ? await source.splitPass() : undefined;
    if (!threading?.databaseUrl || !module || !split) {
      yield* byPage(source.pages());
    } else if (split.ranges.length * RECORD_PAGE_SIZE < threading.minRecords) {
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
