// xlsx and xls exports (§3.3): one sheet per section (the survey, then each repeat), header rows
// first, linked by `_index`, `_parent_index` and `_parent_table_name` (the parent's sheet title).
// Each sheet is its own pass over the records, started only when the writer reaches it.
import { planSections, type SectionLayout, type SectionedLayout } from '../../exports/layout/sections.ts';
import type { Cell } from '../../exports/layout/types.ts';
import { xlsxChunks, XLSX_LIMITS, type SpreadsheetSheet } from '../../exports/xlsx/index.ts';
import { xlsChunks, XLS_LIMITS, type SpoolFactory } from '../../exports/xls/index.ts';
import { errors } from '../../errors.ts';
import type { ExportSource } from './source.ts';

async function* sheetRows(source: ExportSource, layout: SectionedLayout, section: SectionLayout): AsyncGenerator<readonly Cell[]> {
  yield* section.headerRows;
  const builder = layout.rowBuilder(section);
  for await (const record of source.records()) yield* builder.rows(record);
}

async function sheetsOf(source: ExportSource, maxColumns: number, format: string): Promise<SpreadsheetSheet[]> {
  const osmTagKeys = await source.osmTagKeys();
  const layout = planSections(source.form, source.options, { baseUrl: source.baseUrl }, { parentNames: 'sheet' }, osmTagKeys);
  // Refused here, before the first byte: a column cannot continue on another sheet.
  const wide = layout.sections.find((section) => section.columns.length > maxColumns);
  if (wide) throw errors.badRequest(`The ${format} format holds at most ${maxColumns} columns; sheet "${wide.sheetName}" has ${wide.columns.length}. Use xlsx or csv.`);
  return layout.sections.map((section) => ({
    name: section.sheetName,
    rows: sheetRows(source, layout, section),
    repeatRows: section.headerRows.length,
  }));
}

export async function xlsxExport(source: ExportSource, now: Date): Promise<AsyncIterable<Uint8Array>> {
  return xlsxChunks(await sheetsOf(source, XLSX_LIMITS.maxColumns, 'xlsx'), { date: now });
}

export async function xlsExport(source: ExportSource, spools: SpoolFactory): Promise<AsyncIterable<Uint8Array>> {
  return xlsChunks(await sheetsOf(source, XLS_LIMITS.maxColumns, 'xls'), { createSpool: spools });
}
