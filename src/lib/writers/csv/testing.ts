// Records for the tests of the CSV row writers: every kind of value under the keys a layout's
// columns read, some missing, some malformed.
import type { FlatColumn } from '../layout/flat.ts';
import type { ExportRecord, LayoutOptions } from '../layout/types.ts';

export const links = { baseUrl: 'http://testserver' };

/** Texts that exercise formula protection, quoting and pipes. */
export const AWKWARD = ['', 'plain', '=1+2', '+254700', '-3', '-1.5 36.8 0 5', '@user', '%x', '\tTab', 'a,b', 'say "hi"', 'line\nbreak', 'cr\r', 'a|b', '=a|"b",c', 'ünïcödé'];
export const VALUES: unknown[] = [...AWKWARD, undefined, null, true, false, 0, -7, 12.5, 3, 1e21, [], ['x'], { a: 1 }];

/** A deterministic choice from `items` (a small linear congruential generator). */
function chooser(seed: number): <T>(items: readonly T[]) => T {
  let state = seed;
  return <T>(items: readonly T[]): T => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return items[state % items.length] as T;
  };
}

/** Records with every kind of value under the keys the form's columns read, and some missing. */
export function records(columns: readonly FlatColumn[], count: number): ExportRecord[] {
  const pick = chooser(count);
  const out: ExportRecord[] = [];
  for (let n = 0; n < count; n++) {
    const record: Record<string, unknown> = { _tags: pick([[], ['b', 'a'], ['x, y']]), _notes: [], _attachments: { 'a.jpg': 3 } };
    for (const column of columns) {
      const rule = column.rule;
      if (!rule) continue;
      let container: Record<string, unknown> | undefined = record;
      for (const step of rule.steps) {
        if (!container) break;
        if (!Array.isArray(container[step.key])) container[step.key] = pick([[], [], [], 'not a list', null]);
        const items = container[step.key];
        if (!Array.isArray(items)) {
          container = undefined;
          break;
        }
        while (items.length <= step.index) items.push(pick([{}, {}, {}, null, 'x']));
        const item: unknown = items[step.index];
        container = typeof item === 'object' && item !== null && !Array.isArray(item) ? (item as Record<string, unknown>) : undefined;
      }
      const value =
        rule.kind === 'choice'
          ? pick([undefined, rule.choice, `x ${rule.choice}`, `${rule.choice}-not`, 'other', 3, null, ''])
          : rule.kind === 'part'
            ? pick([undefined, '1 2 3 4', '-1.2 36.8 0 5', '=1 2 3 4', '1 2', 5, null, ''])
            : pick(VALUES);
      if (container && value !== undefined) container[rule.key] = value;
    }
    for (const key of ['web_browsers', 'gps', 'picture']) {
      const value = pick([undefined, undefined, undefined, 'firefox ie', 'a.jpg', '-1.2 36.8 0 5', 3, '=evil']);
      if (value !== undefined) record[key] = value;
    }
    out.push(record);
  }
  return out;
}

export const OPTION_SETS: Partial<LayoutOptions>[] = [
  {},
  { splitSelectMultiples: false },
  { showChoiceLabels: true },
  { binarySelectMultiples: true, includeReviews: true },
  { valueSelectMultiples: true, removeGroupName: true, groupDelimiter: '.' },
  { includeImages: false },
];

