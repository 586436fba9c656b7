// Legacy .xls (BIFF) workbooks: SheetJS reads the whole file, which the format itself bounds
// (65,536 rows by 256 columns). The first sheet's cells are turned into text as the .xlsx reader does.
import { readFile } from 'node:fs/promises';
import type * as XLSX from '@e965/xlsx';
import { ImportFileError } from './errors.ts';
import { excelSerialToText } from './excel-dates.ts';
import { NOT_A_WORKBOOK } from './xlsx.ts';

/** SheetJS's test for a date number format. */
type IsDate = (format: string | number) => boolean;

function cellText(cell: XLSX.CellObject | undefined, date1904: boolean, isDate: IsDate): string {
  if (!cell || cell.v === undefined || cell.v === null) return '';
  switch (cell.t) {
    case 'b':
      return cell.v ? 'True' : 'False';
    case 'e':
    case 'z':
      return '';
    case 'n': {
      const value = Number(cell.v);
      return cell.z !== undefined && isDate(cell.z) ? excelSerialToText(value, date1904) : String(value);
    }
    case 'd':
      return cell.v instanceof Date ? cell.v.toISOString().slice(0, 19) : String(cell.v);
    default:
      return String(cell.v);
  }
}

export async function* readXlsRows(path: string): AsyncGenerator<string[]> {
  // SheetJS is loaded when first needed: held from the start it cost every server about 12 MB.
  const sheetJs = await import('@e965/xlsx');
  const isDate: IsDate = (format) => sheetJs.SSF.is_date(format);
  let workbook: XLSX.WorkBook;
  try {
    workbook = sheetJs.read(await readFile(path), { type: 'buffer', dense: true, cellNF: true, cellDates: false, sheets: 0 });
  } catch {
    throw new ImportFileError(NOT_A_WORKBOOK);
  }
  const name = workbook.SheetNames[0];
  const sheet = name === undefined ? undefined : workbook.Sheets[name];
  if (!sheet) throw new ImportFileError(NOT_A_WORKBOOK);
  const date1904 = Boolean(workbook.Workbook?.WBProps?.date1904);
  const data = (sheet['!data'] ?? []) as Array<Array<XLSX.CellObject | undefined> | undefined>;
  for (const cells of data) {
    if (!cells) continue;
    const row = Array.from(cells, (cell) => cellText(cell, date1904, isDate));
    if (row.some((cell) => cell !== '')) yield row;
  }
}
