// Shared vocabulary of the export layouts: cells, options and records.
//
// Cell is what every writer (CSV, XLSX, XLS, SAV) receives, one array of cells per row:
// - string: text, protected against formula injection where the format's CellText says so;
// - number: int and decimal answers, GPS parts, `_id`, `_index`, `_parent_index`…;
// - boolean: split select_multiple choices and `_media_all_received` (CSV writes True/False);
// - null: an empty cell;
// - ExportDate: a `date` answer (`iso` = `YYYY-MM-DD`) or `_submission_time`
//   (`kind: 'datetime'`, `iso` = `YYYY-MM-DDTHH:MM:SS`, clock time, no zone: the zone is
//   dropped as onadata drops it). Spreadsheet writers store real date cells; CSV writes
//   `YYYY-MM-DD` and `YYYY-MM-DD HH:MM:SS` (Python's str() of onadata's values).
export interface ExportDate {
  readonly kind: 'date' | 'datetime';
  readonly iso: string;
}

export type Cell = string | number | boolean | null | ExportDate;

export function isExportDate(cell: Cell): cell is ExportDate {
  return typeof cell === 'object' && cell !== null;
}

/**
 * How a layout writes text, chosen by the format rather than the request:
 * - 'formula-safe': onadata's protection against formula injection (§3.1: a leading `'`, `|` as
 *   `\|`), for CSV files, which spreadsheet programs open and evaluate;
 * - 'as-answered': the text unchanged, for formats that never run it (XLSX and XLS text cells,
 *   SPSS strings, Google Sheets values sent RAW, custom XLS reports).
 */
export type CellText = 'formula-safe' | 'as-answered';

/** The layout options of onadata's export query parameters (§3.1), already parsed. */
export interface LayoutOptions {
  readonly removeGroupName: boolean;
  readonly groupDelimiter: '/' | '.';
  readonly splitSelectMultiples: boolean;
  readonly binarySelectMultiples: boolean;
  readonly valueSelectMultiples: boolean;
  readonly includeLabels: boolean;
  readonly includeLabelsOnly: boolean;
  readonly includeHxl: boolean;
  readonly includeImages: boolean;
  readonly includeReviews: boolean;
  readonly showChoiceLabels: boolean;
  /** Label language; undefined: the form's default language. */
  readonly language: string | undefined;
  /** Opening and closing tag around repeat indices in flat headers: `[`, `]` by default. */
  readonly repeatIndexTags: readonly [string, string];
}

export const DEFAULT_LAYOUT_OPTIONS: LayoutOptions = {
  removeGroupName: false,
  groupDelimiter: '/',
  splitSelectMultiples: true,
  binarySelectMultiples: false,
  valueSelectMultiples: false,
  includeLabels: false,
  includeLabelsOnly: false,
  includeHxl: true,
  includeImages: true,
  includeReviews: false,
  showChoiceLabels: false,
  language: undefined,
  repeatIndexTags: ['[', ']'],
};

/**
 * One stored record as exports read it: the record JSON with the meta keys that live in
 * columns merged in (`_id`, `_uuid`, `_submission_time` as `YYYY-MM-DDTHH:MM:SS+00:00`,
 * `_date_modified`, `_version`, `_submitted_by`, `_last_edited_by`, `_total_media`,
 * `_media_count`, `_media_all_received`), plus `_attachments` as `{file name: attachment id}`.
 */
export type ExportRecord = Readonly<Record<string, unknown>>;

/** Where media links point: `<baseUrl>/api/v1/files/<attachment id>?filename=<name, percent-encoded>`. */
export interface LinkContext {
  readonly baseUrl: string;
}
