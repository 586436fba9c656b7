// Reads a report template (.xlsx or legacy .xls bytes) into sheets of cell values with SheetJS.
// Values only: styles, merged cells, column widths and formulas (their last computed value is
// kept) are not carried over. Bytes in memory in, values out: no I/O.
import type * as XLSX from '@e965/xlsx';
import { ZipArchive, ZipError, ZipTooLargeError, type ZipLimits } from '../../../../packages/xlsform/src/index.ts';
import { XLS_LIMITS } from '../xls/index.ts';
import { TemplateError, type TemplateCell, type TemplateSheet, type TemplateWorkbook } from './template.ts';

export const NOT_A_SPREADSHEET = 'the file is not an .xlsx or .xls workbook';

/** An .xlsx whose parts inflate past this is refused before SheetJS reads it. */
export const MAX_INFLATED_BYTES = 64 * 1024 * 1024;
const MAX_ENTRIES = 10_000;

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

function startsWith(bytes: Uint8Array, magic: readonly number[]): boolean {
  return magic.every((b, i) => bytes[i] === b);
}

/**
 * The .xlsx's parts, inflated on zlib's thread pool within the limits (declared sizes checked first,
 * inflation stopped where a part passes its declared size), as a zip of stored parts: SheetJS, which
 * parses a zip its own way and inflates on the event loop, then finds only the parts checked here
 * and has nothing left to inflate.
 */
async function checkedXlsx(bytes: Uint8Array, limits: ZipLimits): Promise<Uint8Array> {
  try {
    const archive = ZipArchive.open(bytes, limits);
    await archive.preload();
    return archive.storedCopy();
  } catch (error) {
    if (error instanceof ZipTooLargeError) throw new TemplateError(`the workbook is too large when uncompressed (more than ${error.limit}): ${error.detail}`);
    if (error instanceof ZipError) throw new TemplateError(NOT_A_SPREADSHEET);
    throw error;
  }
}

function serialToDate(serial: number, date1904: boolean): TemplateCell {
  const ms = Math.round((serial + (date1904 ? 1462 : 0)) * 86_400_000) + Date.UTC(1899, 11, 30);
  if (!Number.isFinite(ms) || ms < Date.UTC(1900, 0, 1) || ms > Date.UTC(9999, 11, 31)) return serial;
  const iso = new Date(ms).toISOString();
  return Number.isInteger(serial) ? { kind: 'date', iso: iso.slice(0, 10) } : { kind: 'datetime', iso: iso.slice(0, 19) };
}

/** SheetJS's test for a date number format. */
type IsDate = (format: string | number) => boolean;

function cellValue(cell: XLSX.CellObject | undefined, date1904: boolean, isDate: IsDate): TemplateCell {
  if (!cell || cell.v === undefined || cell.v === null) return null;
  switch (cell.t) {
    case 'b':
      return Boolean(cell.v);
    case 'n': {
      const value = Number(cell.v);
      return cell.z !== undefined && isDate(cell.z) ? serialToDate(value, date1904) : value;
    }
    case 'd':
      return cell.v instanceof Date ? { kind: 'datetime', iso: cell.v.toISOString().slice(0, 19) } : String(cell.v);
    case 's':
      return String(cell.v);
    default:
      return null;
  }
}

function sheetRows(sheet: XLSX.WorkSheet | undefined, name: string, date1904: boolean, isDate: IsDate): TemplateCell[][] {
  const data = (sheet?.['!data'] ?? []) as Array<Array<XLSX.CellObject | undefined> | undefined>;
  if (data.length > XLS_LIMITS.maxRows) throw new TemplateError(`sheet "${name}" has ${data.length} rows; a template has at most ${XLS_LIMITS.maxRows}`);
  const rows = Array.from(data, (cells) => {
    const row = Array.from(cells ?? [], (cell) => cellValue(cell, date1904, isDate));
    while (row.length > 0 && row[row.length - 1] === null) row.pop();
    return row;
  });
  while (rows.length > 0 && rows[rows.length - 1]?.length === 0) rows.pop();
  const widest = rows.reduce((n, row) => Math.max(n, row.length), 0);
  if (widest > XLS_LIMITS.maxColumns) throw new TemplateError(`sheet "${name}" uses ${widest} columns; an .xls sheet holds at most ${XLS_LIMITS.maxColumns}`);
  return rows;
}

/** The template's sheets, in order; throws TemplateError for bytes that are not a usable workbook. */
export async function readTemplate(input: Uint8Array, maxInflatedBytes = MAX_INFLATED_BYTES): Promise<TemplateWorkbook> {
  let bytes = input;
  if (startsWith(input, ZIP_MAGIC)) bytes = await checkedXlsx(input, { maxTotalBytes: maxInflatedBytes, maxEntryBytes: maxInflatedBytes, maxEntries: MAX_ENTRIES });
  // A legacy .xls is a compound file: SheetJS has nothing to inflate in it.
  else if (!startsWith(input, CFB_MAGIC)) throw new TemplateError(NOT_A_SPREADSHEET);
  // SheetJS is loaded when first needed: held from the start it cost every server about 12 MB.
  const sheetJs = await import('@e965/xlsx');
  const isDate: IsDate = (format) => sheetJs.SSF.is_date(format);
  let workbook: XLSX.WorkBook;
  try {
    workbook = sheetJs.read(bytes, { type: 'array', dense: true, cellNF: true, cellDates: false, cellFormula: false, cellHTML: false, cellText: false });
  } catch {
    throw new TemplateError(NOT_A_SPREADSHEET);
  }
  if (workbook.SheetNames.length === 0) throw new TemplateError(NOT_A_SPREADSHEET);
  const date1904 = Boolean(workbook.Workbook?.WBProps?.date1904);
  const sheets: TemplateSheet[] = workbook.SheetNames.map((name) => ({ name, rows: sheetRows(workbook.Sheets[name], name, date1904, isDate) }));
  return { sheets };
}
