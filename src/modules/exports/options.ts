// Export query parameters (onadata-data.md §3.1) → typed options. Booleans follow onadata's
// str_to_bool: `true`, `t`, `1` in any case are true, anything else (an empty value too) false.
import { errors } from '../../errors.ts';
import { DEFAULT_LAYOUT_OPTIONS, type LayoutOptions } from '../../lib/writers/layout/types.ts';

export interface ExportOptions extends LayoutOptions {
  readonly winExcelUtf8: boolean;
  /** The `query` parameter as given (JSON or plain text), applied like the data API's. */
  readonly query: string | undefined;
  /** `_submission_time` range from `start` / `end`. */
  readonly start: Date | undefined;
  readonly end: Date | undefined;
}

export const DEFAULT_EXPORT_OPTIONS: ExportOptions = {
  ...DEFAULT_LAYOUT_OPTIONS,
  winExcelUtf8: false,
  query: undefined,
  start: undefined,
  end: undefined,
};

export type RawQuery = Readonly<Record<string, unknown>>;

export function strToBool(value: unknown): boolean {
  return typeof value === 'string' && ['true', 't', '1'].includes(value.trim().toLowerCase());
}

/** A query parameter's value (the first, when repeated); undefined when absent or not text. */
export function single(query: RawQuery, key: string): string | undefined {
  const value = query[key];
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

function flag(query: RawQuery, key: string, fallback: boolean): boolean {
  const value = single(query, key);
  return value === undefined ? fallback : strToBool(value);
}

const INDEX_TAGS = new Set(['[', ']', '(', ')', '{', '}', '.', '_']);

function indexTags(raw: string | undefined): readonly [string, string] {
  if (raw === undefined || raw === '') return DEFAULT_LAYOUT_OPTIONS.repeatIndexTags;
  const parts = raw.split(',').map((p) => p.trim());
  const [open, close] = parts;
  if (parts.length !== 2 || open === undefined || close === undefined || !INDEX_TAGS.has(open) || !INDEX_TAGS.has(close)) {
    throw errors.repeatIndexTagsInvalid(raw);
  }
  return [open, close];
}

/** `YY_MM_DD_hh_mm_ss` (Python's `%y_%m_%d_%H_%M_%S`, read as UTC). */
export function parseExportDate(raw: string | undefined): Date | undefined {
  if (raw === undefined || raw === '') return undefined;
  const match = /^(\d{2})_(\d{1,2})_(\d{1,2})_(\d{1,2})_(\d{1,2})_(\d{1,2})$/.exec(raw.trim());
  if (!match) throw errors.exportDateInvalid();
  const [yy, mo, d, h, mi, s] = match.slice(1).map(Number) as [number, number, number, number, number, number];
  // Python's %y: 69–99 are 1969–1999, 00–68 are 2000–2068.
  const year = yy < 69 ? 2000 + yy : 1900 + yy;
  const date = new Date(Date.UTC(year, mo - 1, d, h, mi, s));
  if (date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) throw errors.exportDateInvalid();
  return date;
}

/** Defaults that depend on the form rather than the request. */
export interface FormExportDefaults {
  /** Forms with review enabled (`submission_review` metadata) export the review columns unless asked not to. */
  readonly includeReviews?: boolean;
}

/** Parses the export options of a request's query string (400 for a bad repeat_index_tags or date). */
export function parseExportOptions(query: RawQuery, formDefaults: FormExportDefaults = {}): ExportOptions {
  const d = DEFAULT_EXPORT_OPTIONS;
  const language = single(query, 'language');
  const rawQuery = single(query, 'query');
  return {
    removeGroupName: flag(query, 'remove_group_name', d.removeGroupName),
    groupDelimiter: single(query, 'group_delimiter') === '.' ? '.' : '/',
    splitSelectMultiples: !flag(query, 'do_not_split_select_multiples', false),
    binarySelectMultiples: flag(query, 'binary_select_multiples', d.binarySelectMultiples),
    valueSelectMultiples: flag(query, 'value_select_multiples', d.valueSelectMultiples),
    includeLabels: flag(query, 'include_labels', d.includeLabels),
    includeLabelsOnly: flag(query, 'include_labels_only', d.includeLabelsOnly),
    includeHxl: flag(query, 'include_hxl', d.includeHxl),
    includeImages: flag(query, 'include_images', d.includeImages),
    includeReviews: flag(query, 'include_reviews', formDefaults.includeReviews ?? d.includeReviews),
    showChoiceLabels: flag(query, 'show_choice_labels', d.showChoiceLabels),
    language: language !== undefined && language !== '' ? language : undefined,
    repeatIndexTags: indexTags(single(query, 'repeat_index_tags')),
    winExcelUtf8: flag(query, 'win_excel_utf8', d.winExcelUtf8),
    query: rawQuery !== undefined && rawQuery.trim() !== '' ? rawQuery : undefined,
    start: parseExportDate(single(query, 'start')),
    end: parseExportDate(single(query, 'end')),
  };
}
