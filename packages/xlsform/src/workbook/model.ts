// The neutral workbook every reader produces: each sheet is a header list and
// rows of non-empty cell text keyed by header. Row i of `rows` is spreadsheet
// row i + 2 (row 1 holds the headers), so messages can cite real row numbers.

export type SheetRow = Record<string, string>;

export interface Sheet {
  /** The sheet's name as written in the file. */
  name: string;
  headers: string[];
  rows: SheetRow[];
}

export interface Workbook {
  /** Every sheet name in file order, as written (for misspelling hints). */
  sheetNames: string[];
  /** XLSForm sheets by lower-cased name (survey, choices, settings, ...). */
  sheets: Map<string, Sheet>;
}

export const XLSFORM_SHEETS = ['survey', 'choices', 'settings', 'external_choices', 'entities', 'osm'] as const;
const xlsformSheetSet: ReadonlySet<string> = new Set(XLSFORM_SHEETS);

export function isXlsformSheet(name: string): boolean {
  return xlsformSheetSet.has(name.toLowerCase());
}

/**
 * Collects the XLSForm sheets of a file. A workbook with a single sheet of any
 * name is read as the survey sheet, as pyxform does.
 */
export function buildWorkbook(tables: Array<{ name: string; read: () => Sheet }>): Workbook {
  const sheets = new Map<string, Sheet>();
  const sheetNames = tables.map((t) => t.name);
  for (const table of tables) {
    const key = table.name.toLowerCase();
    if (xlsformSheetSet.has(key)) sheets.set(key, table.read());
    else if (tables.length === 1) sheets.set('survey', table.read());
  }
  return { sheetNames, sheets };
}

/** Drops `count` trailing entries (runs of empty rows or columns at the end). */
export function trimTrailing<T>(items: T[], count: number): T[] {
  return count > 0 ? items.slice(0, items.length - count) : items;
}
