// .xlsx / .xlsm / .xls through SheetJS, read densely so that a sheet's declared
// range (some files claim 1,048,576 x 1,024 cells) never drives the work: only
// rows and cells that exist are visited.
import { createRequire } from 'node:module';
import type * as SheetJs from '@e965/xlsx';
import { XlsFormError } from '../errors.ts';
import type { RawCell, RawGrid } from './grid.ts';
import { buildWorkbook, trimTrailing, type Sheet, type SheetRow, type Workbook } from './model.ts';
import { BiffError, readBiff8, type BiffBook } from './biff8.ts';
import { isDateFormat } from './number-formats.ts';
import { readXlsxBook, type XlsxBook, type XlsxSheet } from './xlsx.ts';
import { ZipArchive, ZipError, ZipTooLargeError } from './zip.ts';

const MAX_EMPTY_HEADER_RUN = 20;
const MAX_EMPTY_ROW_RUN = 60;
const WHITESPACE_RUN = / +/g;

/**
 * `archive` is the .xlsx already opened (and inflated ahead, off the event loop); without it the
 * zip is opened here and its parts inflated as they are read, within the same limits.
 */
export function readSpreadsheet(bytes: Uint8Array, format: 'xlsx' | 'xls', archive?: ZipArchive): Workbook {
  if (format === 'xlsx') {
    let zip: ZipArchive | undefined = archive;
    let book: XlsxBook;
    try {
      zip ??= ZipArchive.open(bytes);
      book = readXlsxBook(zip);
    } catch (err) {
      // Valid but unusual layouts go through SheetJS, given only the entries checked here; corrupt ones stop here.
      if (zip && err instanceof ZipError && err.unsupported && !(err instanceof ZipTooLargeError)) return readWithSheetJs(storedCopy(zip), format);
      throw workbookReadError(format, err);
    }
    const dates: DateSystem = { format, date1904: book.date1904 };
    return buildWorkbook(book.sheets.map((sheet) => ({ name: sheet.name, read: () => readSheet(sheet.name, sheetGrid(sheet, format), dates) })));
  }
  let biff: BiffBook;
  try {
    biff = readBiff8(bytes);
  } catch (err) {
    // Older BIFF versions and encrypted files go through SheetJS (a compound file has nothing to
    // inflate); corrupt ones stop here.
    if (err instanceof BiffError && err.unsupported) return readWithSheetJs(bytes, format);
    throw workbookReadError(format, err);
  }
  const dates: DateSystem = { format, date1904: biff.date1904 };
  return buildWorkbook(biff.sheets.map((sheet) => ({ name: sheet.name, read: () => readSheet(sheet.name, sheet.grid(), dates) })));
}

function storedCopy(zip: ZipArchive): Uint8Array {
  try {
    return zip.storedCopy();
  } catch (err) {
    throw workbookReadError('xlsx', err);
  }
}

/** A sheet's cells; its part is read (and inflated, when not read ahead) only now. */
function sheetGrid(sheet: XlsxSheet, format: string): RawGrid {
  try {
    return sheet.grid();
  } catch (err) {
    throw workbookReadError(format, err);
  }
}

/** A failure to read the file as the client is told it; a workbook over the size limits says so alone. */
export function workbookReadError(format: string, err: unknown): XlsFormError {
  if (err instanceof XlsFormError) return err;
  if (err instanceof ZipTooLargeError) return new XlsFormError(err.message, { code: 'too_large' });
  return new XlsFormError(`Error reading .${format} file: ${err instanceof Error ? err.message : String(err)}`, { code: 'read_error' });
}

// SheetJS is only needed for the files the direct readers decline, so it is
// loaded on first use (it takes longer to load than most forms take to convert).
let sheetJs: typeof SheetJs | undefined;
function loadSheetJs(): typeof SheetJs {
  sheetJs ??= createRequire(import.meta.url)('@e965/xlsx') as typeof SheetJs;
  return sheetJs;
}

