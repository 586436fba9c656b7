// One worksheet part as XML text, row by row. Cells carry no `r` reference except after a gap
// (a null), which keeps the part small; rows carry theirs. Strings are inline (`inlineStr`):
// a shared-string table would have to be held whole in memory before the first sheet. Exports
// write the same XML as bytes (sheet-bytes.ts); rowXml is its spelling as a string.
import type { Cell } from './cell.ts';
import { excelSerial } from './excel-dates.ts';
import { escapeText, needsPreserve, truncateCell } from './xml-text.ts';

export const SHEET_START =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>';
export const SHEET_END = '</sheetData></worksheet>';

/** Style indexes in styles.xml's cellXfs. */
export const STYLE_DATE = 1;
export const STYLE_DATETIME = 2;

const columnNames: string[] = [];

const POWERS = [1, 10, 100, 1000, 10_000];
const ZEROS = ['', '0', '00', '000', '0000', '00000'];

/**
 * The shortest decimal that reads back as `n`. V8's general double-to-string costs ~300 ns, a third
 * of a cell's budget; survey decimals mostly have few places, which integer formatting handles.
 */
export function numberText(n: number): string {
  if (Number.isInteger(n) || n <= -1e6 || n >= 1e6) return String(n);
  for (let places = 1; places < POWERS.length; places += 1) {
    const power = POWERS[places] ?? 1;
    const scaled = Math.round(n * power);
    if (scaled / power === n) {
      const negative = scaled < 0;
      let digits = String(negative ? -scaled : scaled);
      if (digits.length <= places) digits = (ZEROS[places + 1 - digits.length] ?? '') + digits;
      const point = digits.length - places;
      return `${negative ? '-' : ''}${digits.slice(0, point)}.${digits.slice(point)}`;
    }
  }
  return String(n);
}

/** `A`, `B`, … `XFD` for 0-based column indexes. */
export function columnName(index: number): string {
  let name = columnNames[index];
  if (name === undefined) {
    name = '';
    for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
    columnNames[index] = name;
  }
  return name;
}

/** The XML of one row (1-based `rowNumber`); an empty string for a row with no values. */
export function rowXml(rowNumber: number, cells: readonly Cell[]): string {
  let xml = '';
  let gap = false;
  for (let i = 0; i < cells.length; i += 1) {
    const cell = cells[i];
    let body: string;
    if (typeof cell === 'string') {
      if (cell === '') {
        gap = true;
        continue;
      }
      const cut = truncateCell(cell);
      const text = escapeText(cut);
      body = needsPreserve(cut)
        ? ` t="inlineStr"><is><t xml:space="preserve">${text}</t></is></c>`
        : ` t="inlineStr"><is><t>${text}</t></is></c>`;
    } else if (typeof cell === 'number') {
      if (!Number.isFinite(cell)) {
        gap = true;
        continue;
      }
      body = `><v>${numberText(cell)}</v></c>`;
    } else if (typeof cell === 'boolean') {
      body = cell ? ' t="b"><v>1</v></c>' : ' t="b"><v>0</v></c>';
    } else if (cell === null || cell === undefined) {
      gap = true;
      continue;
    } else {
      const serial = excelSerial(cell);
      if (serial === undefined) {
        const text = escapeText(truncateCell(cell.iso));
        body = ` t="inlineStr"><is><t>${text}</t></is></c>`;
      } else {
        body = ` s="${cell.kind === 'date' ? STYLE_DATE : STYLE_DATETIME}"><v>${serial}</v></c>`;
      }
    }
    xml += gap ? `<c r="${columnName(i)}${rowNumber}"${body}` : `<c${body}`;
    gap = false;
  }
  return xml === '' ? '' : `<row r="${rowNumber}">${xml}</row>`;
}
