// xlsx and xls exports (§3.3): one sheet per section (the survey, then each repeat), header rows
// first, linked by `_index`, `_parent_index` and `_parent_table_name` (the parent's sheet title).
// Both read the records once for every sheet. XLSX's first sheet streams and the others wait
// compressed in temporary files; XLS spools every sheet, since its file starts with their sizes.
import { planSections, type SectionedLayout } from '../../lib/writers/layout/sections.ts';
import type { Cell } from '../../lib/writers/layout/types.ts';
import { xlsxOnePassChunks, XLSX_LIMITS } from '../../lib/writers/xlsx/index.ts';
import { xlsOnePassChunks, XLS_LIMITS, type SpoolFactory } from '../../lib/writers/xls/index.ts';
import { errors } from '../../errors.ts';
import type { RawSections } from '../../lib/writers/layout/raw-sections.ts';
import type { RowBatch } from '../../lib/writers/xlsx/index.ts';
import type { SheetBytes } from '../../lib/writers/xlsx/sheet-bytes.ts';
import type { WrittenRows } from '../../lib/writers/xlsx/sheet-writer.ts';
import { sectionBatches, storedBatches, storedSections } from './section-pass.ts';
import type { ExportSource } from './source.ts';

async function sheetLayout(source: ExportSource, maxColumns: number, format: string): Promise<SectionedLayout> {
  const osmTagKeys = await source.osmTagKeys();
  // Text cells are never evaluated, so answers like `=1+2` are written as answered.
  const layout = planSections(source.form, source.options, { baseUrl: source.baseUrl }, { parentNames: 'sheet', cellText: 'as-answered' }, osmTagKeys);
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

/**
 * The header rows of every sheet, then its rows from one pass over the records' stored bytes
 * (raw-sections.ts): no record is parsed but those whose repeats outgrew the plan.
 */
async function* storedWorkbookBatches(source: ExportSource, layout: SectionedLayout, raw: RawSections): AsyncGenerator<Iterable<RowBatch>> {
  yield [layout.sections.map((section) => section.headerRows)];
  const sheets = layout.sections.map((_, i) => new StoredRows(raw, i));
  const read = (): RowBatch => {
    for (let i = 0; i < sheets.length; i++) (sheets[i] as StoredRows).count = raw.rowCount(i);
    return sheets;
  };
  yield* storedBatches<RowBatch>(source, raw, read, (record) => raw.rowsOf(record));
}

export async function xlsxExport(source: ExportSource, now: Date, spools: SpoolFactory): Promise<AsyncIterable<Uint8Array>> {
  const layout = await sheetLayout(source, XLSX_LIMITS.maxColumns, 'xlsx');
  const sheets = layout.sections.map((section) => ({ name: section.sheetName, repeatRows: section.headerRows.length }));
  const raw = await storedSections(source, layout);
  const batches = raw ? storedWorkbookBatches(source, layout, raw) : workbookBatches(source, layout);
  return xlsxOnePassChunks(sheets, batches, { date: now, createSpool: spools });
}

export async function xlsExport(source: ExportSource, spools: SpoolFactory): Promise<AsyncIterable<Uint8Array>> {
  const layout = await sheetLayout(source, XLS_LIMITS.maxColumns, 'xls');
  const sheets = layout.sections.map((section) => ({ name: section.sheetName, repeatRows: section.headerRows.length }));
  return xlsOnePassChunks(sheets, workbookBatches(source, layout), { createSpool: spools });
}
