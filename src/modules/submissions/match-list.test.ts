import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeMatches } from './match-list.ts';

describe('mergeMatches', () => {
  test('appends new ids in id order when there are no sort keys', () => {
    const merged = mergeMatches({ ids: Int32Array.from([1, 3, 5]), keys: [] }, [{ id: 9, keys: [] }, { id: 7, keys: [] }], []);
    assert.deepEqual(Array.from(merged.ids), [1, 3, 5, 7, 9]);
  });

  test('places new records by their keys, descending, ties by id, NULL (Infinity) first', () => {
    const list = { ids: Int32Array.from([4, 2, 1, 3]), keys: [Float64Array.from([Infinity, 30, 20, 20])] };
    const merged = mergeMatches(list, [{ id: 8, keys: [20] }, { id: 7, keys: [25] }, { id: 6, keys: [Infinity] }, { id: 5, keys: [10] }], [true]);
    assert.deepEqual(Array.from(merged.ids), [4, 6, 2, 7, 1, 3, 8, 5]);
    assert.deepEqual(Array.from(merged.keys[0] ?? []), [Infinity, Infinity, 30, 25, 20, 20, 20, 10]);
  });

  test('orders by several keys, ascending then descending', () => {
    const list = { ids: Int32Array.from([1, 2, 3]), keys: [Float64Array.from([1, 1, 2]), Float64Array.from([9, 5, 9])] };
    const merged = mergeMatches(list, [{ id: 4, keys: [1, 7] }, { id: 5, keys: [0, 0] }, { id: 6, keys: [2, 9] }], [false, true]);
    assert.deepEqual(Array.from(merged.ids), [5, 1, 4, 2, 3, 6]);
  });

  test('leaves the list it was given unchanged', () => {
    const ids = Int32Array.from([1, 2]);
    mergeMatches({ ids, keys: [] }, [{ id: 3, keys: [] }], []);
    assert.deepEqual(Array.from(ids), [1, 2]);
  });
});
