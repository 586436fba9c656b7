import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { planFlatLayout, type FlatColumn } from '../layout/flat.ts';
import { RepeatShape } from '../layout/repeat-shape.ts';
import { exportFormFrom } from '../layout/testing.ts';
import { DEFAULT_LAYOUT_OPTIONS, type ExportRecord } from '../layout/types.ts';
import { compileCsvRows } from './compiled-rows.ts';
import { csvLine } from './writer.ts';
import { OPTION_SETS, links, records } from './testing.ts';

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
