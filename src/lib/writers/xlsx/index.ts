export { xlsxChunks, xlsxOnePassChunks, XLSX_LIMITS, type RenderedRows, type RowBatch, type WorkbookSheet, type XlsxOptions } from './xlsx-writer.ts';
export { sheetParts, SpreadsheetLimitError, type SheetLimits, type SheetPart } from './sheet-parts.ts';
export { SheetNames, MAX_SHEET_NAME } from './sheet-names.ts';
export { excelSerial } from './excel-dates.ts';
export { MAX_CELL_CHARS } from './xml-text.ts';
export type { Cell, ExportDate, SheetSource, SpreadsheetSheet } from './cell.ts';