function readWithSheetJs(bytes: Uint8Array, format: 'xlsx' | 'xls'): Workbook {
  let book: SheetJs.WorkBook;
  try {
    book = loadSheetJs().read(bytes, {
      type: 'array',
      dense: true,
      cellDates: false,
      cellNF: true,
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
  const dates: DateSystem = { format, date1904: book.Workbook?.WBProps?.date1904 === true };
  return buildWorkbook(
    book.SheetNames.map((name) => ({ name, read: () => readSheet(name, sheetJsGrid(book.Sheets[name]), dates) })),
  );
}

/** SheetJS's dense cells as raw cells (dates recognised from the number format). */
function sheetJsGrid(sheet: SheetJs.WorkSheet | undefined): RawGrid {
  const data: unknown = sheet?.['!data'];
  if (!Array.isArray(data)) return [];
  return (data as Array<Array<SheetJs.CellObject | undefined> | undefined>).map((row) =>
    row?.map((cell): RawCell | undefined => {
      const v = cell?.v;
      if (v === undefined || v === null || v instanceof Date) return undefined;
      if (typeof v === 'number') {
        const z = cell?.z;
        return typeof z === 'string' && isDateFormat(z) ? { date: v } : v;
      }
      return v;
    }),
  );
}

function readSheet(name: string, grid: RawGrid, dates: DateSystem): Sheet {
  const headerCells = grid[0] ?? [];
  const columns: Array<string | undefined> = [];
  let emptyRun = 0;
  for (let c = 0; c < headerCells.length; c++) {
    const raw = cellText(headerCells[c], name, '', 0, dates);
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
        const text = cellText(cells[c], name, key, r - 1, dates);
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
function cellText(
  cell: RawCell | undefined,
  sheet: string,
  column: string,
  row: number,
  dates: DateSystem,
): string | undefined {
  if (cell === undefined) return undefined;
  const value = cell;
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if (trimmed === '') return undefined;
    return trimmed.includes('\u00a0') ? trimmed.replaceAll('\u00a0', ' ') : trimmed;
  }
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') return numberText(value);
  if (typeof value === 'object') return serialDateText(value.date, dates, sheet, column, row);
  return undefined;
}

/**
 * A number as Python's str() prints it: integral values without ".0" (and in
 * full), other values in the shortest round-trip form, switching to
 * exponent notation below 1e-4 or from 1e16 ("1e-05", "1.5e+16").
 */
export function numberText(value: number): string {
  if (Number.isInteger(value)) return Math.abs(value) < 1e21 ? String(value) : BigInt(value).toString();
  const [mantissa = '', exponentText = '0'] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) {
    const sign = exponent < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return String(value);
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

const DAY_MS = 86_400_000;

/**
 * An Excel date serial as Python prints the value its readers return:
 * "2022-04-11 16:26:28.971000", or "09:30:00" for a time of day. Legacy .xls
 * dates resolve to whole seconds and the first 60 days of 1900 are refused as
 * ambiguous (Excel's phantom 29 February 1900).
 */
interface DateSystem {
  format: 'xlsx' | 'xls';
  date1904: boolean;
}

function serialDateText(serial: number, dates: DateSystem, sheet: string, column: string, row: number): string {
  const { format, date1904 } = dates;
  let days = Math.floor(serial);
  if (format === 'xls' && !date1904 && days >= 1 && days < 61) {
    throw new XlsFormError(`The xls file provided has an invalid date on the ${sheet} sheet, under the ${column} column on row number ${row}`, {
      code: 'ambiguous_date',
      sheet,
      column,
      row: row + 2,
    });
  }
  // .xls readers resolve to whole seconds, .xlsx readers to milliseconds.
  const unit = format === 'xls' ? 1_000_000 : 1000;
  const micros = Math.round(((serial - days) * DAY_MS * 1000) / unit) * unit;
  const time = days === 0;
  if (date1904) days += 1462;
  else if (format === 'xlsx' && days > 0 && days < 60) days += 1;
  const date = new Date(Date.UTC(1899, 11, 30) + days * DAY_MS + Math.floor(micros / 1000));
  const fractionMicros = micros % 1_000_000;
  const clock = `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}${fractionMicros > 0 ? `.${pad(fractionMicros, 6)}` : ''}`;
  if (time) return clock;
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ${clock}`;
}
