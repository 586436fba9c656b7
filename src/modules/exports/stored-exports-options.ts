// An export's options as its stored Export record keeps them: onadata's snake_case names (what /api/v1/export
// shows, and what "an export with the same options" compares), and back to options for the job.
import { parseExportOptions, type ExportOptions, type RawQuery } from './options.ts';

type Stored = Record<string, string | boolean | string[]>;

const FLAGS = [
  ['binary_select_multiples', 'binarySelectMultiples'],
  ['include_hxl', 'includeHxl'],
  ['include_images', 'includeImages'],
  ['include_labels', 'includeLabels'],
  ['include_labels_only', 'includeLabelsOnly'],
  ['include_reviews', 'includeReviews'],
  ['remove_group_name', 'removeGroupName'],
  ['show_choice_labels', 'showChoiceLabels'],
  ['value_select_multiples', 'valueSelectMultiples'],
  ['win_excel_utf8', 'winExcelUtf8'],
] as const satisfies ReadonlyArray<readonly [string, keyof ExportOptions]>;

/** The options to store; `start` and `end` keep the text the request gave. */
export function storedOptions(options: ExportOptions, query: RawQuery): Stored {
  const out: Stored = {};
  for (const [name, key] of FLAGS) out[name] = options[key];
  out['group_delimiter'] = options.groupDelimiter;
  out['repeat_index_tags'] = [...options.repeatIndexTags];
  out['split_select_multiples'] = options.splitSelectMultiples;
  if (options.language !== undefined) out['language'] = options.language;
  if (options.query !== undefined) out['query'] = options.query;
  for (const bound of ['start', 'end'] as const) {
    const raw = query[bound];
    if (options[bound] !== undefined && typeof raw === 'string') out[bound] = raw;
  }
  return out;
}

/** Stored options → the options the export is made with (parsed as a request's would be). */
export function optionsFromStored(stored: Readonly<Record<string, unknown>>): ExportOptions {
  const query: Record<string, string> = {};
  for (const [name] of FLAGS) if (typeof stored[name] === 'boolean') query[name] = String(stored[name]);
  if (stored['split_select_multiples'] === false) query['do_not_split_select_multiples'] = 'true';
  const tags = stored['repeat_index_tags'];
  if (Array.isArray(tags)) query['repeat_index_tags'] = tags.map(String).join(',');
  for (const name of ['group_delimiter', 'language', 'query', 'start', 'end']) {
    if (typeof stored[name] === 'string') query[name] = stored[name];
  }
  return parseExportOptions(query);
}

/** Canonical text of stored options (keys sorted), for comparing two exports' options. */
export function optionsKey(stored: Stored): string {
  return JSON.stringify(Object.fromEntries(Object.entries(stored).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}
