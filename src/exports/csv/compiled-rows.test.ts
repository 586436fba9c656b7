import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { planFlatLayout, type FlatColumn } from '../layout/flat.ts';
import { RepeatShape } from '../layout/repeat-shape.ts';
import { exportFormFrom } from '../layout/testing.ts';
import { DEFAULT_LAYOUT_OPTIONS, type ExportRecord, type LayoutOptions } from '../layout/types.ts';
import { compileCsvRows } from './compiled-rows.ts';
import { csvLine } from './writer.ts';

const links = { baseUrl: 'http://testserver' };

/** Texts that exercise formula protection, quoting and pipes. */
const AWKWARD = ['', 'plain', '=1+2', '+254700', '-3', '-1.5 36.8 0 5', '@user', '%x', '\tTab', 'a,b', 'say "hi"', 'line\nbreak', 'cr\r', 'a|b', '=a|"b",c', 'ünïcödé'];
const VALUES: unknown[] = [...AWKWARD, undefined, null, true, false, 0, -7, 12.5, 3, 1e21, [], ['x'], { a: 1 }];

/** A deterministic choice from `items` (a small linear congruential generator). */
function chooser(seed: number): <T>(items: readonly T[]) => T {
  let state = seed;
  return <T>(items: readonly T[]): T => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return items[state % items.length] as T;
  };
}

/** Records with every kind of value under the keys the form's columns read, and some missing. */
function records(columns: readonly FlatColumn[], count: number): ExportRecord[] {
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

const OPTION_SETS: Partial<LayoutOptions>[] = [
  {},
  { splitSelectMultiples: false },
  { showChoiceLabels: true },
  { binarySelectMultiples: true, includeReviews: true },
  { valueSelectMultiples: true, removeGroupName: true, groupDelimiter: '.' },
  { includeImages: false },
];

function check(fixture: string, observe: ExportRecord[]): void {
  const form = exportFormFrom(fixture);
  for (const options of OPTION_SETS) {
    const shape = new RepeatShape();
    for (const record of observe) shape.observe(record);
    const layout = planFlatLayout(form, { ...DEFAULT_LAYOUT_OPTIONS, ...options }, shape, links, ['osm_road:name']);
    const write = compileCsvRows(layout.columns);
    for (const record of records(layout.columns, 300)) {
      assert.equal(write(record), csvLine(layout.row(record)), `${fixture} ${JSON.stringify(options)} ${JSON.stringify(record)}`);
    }
  }
}

describe('compiled CSV rows', () => {
  test('each line equals the layout row written by csvLine, for awkward values and every option set', () => {
    check('submissions/tutorial_w_repeats.csv', [{ children: [{}, {}, {}] }]);
  });

  test('nested repeats: items found through their parents, missing or malformed parents read n/a', () => {
    const item = { 'children/cartoons': [{ 'children/cartoons/characters': [{}, {}] }, {}] };
    check('exports/childrens_survey.form.csv', [{ children: [item, item] }]);
  });

  test('keys that are not identifiers are read as written, and more columns than one generated function holds', () => {
    const columns: FlatColumn[] = Array.from({ length: 450 }, (_, i) => {
      const key = i % 3 === 0 ? `grp/q"${i}'\\\u2028` : `q${i}`;
      return { header: key, label: key, hxl: '', read: (r: ExportRecord) => String(r[key] ?? 'n/a'), rule: { kind: 'value', steps: [], key, decimal: i % 7 === 0 } };
    });
    const layoutRow = (record: ExportRecord) =>
      columns.map((c, i) => {
        const value = record[c.rule?.key ?? ''];
        if (value === undefined) return 'n/a';
        return typeof value === 'number' && i % 7 === 0 ? (Number.isInteger(value) ? `${value}.0` : String(value)) : String(value);
      });
    const write = compileCsvRows(columns);
    const record: ExportRecord = Object.fromEntries(columns.map((c, i) => [c.rule?.key ?? '', i % 2 === 0 ? i : `text ${i}`]));
    assert.equal(write(record), csvLine(layoutRow(record)));
    assert.equal(write({}), csvLine(columns.map(() => 'n/a')));
  });

  test('a single column of one empty field is written "" as csvLine writes it', () => {
    const only: FlatColumn = { header: 'a', label: 'a', hxl: '', read: () => '', rule: { kind: 'value', steps: [], key: 'a', decimal: false } };
    assert.equal(compileCsvRows([only])({ a: '' }), '""\n');
  });
});
