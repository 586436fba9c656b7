// An XLSX export's sheets on more than one core (PostgreSQL only), by flat CSV's machinery
// (csv-threads.ts): helper threads and the main thread each render `_id` ranges of records into
// every sheet's rows, and the main thread hands the ranges' XML to the sheets in order, where it
// is compressed (zlib, on libuv's pool). A range's rows carry their row numbers and `_index`
// counters, which depend on the rows of every range before it: each range is rendered from where
// the records' stored repeat counts predict its counters start (one aggregate over the ranges),
// and when a range did not start where the rows written before it ended (counts stored apart from
// a record's items, records changed meanwhile) its records are read again and written here in turn.
import type { FormModel } from '../../lib/form-model/model.ts';
import { RawSections } from '../../lib/writers/layout/raw-sections.ts';
import { planSections, type SectionedLayout } from '../../lib/writers/layout/sections.ts';
import { SheetBytes } from '../../lib/writers/xlsx/sheet-bytes.ts';
import { fitRow, type SheetLimits } from '../../lib/writers/xlsx/sheet-parts.ts';
import type { RepeatShape } from '../../lib/writers/layout/repeat-shape.ts';
import { borrowHelpers, csvHelperModule, returnHelpers, renderRanges, type CsvHelperSetup, type RenderedRange, type SheetRangeFacts } from './csv-threads.ts';
import type { CsvThreading } from './flat-csv.ts';
import type { ExportOptions } from './options.ts';
import type { RecordPage } from './record-rows.ts';
import { RANGE_SIZE, type ExportSource, type IdRange, type SplitPass } from './source.ts';

/** The sectioned layout of an XLSX (or XLS) export: the same plan on every thread. */
export function planSheets(form: FormModel, options: ExportOptions, baseUrl: string, osmTagKeys: readonly string[]): SectionedLayout {
  // Text cells are never evaluated, so answers like `=1+2` are written as answered.
  return planSections(form, options, { baseUrl }, { parentNames: 'sheet', cellText: 'as-answered' }, osmTagKeys);
}

/** A range of records' rows in every sheet. */
export interface SheetRange {
  readonly records: number;
  /** The `_index` counters (RawSections.counterState()) the range began and ended at. */
  readonly start: readonly number[];
  readonly end: readonly number[];
  /** Per sheet, the range's rows and their XML. */
  readonly rows: readonly number[];
  readonly chunks: ReadonlyArray<readonly Uint8Array[]>;
}

/** Writes ranges of records into every sheet's rows, as the one-pass writer writes them (xlsx-writer.ts). */
export class SheetRangeWriter {
  constructor(
    private readonly raw: RawSections,
    private readonly sheets: ReadonlyArray<{ readonly name: string; readonly headerRows: number }>,
    private readonly limits: SheetLimits,
  ) {}

  /** The page's rows, their counters going on from `start` (and each sheet's rows numbered after its header and the rows they count). */
  render(page: RecordPage, start: readonly number[]): SheetRange {
    const raw = this.raw;
    raw.setCounterState(start);
    const before = raw.rowTotals(start);
    const outs = this.sheets.map(() => new SheetBytes());
    const chunks: Uint8Array[][] = this.sheets.map(() => []);
    const numbers = this.sheets.map((sheet, i) => sheet.headerRows + (before[i] ?? 0));
    let records = 0;
    for (const record of page.storedRecords()) {
      records += 1;
      if (raw.read(record.src, record.start, record.end, record.meta)) {
        for (let i = 0; i < outs.length; i++) {
          const out = outs[i] as SheetBytes;
          const count = raw.rowCount(i);
          for (let k = 0; k < count; k++) {
            out.beginRow((numbers[i] = (numbers[i] as number) + 1));
            raw.writeRow(i, k, out);
            out.endRow();
          }
          if (out.full) (chunks[i] as Uint8Array[]).push(out.take());
        }
      } else {
        const rows = raw.rowsOf(record.parsed());
        for (let i = 0; i < outs.length; i++) {
          const out = outs[i] as SheetBytes;
          const name = this.sheets[i]?.name ?? '';
          for (const row of rows[i] ?? []) out.row((numbers[i] = (numbers[i] as number) + 1), fitRow(row, this.limits, name));
          if (out.full) (chunks[i] as Uint8Array[]).push(out.take());
        }
      }
    }
    outs.forEach((out, i) => {
      if (out.len > 0) (chunks[i] as Uint8Array[]).push(out.take());
    });
    const end = raw.counterState();
    const after = raw.rowTotals(end);
    return { records, start: [...start], end, rows: after.map((n, i) => n - (before[i] ?? 0)), chunks };
  }
}

/** Whether two counter states are the same. */
export function sameCounters(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((n, i) => n === b[i]);
}

