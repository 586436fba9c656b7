// xlsx and xls exports (§3.3): one sheet per section (the survey, then each repeat), header rows
// first, linked by `_index`, `_parent_index` and `_parent_table_name` (the parent's sheet title).
// Both read the records once for every sheet. XLSX's first sheet streams and the others wait
// compressed in temporary files; XLS spools every sheet, since its file starts with their sizes.
import { planSections, type SectionedLayout } from '../../lib/writers/layout/sections.ts';
import type { Cell } from '../../lib/writers/layout/types.ts';
import { xlsxOnePassChunks, XLSX_LIMITS } from '../../lib/writers/xlsx/index.ts';
import { xlsOnePassChunks, XLS_LIMITS, type SpoolFactory } from '../../lib/writers/xls/index.ts';
import { errors } from '../../errors.ts';
import { sectionBatches } from './section-pass.ts';
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

export async function xlsxExport(source: ExportSource, now: Date, spools: SpoolFactory): Promise<AsyncIterable<Uint8Array>> {
  const layout = await sheetLayout(source, XLSX_LIMITS.maxColumns, 'xlsx');
  const sheets = layout.sections.map((section) => ({ name: section.sheetName, repeatRows: section.headerRows.length }));
  return xlsxOnePassChunks(sheets, workbookBatches(source, layout), { date: now, createSpool: spools });
}

export async function xlsExport(source: ExportSource, spools: SpoolFactory): Promise<AsyncIterable<Uint8Array>> {
  const layout = await sheetLayout(source, XLS_LIMITS.maxColumns, 'xls');
  const sheets = layout.sections.map((section) => ({ name: section.sheetName, repeatRows: section.headerRows.length }));
  return xlsOnePassChunks(sheets, workbookBatches(source, layout), { createSpool: spools });
}
