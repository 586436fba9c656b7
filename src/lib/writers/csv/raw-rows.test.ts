import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { planFlatLayout, type FlatColumn } from '../layout/flat.ts';
import { RepeatShape } from '../layout/repeat-shape.ts';
import { exportFormFrom } from '../layout/testing.ts';
import { DEFAULT_LAYOUT_OPTIONS, type ExportRecord } from '../layout/types.ts';
import { compileCsvRows } from './compiled-rows.ts';
import { numberTokens, rawCsvWriter } from './raw-rows.ts';
import { sanitizeText } from '../layout/values.ts';
import { OPTION_SETS, links, records } from './testing.ts';

const GIVEN_KEYS = ['_id', '_uuid', '_version', '_submitted_by', '_media_all_received', '_attachments'];
const GIVEN_VALUES: unknown[][] = [
  [7, 'u-1', '2024', 'amina', true, { 'a.jpg': 3 }],
  [8, '=u', null, null, false, {}],
  [1e21, 'a,b', 'v|1', 'ü', true, { 'a.jpg': 4, '=evil': 5 }],
];

/** A copy of the value whose objects have no prototype, as exports read records of forms with inherited names. */
function ownKeysOnly(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(ownKeysOnly);
  if (typeof value !== 'object' || value === null) return value;
  return Object.assign(Object.create(null) as object, Object.fromEntries(Object.entries(value).map(([k, v]) => [k, ownKeysOnly(v)])));
}

/** The record as PostgreSQL writes jsonb (`", "` and `": "`) or as JSON.stringify does. */
function stored(record: ExportRecord, spaced: boolean): string {
  const json = JSON.stringify(record);
  return spaced ? JSON.stringify(JSON.parse(json), null, 1).replace(/\n */g, ' ') : json;
}

/** The raw writer's lines for the records, written into one buffer among other bytes, checked against the compiled writer's. */
function compare(columns: readonly FlatColumn[], recordsToWrite: readonly ExportRecord[], label: string): number {
  const raw = rawCsvWriter(columns, GIVEN_KEYS);
  if (!raw) return 0;
  const compiled = compileCsvRows(columns);
  let expected = '';
  const parts: Buffer[] = [];
  const spans: [number, number][] = [];
  let at = 0;
  recordsToWrite.forEach((record, n) => {
    const bytes = Buffer.from(`${n % 2 === 0 ? 'x' : '  '}${stored(record, n % 3 === 0)}\t`);
    parts.push(bytes);
    spans.push([at + (n % 2 === 0 ? 1 : 0), at + bytes.length - 1]);
    at += bytes.length;
    const given = GIVEN_VALUES[n % GIVEN_VALUES.length] as unknown[];
    expected += compiled(ownKeysOnly({ ...record, ...Object.fromEntries(GIVEN_KEYS.map((key, i) => [key, given[i]])) }) as ExportRecord);
  });
  const src = Buffer.concat(parts);
  spans.forEach(([start, end], n) => raw.line(src, start, end, GIVEN_VALUES[n % GIVEN_VALUES.length] as unknown[]));
  const written = Buffer.concat(raw.take()).toString('utf8');
  const want = expected.split('\n');
  written.split('\n').forEach((line, n) => assert.equal(line, want[n], `${label}: record ${n} ${JSON.stringify(recordsToWrite[n])}`));
  assert.equal(written, expected, label);
  return recordsToWrite.length;
}

function check(fixture: string, observe: ExportRecord[]): number {
  const form = exportFormFrom(fixture);
  let compared = 0;
  for (const options of OPTION_SETS) {
    const shape = new RepeatShape();
    for (const record of observe) shape.observe(record);
    const layout = planFlatLayout(form, { ...DEFAULT_LAYOUT_OPTIONS, ...options }, shape, links, ['osm_road:name']);
    compared += compare(layout.columns, records(layout.columns, 300), `${fixture} ${JSON.stringify(options)}`);
  }
  return compared;
}

