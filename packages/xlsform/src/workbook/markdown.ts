// Markdown-table XLSForms (pyxform's test format): a row whose first cell is
// filled starts a sheet; the sheet's first row is its header row.
//   | survey |
//   |        | type | name | label |
//   |        | text | q1   | Q1    |
import { XlsFormError } from '../errors.ts';
import { buildWorkbook, type Sheet, type SheetRow, type Workbook } from './model.ts';

const COMMENT_LINE = /^\s*#/;
// Text after the last pipe is ignored (tests use it for notes).
const TABLE_LINE = /^\s*\|(.*)\|/;
const SEPARATOR = /^[|-]+$/;

function cell(raw: string): string | undefined {
  if (raw.trim() === '') return undefined;
  return raw.trim().replaceAll('\\|', '|');
}

/** Drops a "# comment" after the last pipe (the last '#' there with text after it). */
function withoutTrailingComment(line: string): string {
  const lastPipe = line.lastIndexOf('|');
  for (let k = line.length - 2; k > lastPipe; k--) if (line[k] === '#') return line.slice(0, k);
  return line;
}

/** Splits on pipes that are not escaped with a backslash. */
function splitCells(line: string): string[] {
  const cells: string[] = [];
  let start = 0;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '|' && line[i - 1] !== '\\') {
      cells.push(line.slice(start, i));
      start = i + 1;
    }
  }
  cells.push(line.slice(start));
  return cells;
}

export function readMarkdown(text: string): Workbook {
  let pipes = 0;
  for (let i = 0; i < Math.min(text.length, 5000) && pipes < 5; i++) if (text[i] === '|') pipes++;
  if (pipes < 5) {
    throw new XlsFormError('Error reading .md file: The input data does not appear to be a valid XLSForm.', {
      code: 'read_error',
    });
  }
  const tables: Array<{ name: string; grid: Array<Array<string | undefined>> }> = [];
  let current: { name: string; grid: Array<Array<string | undefined>> } | undefined;
  for (let line of text.split('\n')) {
    if (COMMENT_LINE.test(line)) continue;
    line = withoutTrailingComment(line);
    const match = TABLE_LINE.exec(line);
    if (!match) continue;
    const inner = match[1] ?? '';
    if (SEPARATOR.test(inner)) continue;
    const [firstRaw = '', ...rest] = splitCells(inner);
    const first = cell(firstRaw);
    const cells = rest.map(cell);
    if (first !== undefined) {
      const existing = tables.find((t) => t.name === first);
      if (existing) existing.grid = [];
      current = existing ?? { name: first, grid: [] };
      if (!existing) tables.push(current);
    }
    if (current && cells.some((c) => c !== undefined)) current.grid.push(cells);
  }
  return buildWorkbook(tables.map((t) => ({ name: t.name, read: () => gridToSheet(t.name, t.grid) })));
}

function gridToSheet(name: string, grid: Array<Array<string | undefined>>): Sheet {
  const header = grid[0] ?? [];
  const rows: SheetRow[] = [];
  for (let r = 1; r < grid.length; r++) {
    const cells = grid[r] ?? [];
    const row: SheetRow = {};
    for (let c = 0; c < cells.length; c++) {
      const key = header[c];
      const value = cells[c];
      if (key !== undefined && value !== undefined) row[key] = value;
    }
    rows.push(row);
  }
  return { name, headers: header.filter((h): h is string => h !== undefined), rows };
}
