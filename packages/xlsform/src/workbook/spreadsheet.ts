// .xlsx / .xlsm / .xls through SheetJS, read densely so that a sheet's declared
// range (some files claim 1,048,576 x 1,024 cells) never drives the work: only
// rows and cells that exist are visited.
import * as XLSX from '@e965/xlsx';
import { XlsFormError } from '../errors.ts';
import { buildWorkbook, trimTrailing, type Sheet, type SheetRow, type Workbook } from './model.ts';

const MAX_EMPTY_HEADER_RUN = 20;
const MAX_EMPTY_ROW_RUN = 60;
const WHITESPACE_RUN = / +/g;

export function readSpreadsheet(bytes: Uint8Array, format: 'xlsx' | 'xls'): Workbook {
  let book: XLSX.WorkBook;
  try {
    book = XLSX.read(bytes, {
      type: 'array',
      dense: true,
      cellDates: true,
      cellFormula: false,
      cellHTML: false,
      cellText: false,
      cellStyles: false,
      bookVBA: false,
    });
  } catch (err) {
    throw new XlsFormError(`Error reading .${format} file: ${err instanceof Error ? err.message : String(err)}`, {
      code: 'read_error',
    });
  }
  if (!Array.isArray(book.SheetNames) || book.SheetNames.length === 0) {
    throw new XlsFormError(`Error reading .${format} file: the workbook has no sheets.`, { code: 'read_error' });
  }
  return buildWorkbook(
    book.SheetNames.map((name) => ({ name, read: () => readSheet(name, book.Sheets[name]) })),
  );
}

function denseRows(sheet: XLSX.WorkSheet | undefined): Array<Array<XLSX.CellObject | undefined> | undefined> {
  const data: unknown = sheet?.['!data'];
  return Array.isArray(data) ? (data as Array<Array<XLSX.CellObject | undefined> | undefined>) : [];
}

function readSheet(name: string, sheet: XLSX.WorkSheet | undefined): Sheet {
  const grid = denseRows(sheet);
  const headerCells = grid[0] ?? [];
  const columns: Array<string | undefined> = [];
  let emptyRun = 0;
  for (let c = 0; c < headerCells.length; c++) {
    const raw = cellText(headerCells[c], name, '', 1);
    if (raw === undefined) {
      columns.push(undefined);
      if (emptyRun === MAX_EMPTY_HEADER_RUN) break;
      emptyRun++;
      continue;
    }
    emptyRun = 0;
    if (columns.includes(raw)) {
      throw new XlsFormError(`Duplicate column header: ${raw}`, { code: 'duplicate_header', sheet: name, row: 1 });
    }
    columns.push(raw.replace(WHITESPACE_RUN, ' '));
  }
  const headerList = trimTrailing(columns, emptyRun);
  const rows: SheetRow[] = [];
  let emptyRows = 0;
  for (let r = 1; r < grid.length; r++) {
    const cells = grid[r];
    const row: SheetRow = {};
    let filled = false;
    if (cells) {
      const width = Math.min(cells.length, headerList.length);
      for (let c = 0; c < width; c++) {
        const key = headerList[c];
        if (key === undefined) continue;
        const text = cellText(cells[c], name, key, r);
        if (text !== undefined) {
          row[key] = text;
          filled = true;
        }
      }
    }
    if (!filled) {
      if (emptyRows === MAX_EMPTY_ROW_RUN) break;
      emptyRows++;
    } else emptyRows = 0;
    rows.push(row);
  }
  return { name, headers: headerList.filter((h): h is string => h !== undefined), rows: trimTrailing(rows, emptyRows) };
}

/** A cell's value as pyxform renders it: trimmed text, integral numbers without ".0", TRUE/FALSE. */
function cellText(cell: XLSX.CellObject | undefined, sheet: string, column: string, row: number): string | undefined {
  if (!cell) return undefined;
  const value = cell.v;
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if (trimmed === '') return undefined;
    return trimmed.includes('\u00a0') ? trimmed.replaceAll('\u00a0', ' ') : trimmed;
  }
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') return numberText(value);
  if (value instanceof Date) return dateText(value, sheet, column, row);
  return undefined;
}

export function numberText(value: number): string {
  if (Number.isInteger(value)) return String(value);
  const text = String(value);
  // Python writes exponents with at least two digits (1e-05); JavaScript does not (1e-5).
  return text.replace(/e([+-])(\d)$/, 'e$10$2');
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

function dateText(date: Date, sheet: string, column: string, row: number): string {
  const time = Number.isNaN(date.getTime()) ? undefined : date;
  if (!time) throw new XlsFormError(`The xls file provided has an invalid date on the ${sheet} sheet, under the ${column} column on row number ${row}`, { sheet, column, row: row + 1 });
  const clock = `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
  // Excel's day zero (1899-12-30/31) carries a time of day only.
  if (date.getUTCFullYear() < 1900) return clock;
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ${clock}`;
}
