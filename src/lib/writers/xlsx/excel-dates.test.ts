import { test } from 'node:test';
import assert from 'node:assert/strict';
import { excelSerial } from './excel-dates.ts';

test('dates are days since 1899-12-30', () => {
  assert.equal(excelSerial({ kind: 'date', iso: '1900-03-01' }), 61);
  assert.equal(excelSerial({ kind: 'date', iso: '2013-02-18' }), 41323);
  assert.equal(excelSerial({ kind: 'date', iso: '2024-02-29' }), 45351);
  assert.equal(excelSerial({ kind: 'date', iso: '9999-12-31' }), 2958465);
});

test('datetimes keep the clock time and drop the zone', () => {
  const noon = 41323.5;
  assert.equal(excelSerial({ kind: 'datetime', iso: '2013-02-18T12:00:00' }), noon);
  assert.equal(excelSerial({ kind: 'datetime', iso: '2013-02-18T12:00:00+03:00' }), noon);
  assert.equal(excelSerial({ kind: 'datetime', iso: '2013-02-18T12:00:00.000Z' }), noon);
  assert.equal(excelSerial({ kind: 'datetime', iso: '2013-02-18 12:00' }), noon);
  assert.equal(excelSerial({ kind: 'datetime', iso: '2013-02-18T00:00:00.5' }), 41323 + 0.5 / 86400);
  assert.equal(excelSerial({ kind: 'datetime', iso: '2013-02-18' }), 41323);
});

test('anything that is not a representable date is undefined', () => {
  for (const iso of ['', '2013-2-18', '2013-02-30', '2023-02-29', '1900-02-28', '1899-12-31', '2013-13-01', 'abcd-ef-gh']) {
    assert.equal(excelSerial({ kind: 'date', iso }), undefined, iso);
  }
  for (const iso of ['2013-02-18T25:00', '2013-02-18T12', '2013-02-18X12:00', '2013-02-18T12:60']) {
    assert.equal(excelSerial({ kind: 'datetime', iso }), undefined, iso);
  }
});
