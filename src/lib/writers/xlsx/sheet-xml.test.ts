import { test } from 'node:test';
import assert from 'node:assert/strict';
import { columnName, numberText, rowXml } from './sheet-xml.ts';
import { SheetBytes } from './sheet-bytes.ts';
import type { Cell } from './cell.ts';

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

test('rows written as bytes are rowXml as UTF-8', () => {
  const texts = [
    'plain', ' lead', 'trail ', 'a & b <c> d', 'tab\there', 'line\nfeed', 'cr\r\nlf', '\u0001ctl', 'café', '日本語', '😀', '\ud800lone', '\uffff',
    '_x0041_ kept', 'snake_case', 'x_', '_', '_x', 'no_xylophone', '=1+2', "it's \"quoted\"", 'x'.repeat(40_000), `${'é'.repeat(32_766)}😀`,
  ];
  const cells: Cell[] = [
    ...texts, 0, -0, 7, 2_147_483_647, 2_147_483_648, -3, 1.5, -0.25, 1e21, 1 / 3, Number.NaN, Number.POSITIVE_INFINITY, true, false, null, '',
    { kind: 'date', iso: '2026-11-28' }, { kind: 'datetime', iso: '2026-11-28T10:11:12' }, { kind: 'date', iso: '1800-01-01' }, { kind: 'date', iso: 'not a date' },
  ];
  const out = new SheetBytes(16);
  const chunks: Uint8Array[] = [];
  let expected = '';
  for (let n = 0; n < 400; n += 1) {
    const row = Array.from({ length: 1 + (n % 13) }, (_, i) => cells[(n * 7 + i * 3) % cells.length] ?? null);
    expected += rowXml(n + 1, row);
    out.row(n + 1, row);
    if (out.full) chunks.push(out.take());
  }
  out.row(401, [null, '', Number.NaN]);
  chunks.push(out.take());
  assert.equal(Buffer.concat(chunks).toString('utf8'), Buffer.from(expected, 'utf8').toString('utf8'));
  assert.ok(Buffer.concat(chunks).equals(Buffer.from(expected, 'utf8')));
});
