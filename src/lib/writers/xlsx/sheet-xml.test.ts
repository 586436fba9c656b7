import { test } from 'node:test';
import assert from 'node:assert/strict';
import { columnName, numberText, rowXml } from './sheet-xml.ts';

test('numbers are written as the shortest decimal that reads back exactly', () => {
  for (const n of [0, -0.5, 0.05, 1.58, -12.25, 999_999.9999, 36.7921711, 1 / 3, 1e-7, 1e21, -1, 123_456_789, 0.1 + 0.2]) {
    assert.equal(numberText(n), String(n === 0 ? 0 : n), String(n));
    assert.equal(Number(numberText(n)), n);
  }
  for (let i = 0; i < 100_000; i += 1) {
    const places = i % 5;
    const n = Math.round((Math.random() - 0.5) * 2e6 * 10 ** places) / 10 ** places;
    assert.equal(numberText(n), String(n));
  }
});

test('column names run A…Z, AA…, up to XFD', () => {
  assert.deepEqual([0, 25, 26, 701, 702, 16_383].map(columnName), ['A', 'Z', 'AA', 'ZZ', 'AAA', 'XFD']);
});

test('cells after a gap carry their reference; an empty row is no row', () => {
  assert.equal(rowXml(3, [1, null, '', 2, true]), '<row r="3"><c><v>1</v></c><c r="D3"><v>2</v></c><c t="b"><v>1</v></c></row>');
  assert.equal(rowXml(4, [null, Number.NaN, '']), '');
});
