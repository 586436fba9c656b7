import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRepeatCountKey, repeatCountsOf } from './repeat-counts.ts';

test('repeats are counted at every depth, keyed by the positions of their enclosing items', () => {
  const record = {
    name: 'x',
    kids: [{ 'kids/name': 'a', 'kids/shots': [{}, {}] }, { 'kids/name': 'b' }, { 'kids/shots': [{}] }],
    'g/visits': [{ 'g/visits/when': '2026-01-01' }],
  };
  assert.deepEqual(JSON.parse(repeatCountsOf(record)), { kids: 3, 'kids/shots 1': 2, 'kids/shots 3': 1, 'g/visits': 1 });
});

test('arrays that are not repeats are not counted, and a record without repeats gives {}', () => {
  assert.equal(repeatCountsOf({ a: 'b', geo: [1, 2], tags: [], empty: [] }), '{}');
});

test('a count key reads back as the repeat and its positions', () => {
  assert.deepEqual(parseRepeatCountKey('kids'), { path: 'kids', indices: [] });
  assert.deepEqual(parseRepeatCountKey('kids/shots/doses 2,10'), { path: 'kids/shots/doses', indices: [2, 10] });
});
