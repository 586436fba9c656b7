// Turns a sheet's raw headers into keys: aliases resolved ("relevance" ->
// bind.relevant), translations split ("label::French (fr)" -> label.French (fr)),
// and the row values nested accordingly.
import type { HeaderTarget } from '../spec/aliases.ts';
import { XlsFormError } from '../errors.ts';
import type { Json, JsonObject } from '../types.ts';
import type { Sheet } from '../workbook/model.ts';

const SMART_QUOTES: Readonly<Record<string, string>> = { '\u2018': "'", '\u2019': "'", '\u201c': '"', '\u201d': '"' };
const SMART_QUOTE = /[\u2018\u2019\u201c\u201d]/g;
const SPACE_RUN = / +/g;

export interface HeaderOptions {
  sheetName: string;
  aliases: Readonly<Record<string, HeaderTarget>>;
  columns: ReadonlySet<string>;
  required?: readonly string[];
  defaultLanguage?: string;
  collapseSpaces?: boolean;
}

export interface GroupedRow {
  /** Spreadsheet row number. */
  row: number;
  data: JsonObject;
}

export interface GroupedSheet {
  /** Distinct header paths, e.g. ["label", "English (en)"]. */
  headers: string[][];
  rows: GroupedRow[];
}

export function snakeCase(value: string): string {
  return value.trim().split(/\s+/).join('_').toLowerCase();
}

function headerTokens(header: string, useDoubleColon: boolean, options: HeaderOptions): [string, string[]] {
  const { aliases, columns } = options;
  if (columns.has(header) && !(header in aliases)) return [header, [header]];
  const normalised = snakeCase(header);
  if (columns.has(normalised) && !(normalised in aliases)) return [normalised, [normalised]];
  let tokens: string[];
  if (useDoubleColon || header.includes('::')) tokens = header.split('::').map((t) => t.trim());
  else {
    tokens = header.split(':').map((t) => t.trim());
    // "jr:count" written with single-colon delimiters stays one token.
    const jr = tokens.indexOf('jr');
    if (jr >= 0) tokens = [...tokens.slice(0, jr), `jr:${tokens[jr + 1] ?? ''}`, ...tokens.slice(jr + 2)];
  }
  const first = snakeCase(tokens[0] ?? '');
  const alias = aliases[first];
  if (alias !== undefined) {
    return typeof alias === 'string' ? [alias, [alias, ...tokens.slice(1)]] : [alias[0] ?? first, [...alias, ...tokens.slice(1)]];
  }
  if (columns.has(first)) return [first, [first, ...tokens.slice(1)]];
  // Unknown columns keep their spelling: choice_filter expressions may name them.
  return [header, tokens];
}

const HAS_SMART_QUOTE = /[\u2018\u2019\u201c\u201d]/;

export function cleanText(value: string, collapseSpaces: boolean): string {
  let text = value;
  if (collapseSpaces) {
    text = text.trim();
    if (text.includes('  ')) text = text.replace(SPACE_RUN, ' ');
  }
  if (HAS_SMART_QUOTE.test(text)) text = text.replace(SMART_QUOTE, (q) => SMART_QUOTES[q] ?? q);
  return text;
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Merges nested cells; a bare value beside translations is the default language's. */
export function mergeValues(a: Json | undefined, b: Json | undefined, defaultKey: string): Json | undefined {
  if (a === undefined || a === null || a === '') return b;
  if (b === undefined || b === null || b === '') return a;
  let left = a;
  let right = b;
  if (!isObject(left)) {
    if (isObject(right) && defaultKey in right) return right;
    left = { [defaultKey]: left };
  }
  if (!isObject(right)) {
    if (defaultKey in left) return left;
    right = { [defaultKey]: right };
  }
  const out = left;
  for (const key of Object.keys(right)) {
    const merged = mergeValues(left[key], right[key], defaultKey);
    if (merged !== undefined) out[key] = merged;
  }
  return out;
}

function nest(tokens: readonly string[], value: string): Json {
  let out: Json = value;
  for (let i = tokens.length - 1; i >= 1; i--) out = { [tokens[i] ?? '']: out };
  return out;
}

export function groupSheet(sheet: Sheet | undefined, options: HeaderOptions): GroupedSheet {
  const tokensByHeader = new Map<string, string[]>();
  const headerByTokens = new Map<string, string>();
  const headers = sheet?.headers ?? [];
  const useDoubleColon = headers.some((h) => h.includes('::'));
  for (const header of headers) {
    if (tokensByHeader.has(header)) continue;
    const [renamed, tokens] = headerTokens(header, useDoubleColon, options);
    const key = tokens.join('\u0000');
    const other = headerByTokens.get(key);
    if (other !== undefined && renamed !== header) {
      throw new XlsFormError(
        `Invalid headers provided for sheet: '${options.sheetName}'. Headers that are different names for the same column were found: '${other}', '${header}'. Rename or remove one of these columns.`,
        { code: 'duplicate_column', sheet: options.sheetName, row: 1, column: header },
      );
    }
    tokensByHeader.set(header, tokens);
    headerByTokens.set(key, header);
  }
  const defaultLanguage = options.defaultLanguage ?? 'default';
  const collapse = options.collapseSpaces ?? false;
  const rows: GroupedRow[] = [];
  const sourceRows = sheet?.rows ?? [];
  for (let i = 0; i < sourceRows.length; i++) {
    const source = sourceRows[i] ?? {};
    let data: JsonObject = {};
    for (const header of Object.keys(source)) {
      const value = cleanText(source[header] ?? '', collapse);
      const tokens = tokensByHeader.get(header);
      if (!tokens) {
        throw new XlsFormError(
          `Invalid headers provided for sheet: '${options.sheetName}'. For XLSForms, this may be due a missing header row, in which case add a header row as per the reference template https://xlsform.org/en/ref-table/.`,
          { code: 'missing_header', sheet: options.sheetName, row: 1 },
        );
      }
      const head = tokens[0] ?? '';
      const existing = data[head];
      if (tokens.length === 1) data[head] = value;
      else if (tokens.length === 2 && value !== '' && (existing === undefined || (isObject(existing) && !((tokens[1] ?? '') in existing)))) {
        // The common "label::Language" cell: add it without building and merging a nested copy.
        if (existing === undefined) data[head] = { [tokens[1] ?? '']: value };
        else if (isObject(existing)) existing[tokens[1] ?? ''] = value;
      } else {
        const merged = mergeValues(data, { [head]: nest(tokens, value) }, defaultLanguage);
        if (isObject(merged)) data = merged;
      }
    }
    rows.push({ row: i + 2, data });
  }
  const distinct = [...headerByTokens.keys()].map((k) => k.split('\u0000'));
  const required = options.required ?? [];
  if (required.length > 0 && (rows.length > 0 || options.sheetName === 'survey')) {
    const present = new Set(distinct.map((t) => t[0]));
    const missing = required.filter((h) => !present.has(h));
    if (missing.length > 0) {
      throw new XlsFormError(
        `Invalid headers provided for sheet: '${options.sheetName}'. One or more required column headers were not found: ${missing.map((h) => `'${h}'`).join(', ')}. Learn more: https://xlsform.org/en/#setting-up-your-worksheets`,
        { code: 'missing_column', sheet: options.sheetName, row: 1, column: missing[0] ?? '' },
      );
    }
  }
  return { headers: distinct, rows };
}
