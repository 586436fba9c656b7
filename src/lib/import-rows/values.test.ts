import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkGeopoint, checkValue, normaliseDate, normaliseDateTime, normaliseTime } from './values.ts';
import type { FormQuestion } from '../form-model/model.ts';
import { usesOf, type ImportValue } from '../form-model/type-table.ts';

function question(importValue: ImportValue, choiceNames: string[] | null = null, allowsOther = false): FormQuestion {
  const uses = { ...usesOf('text', undefined), importValue };
  return { kind: 'question', name: 'q', path: 'q', type: 'text', label: undefined, choices: [], choiceNames, allowsOther, hxl: undefined, repeat: null, uses };
}

test('dates a device would send are kept; common spellings become ISO; others are refused', () => {
  assert.equal(normaliseDate('2014-09-30'), '2014-09-30');
  assert.equal(normaliseDate('2014/9/3'), '2014-09-03');
  assert.equal(normaliseDate('9/10/2015'), '2015-09-10');
  assert.equal(normaliseDate('2014-09-30T00:00:00'), '2014-09-30');
  assert.equal(normaliseDate('2014-0903'), null);
  assert.equal(normaliseDate('2014-02-30'), null);
});

test('datetimes keep their fraction and zone exactly; loose ones are completed', () => {
  assert.equal(normaliseDateTime('2014-09-04T15:06:01.000+03:00'), '2014-09-04T15:06:01.000+03:00');
  assert.equal(normaliseDateTime('2014-09-04 9:24:57'), '2014-09-04T09:24:57');
  assert.equal(normaliseDateTime('2014-09-04'), '2014-09-04T00:00:00');
  assert.equal(normaliseDateTime('sdsa'), null);
  assert.equal(normaliseDateTime('2014-09-04T25:00:00'), null);
  assert.equal(normaliseTime('08:15:00.000+03:00'), '08:15:00.000+03:00');
  assert.equal(normaliseTime('8:15'), '08:15:00');
  assert.equal(normaliseTime('8h15'), null);
});

test('numbers, geopoints and choices', () => {
  assert.deepEqual(checkValue(question('integer'), ' 25 '), { ok: true, value: '25' });
  assert.deepEqual(checkValue(question('integer'), '21.53'), { ok: false, problem: 'integer' });
  assert.deepEqual(checkValue(question('decimal'), '-1.5e3'), { ok: true, value: '-1.5e3' });
  assert.deepEqual(checkValue(question('decimal'), 'nan'), { ok: false, problem: 'decimal' });
  assert.equal(checkGeopoint('-1.2625621 36.7921711 0.0 20.0'), '-1.2625621 36.7921711 0.0 20.0');
  assert.equal(checkGeopoint('91 36'), null);
  assert.equal(checkGeopoint('1'), null);
  assert.deepEqual(checkValue(question('select_one', ['yes', 'no']), 'yes'), { ok: true, value: 'yes' });
  assert.deepEqual(checkValue(question('select_one', ['yes', 'no']), 'maybe'), { ok: false, problem: 'choice' });
  assert.deepEqual(checkValue(question('select_one', ['yes'], true), 'other'), { ok: true, value: 'other' });
  assert.deepEqual(checkValue(question('select_one', null), 'anything'), { ok: true, value: 'anything' });
  assert.deepEqual(checkValue(question('select_multiple', ['a', 'b', 'c']), 'a  c'), { ok: true, value: 'a c' });
  assert.deepEqual(checkValue(question('select_multiple', ['a', 'b']), 'a z'), { ok: false, problem: 'choice' });
  assert.deepEqual(checkValue(question('text'), '  kept as written '), { ok: true, value: '  kept as written ' });
});