describe('CSV rows from stored JSON bytes', () => {
  test('each line equals the compiled writer’s, for awkward values, both JSON spacings and every option set it takes', () => {
    assert.ok(check('submissions/tutorial_w_repeats.csv', [{ children: [{}, {}, {}] }]) >= 600);
  });

  test('nested repeats: items found through their parents, missing or malformed parents read n/a', () => {
    const item = { 'children/cartoons': [{ 'children/cartoons/characters': [{}, {}] }, {}] };
    assert.ok(check('exports/childrens_survey.form.csv', [{ children: [item, item] }]) > 0);
  });

  test('escaped keys and texts, numbers that are not plain integers, and keys that are not identifiers', () => {
    const keys = ['q"1', 'grp/q\\2', 'ключ', 'a\u2028b', 'n', 'd', '__proto__', 'constructor'];
    const columns: FlatColumn[] = [...keys.map((key, i) => ({ header: key, label: key, hxl: '', read: () => '', rule: { kind: 'value' as const, steps: [], key, decimal: i === 5 } })), { header: '_tags', label: '_tags', hxl: '', read: () => '', rule: { kind: 'tags', steps: [], key: '_tags' } }];
    const texts = ['tab\there', 'quote "q"', 'slash \\ / \u00e9', '\u{1F600} emoji', 'line\nbreak', 'plain'];
    const numbers = [0, -0, 1, -1, 10, 123456789012345, 1234567890123456, 1e21, 1.5, -2.25, 1e-7, 0.1];
    const recordsToWrite: ExportRecord[] = [];
    for (let n = 0; n < 60; n++) {
      recordsToWrite.push({
        'q"1': texts[n % texts.length],
        'grp/q\\2': numbers[n % numbers.length],
        ключ: n % 4 === 0 ? undefined : `значение ${n}`,
        'a\u2028b': n % 5 === 0 ? null : [n, 'x'],
        n: numbers[(n + 3) % numbers.length],
        d: numbers[(n + 5) % numbers.length],
        constructor: n % 2 === 0 ? 'c' : undefined,
        _tags: n % 3 === 0 ? [] : ['b', 'a, c'],
      });
    }
    // JSON.stringify writes numbers its own way; stored records may spell them otherwise (PostgreSQL keeps `1.0`).
    assert.equal(compare(columns, recordsToWrite, 'escapes'), 60);
    const raw = rawCsvWriter(columns, []) as NonNullable<ReturnType<typeof rawCsvWriter>>;
    const spelled = Buffer.from('{"n": 1.0, "d": 2.50, "grp/q\\\\2": -0, "q\\"1": "\\u0041\\n"}');
    raw.line(spelled, 0, spelled.length, []);
    assert.equal(Buffer.concat(raw.take()).toString(), '"A\n",0,n/a,n/a,1,2.5,n/a,n/a,n/a\n');
    // Any JSON whitespace around keys, colons and commas.
    const spaced = Buffer.from('{ "n" :\t 1.0 ,\n "d":  \r\n2.50, "q\\"1": \n"x" ,"_tags":\t[ ]\n}');
    raw.line(spaced, 0, spaced.length, []);
    assert.equal(Buffer.concat(raw.take()).toString(), 'x,n/a,n/a,n/a,1,2.5,n/a,n/a,\n');
  });

  test('numberTokens accepts exactly the texts formula protection leaves alone for being numbers', () => {
    // Every text of up to 5 characters from number-ish bytes, led by a character a spreadsheet reads as a formula.
    const alphabet = ['1', '0', '.', 'e', 'E', '+', '-', ' ', 'x'];
    let texts = [''];
    let checked = 0;
    for (let length = 1; length <= 5; length++) {
      texts = texts.flatMap((text) => alphabet.map((c) => text + c));
      for (const tail of texts) {
        for (const text of ['-' + tail, '+' + tail]) {
          const bytes = Buffer.from(`"${text}"`);
          assert.equal(numberTokens(bytes, 1, bytes.length - 1), sanitizeText(text) === text, text);
          checked++;
        }
      }
    }
    assert.ok(checked > 100_000);
  });

  test('bytes that are not JSON are refused, not written', () => {
    const column = (key: string): FlatColumn => ({ header: key, label: key, hxl: '', read: () => '', rule: { kind: 'value', steps: [], key, decimal: false } });
    const raw = rawCsvWriter([column('a'), column('b')], []) as NonNullable<ReturnType<typeof rawCsvWriter>>;
    for (const text of ['{"a": "open', '{"a" 1}', '[1]', '{"a": 1', '{"a": {"b": [}', '']) {
      const bytes = Buffer.from(text);
      assert.throws(() => raw.line(bytes, 0, bytes.length, []), /not valid JSON/, text);
    }
  });

  test('a layout with a column that needs the whole record is not written this way', () => {
    const form = exportFormFrom('submissions/tutorial_w_repeats.csv');
    const layout = planFlatLayout(form, { ...DEFAULT_LAYOUT_OPTIONS, showChoiceLabels: true }, new RepeatShape(), links);
    assert.equal(rawCsvWriter(layout.columns, []), undefined);
    assert.ok(rawCsvWriter(planFlatLayout(form, DEFAULT_LAYOUT_OPTIONS, new RepeatShape(), links).columns, []));
  });
});
