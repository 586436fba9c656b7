// xlsx and xls exports (§3.3): one sheet per section (the survey, then each repeat), header rows
// first, linked by `_index`, `_parent_index` and `_parent_table_name` (the parent's sheet title).
// Both read the records once for every sheet. XLSX's first sheet streams and the others wait
// compressed in temporary files; XLS spools every sheet, since its file starts with their sizes.
import type { SectionedLayout } from '../../lib/writers/layout/sections.ts';
import type { Cell } from '../../lib/writers/layout/types.ts';
import { xlsxOnePassChunks, XLSX_LIMITS } from '../../lib/writers/xlsx/index.ts';
import { xlsOnePassChunks, XLS_LIMITS, type SpoolFactory } from '../../lib/writers/xls/index.ts';
import { errors } from '../../errors.ts';
import type { RawSections } from '../../lib/writers/layout/raw-sections.ts';
import type { RowBatch } from '../../lib/writers/xlsx/index.ts';
import type { SheetBytes } from '../../lib/writers/xlsx/sheet-bytes.ts';
import type { WrittenRows } from '../../lib/writers/xlsx/sheet-writer.ts';
import { sectionBatches, storedSectionsOf, storedSteps } from './section-pass.ts';
import type { ExportSource, RecordPage } from './source.ts';
import type { RepeatShape } from '../../lib/writers/layout/repeat-shape.ts';
import type { CsvThreading } from './flat-csv.ts';
import { planSheets, SheetRangeWriter, threadedSections } from './sheet-ranges.ts';

async function sheetLayout(source: ExportSource, maxColumns: number, format: string, osmTagKeys?: readonly string[]): Promise<SectionedLayout> {
  const layout = planSheets(source.form, source.options, source.baseUrl, osmTagKeys ?? (await source.osmTagKeys()));
  // Refused here, before the first byte: a column cannot continue on another sheet.
  const wide = layout.sections.find((section) => section.columns.length > maxColumns);
  if (wide) throw errors.tooManyColumns(format, maxColumns, wide.sheetName, wide.columns.length);
  return layout;
}

/** The header rows of every sheet, then its rows from one pass over the records. */
async function* workbookBatches(source: ExportSource, layout: SectionedLayout): AsyncGenerator<Iterable<ReadonlyArray<ReadonlyArray<readonly Cell[]>>>> {
  yield [layout.sections.map((section) => section.headerRows)];
  yield* sectionBatches(source, layout, layout.sections.map(() => (cells: Cell[]) => cells));
}

/** A sheet's rows of the record read last, written from its stored bytes. */
class StoredRows implements WrittenRows {
  count = 0;

  constructor(
    private readonly raw: RawSections,
    private readonly section: number,
  ) {}

  write(out: SheetBytes, rowNumber: number, k: number): void {
    out.beginRow(rowNumber);
    this.raw.writeRow(this.section, k, out);
    out.endRow();
  }
}

/** The steps of a page's records in every sheet, read from their stored bytes by `raw`. */
function storedWorkbookSteps(layout: SectionedLayout, raw: RawSections): (page: RecordPage) => Generator<RowBatch> {
  const sheets = layout.sections.map((_, i) => new StoredRows(raw, i));
  const read = (): RowBatch => {
    for (let i = 0; i < sheets.length; i++) (sheets[i] as StoredRows).count = raw.rowCount(i);
    return sheets;
  };
  return storedSteps<RowBatch>(raw, read, (record) => raw.rowsOf(record));
}

/**
 * The header rows of every sheet, then its rows from one pass over the records' stored bytes
 * (raw-sections.ts): no record is parsed but those whose repeats outgrew the plan.
 */
async function* storedWorkbookBatches(source: ExportSource, layout: SectionedLayout, raw: RawSections): AsyncGenerator<Iterable<RowBatch>> {
  yield [layout.sections.map((section) => section.headerRows)];
  const steps = storedWorkbookSteps(layout, raw);
  for await (const page of source.serialPages()) yield steps(page);
}

/**
 * As storedWorkbookBatches, with the pass split into `_id` ranges rendered by helper threads and
 * by this one (sheet-ranges.ts); undefined where the pass cannot be split (PGlite, no helper
 * module).
 */
async function threadedWorkbookBatches(
  source: ExportSource,
  layout: SectionedLayout,
  raw: RawSections,
  shape: RepeatShape | undefined,
  osmTagKeys: readonly string[],
  threading: CsvThreading,
): Promise<AsyncIterable<Iterable<RowBatch>> | undefined> {
  const sheets = layout.sections.map((section) => ({ name: section.sheetName, headerRows: section.headerRows.length }));
  // This thread's own ranges, with counters of their own: made at its first range, since on PGlite
  // or with no helper module the pass is not split at all.
  let local: SheetRangeWriter | undefined;
  const passes = await threadedSections<RowBatch>(source, raw, shape, osmTagKeys, threading, 'xlsx', {
    steps: storedWorkbookSteps(layout, raw),
    render: (page, start) => {
      local ??= new SheetRangeWriter(storedSectionsOf(layout, shape) as RawSections, sheets, XLSX_LIMITS);
      const rendered = local.render(page, start);
      return { facts: { start: rendered.start, end: rendered.end, rows: rendered.rows, chunks: rendered.chunks.map((c) => c.length) }, chunks: rendered.chunks.flat() };
    },
    joined: (facts, chunks) => {
      let at = 0;
      return facts.rows.map((count, i) => {
        const mine = chunks.slice(at, at + (facts.chunks[i] ?? 0));
        at += facts.chunks[i] ?? 0;
        return { rendered: mine, count };
      });
    },
    // Rows past the limit continue on other sheets, written in turn here.
    fits: (rows) => rows.every((n, i) => (sheets[i]?.headerRows ?? 0) + n <= XLSX_LIMITS.maxRows),
  });
  if (!passes) return undefined;
  return (async function* batches(): AsyncGenerator<Iterable<RowBatch>> {
    yield [layout.sections.map((section) => section.headerRows)];
    yield* passes;
  })();
}

export async function xlsxExport(source: ExportSource, now: Date, spools: SpoolFactory, threading?: CsvThreading): Promise<AsyncIterable<Uint8Array>> {
  const osmTagKeys = await source.osmTagKeys();
  const layout = await sheetLayout(source, XLSX_LIMITS.maxColumns, 'xlsx', osmTagKeys);
  const sheets = layout.sections.map((section) => ({ name: section.sheetName, repeatRows: section.headerRows.length }));
  const shape = layout.sections.length > 1 ? await source.repeatShape() : undefined;
  const raw = storedSectionsOf(layout, shape);
  const threaded = raw && threading ? await threadedWorkbookBatches(source, layout, raw, shape, osmTagKeys, threading) : undefined;
  const batches = threaded ?? (raw ? storedWorkbookBatches(source, layout, raw) : workbookBatches(source, layout));
  return xlsxOnePassChunks(sheets, batches, { date: now, createSpool: spools });
}

export async function xlsExport(source: ExportSource, spools: SpoolFactory): Promise<AsyncIterable<Uint8Array>> {
  const layout = await sheetLayout(source, XLS_LIMITS.maxColumns, 'xls');
  const sheets = layout.sections.map((section) => ({ name: section.sheetName, repeatRows: section.headerRows.length }));
  return xlsOnePassChunks(sheets, workbookBatches(source, layout), { createSpool: spools });
}