/** How one format's sections take ranges of records (see threadedSections). */
export interface SectionRanges<Step> {
  /** The steps of a page's records, read by the pass's own RawSections on this thread. */
  steps(page: RecordPage): Iterable<Step>;
  /** Renders a range on this thread from `start` (with RawSections of its own). */
  render(page: RecordPage, start: readonly number[]): { facts: SheetRangeFacts; chunks: Uint8Array[] };
  /** The step of a rendered range, by its facts and its chunks. */
  joined(facts: SheetRangeFacts, chunks: readonly Uint8Array[]): Step;
  /** Whether sections of these row totals can still take rendered rows. */
  fits(rows: readonly number[]): boolean;
}

/** A range to render: where its counters are predicted to start. */
interface StartedRange extends IdRange {
  start: readonly number[];
}

/**
 * The steps of one pass over the records for every section, the pass split into `_id` ranges
 * rendered by helper threads (`kind` tells them how) and by this thread, after the first page
 * (written here while the helpers start) and before the records after the last range (here
 * too). undefined where the pass cannot be split (PGlite, no helper module); a pass too small
 * for helpers is read here range by range.
 */
export async function threadedSections<Step>(
  source: ExportSource,
  raw: RawSections,
  shape: RepeatShape | undefined,
  osmTagKeys: readonly string[],
  threading: CsvThreading,
  kind: NonNullable<CsvHelperSetup['kind']>,
  sections: SectionRanges<Step>,
): Promise<AsyncIterable<Iterable<Step>> | undefined> {
  const module = threading.threads > 0 && threading.databaseUrl ? csvHelperModule() : undefined;
  if (!module || !threading.databaseUrl) return undefined;
  const split = await source.splitPass();
  if (!split) return undefined;
  if (split.ranges.length * RANGE_SIZE < threading.minRecords) {
    return (async function* serial(): AsyncGenerator<Iterable<Step>> {
      for await (const page of splitPages(split)) {
        yield sections.steps(page);
        await source.noteWritten(page.count);
      }
    })();
  }
  const items = await split.rangeItems(raw.repeatPaths());
  const setup: CsvHelperSetup = {
    kind,
    databaseUrl: threading.databaseUrl,
    formJson: threading.target.formJson,
    options: source.options,
    baseUrl: source.baseUrl,
    repeatCounts: shape?.keyedCounts() ?? [],
    osmTagKeys,
    facts: split.facts,
  };
  return (async function* threaded(): AsyncGenerator<Iterable<Step>> {
    // The helpers start (a thread, its modules, a connection) while the first page is written here.
    const helpers = borrowHelpers(module, setup, threading.threads);
    try {
      yield sections.steps(split.first);
      await source.noteWritten(split.first.count);
      let state = raw.counterState();
      const ranges: StartedRange[] = [];
      let start = state;
      split.ranges.forEach((range, k) => {
        ranges.push({ ...range, start });
        start = raw.stateAfter(start, RANGE_SIZE, (path) => items[k]?.get(path) ?? 0);
      });
      const here = {
        read: async (range: StartedRange) => ({ range, page: await split.readRange(range) }),
        render: ({ range, page }: { range: StartedRange; page: RecordPage }): RenderedRange => {
          const { facts, chunks } = sections.render(page, range.start);
          return { records: page.count, sheets: facts, take: () => chunks };
        },
      };
      let k = 0;
      for await (const rendered of renderRanges(ranges, helpers, here)) {
        const range = ranges[k++] as StartedRange;
        const facts = rendered.sheets;
        const chunks = rendered.take();
        if (facts && sameCounters(facts.start, state) && sections.fits(raw.rowTotals(facts.end))) {
          yield [sections.joined(facts, chunks)];
          state = [...facts.end];
        } else {
          // Not where the rows before it ended: its records are written here, in turn.
          raw.setCounterState(state);
          yield sections.steps(await split.readRange(range));
          state = raw.counterState();
          // The ranges not yet asked for start where this one's end says, not where the counts said.
          const next = ranges[k];
          if (next && !sameCounters(next.start, state)) {
            const shift = state.map((n, i) => n - (next.start[i] ?? 0));
            for (let j = k; j < ranges.length; j++) {
              const later = ranges[j] as StartedRange;
              later.start = later.start.map((n, i) => n + (shift[i] ?? 0));
            }
          }
        }
        await source.noteWritten(rendered.records);
      }
      raw.setCounterState(state);
    } finally {
      await returnHelpers(module, helpers);
    }
    for await (const page of split.rest()) {
      yield sections.steps(page);
      await source.noteWritten(page.count);
    }
  })();
}

/** A split pass's pages in order, read one range ahead: for a pass too small for helper threads. */
async function* splitPages(split: SplitPass): AsyncGenerator<RecordPage> {
  yield split.first;
  let next = split.ranges[0] ? split.readRange(split.ranges[0]) : undefined;
  for (let k = 0; next; k++) {
    const page = await next;
    const following = split.ranges[k + 1];
    next = following ? split.readRange(following) : undefined;
    next?.catch(() => undefined); // a failure surfaces where it is awaited
    yield page;
  }
  yield* split.rest();
}
