// pyxform's CSV layout: the first column names a sheet (and starts it); the
// next non-empty row after a sheet name is that sheet's header row.
//   survey,,
//   ,type,name
//   ,text,q1
import { XlsFormError } from '../errors.ts';
import { type Sheet, type Workbook, isXlsformSheet } from './model.ts';

/** RFC 4180 records; quotes may span lines. */
export function parseCsvRecords(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let inQuotes = false;
  let sawAny = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    sawAny = true;
    if (inQuotes) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else inQuotes = false;
      } else field += ch;
    } else if (ch === '"') inQuotes = true;
    else if (ch === ',') {
      record.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      sawAny = false;
    } else field += ch;
  }
  if (sawAny || field !== '' || record.length > 0) {
    record.push(field);
    records.push(record);
  }
  return records;
}

function looksLikeCsv(text: string): boolean {
  let commas = 0;
  const head = text.slice(0, 5000);
  for (let i = 0; i < head.length && commas < 4; i++) if (head[i] === ',') commas++;
  return commas >= 4;
}

export function readCsv(text: string): Workbook {
  if (!looksLikeCsv(text)) {
    throw new XlsFormError('Error reading .csv file: The input data does not appear to be a valid XLSForm.', {
      code: 'read_error',
    });
  }
  const sheetNames: string[] = [];
  const all = new Map<string, Sheet>();
  let current: Sheet | undefined;
  let headers: string[] | undefined;
  for (const record of parseCsvRecords(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)) {
    if (record.length === 0) continue;
    const first = (record[0] ?? '').trim();
    const content = record.slice(1).map((v) => v.trim());
    const hasContent = record.length > 1 && content.some((c) => c !== '');
    if (record.length === 1 || first !== '') {
      const name = record.length === 1 ? (record[0] ?? '') : first;
      if (name !== '') {
        const key = name.toLowerCase();
        if (!all.has(key)) {
          sheetNames.push(name);
          all.set(key, { name, headers: [], rows: [] });
        }
        current = all.get(key);
      }
      headers = undefined;
    }
    if (!hasContent || !current) continue;
    if (headers === undefined) {
      headers = content;
      current.headers = content;
      continue;
    }
    const row: Record<string, string> = {};
    const width = Math.min(headers.length, content.length);
    for (let c = 0; c < width; c++) {
      const key = headers[c];
      const value = content[c];
      if (key !== undefined && value !== undefined && value !== '') row[key] = value;
    }
    current.rows.push(row);
  }
  const sheets = new Map<string, Sheet>();
  for (const [key, sheet] of all) if (isXlsformSheet(key)) sheets.set(key, sheet);
  return { sheetNames, sheets };
}
