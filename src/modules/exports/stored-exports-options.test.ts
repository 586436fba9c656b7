import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseExportOptions } from './options.ts';
import { optionsFromStored, optionsKey, storedOptions } from './stored-exports-options.ts';

const QUERIES: Array<Record<string, string>> = [
  {},
  { remove_group_name: 'true', group_delimiter: '.', do_not_split_select_multiples: 'true' },
  { binary_select_multiples: 'true', include_labels: 't', include_labels_only: '1', include_hxl: 'false', include_images: 'false' },
  { include_reviews: 'true', show_choice_labels: 'true', language: 'French', value_select_multiples: 'true', win_excel_utf8: 'true' },
  { repeat_index_tags: '_,_', query: '{"_version": "2014111"}', start: '13_02_18_00_00_00', end: '13_02_19_00_00_00' },
];

test('stored options parse back to the very options the request gave', () => {
  for (const query of QUERIES) {
    const options = parseExportOptions(query);
    assert.deepEqual(optionsFromStored(JSON.parse(JSON.stringify(storedOptions(options, query))) as Record<string, unknown>), options, JSON.stringify(query));
  }
});

test('stored options use onadata’s names', () => {
  const stored = storedOptions(parseExportOptions({ do_not_split_select_multiples: 'true', query: '{"a":1}' }), {});
  assert.deepEqual(Object.keys(stored).sort(), [
    'binary_select_multiples', 'group_delimiter', 'include_hxl', 'include_images', 'include_labels', 'include_labels_only',
    'include_reviews', 'query', 'remove_group_name', 'repeat_index_tags', 'show_choice_labels', 'split_select_multiples',
    'value_select_multiples', 'win_excel_utf8',
  ]);
  assert.equal(stored['split_select_multiples'], false);
});

test('the same options in another spelling give the same key; other options another', () => {
  const a = optionsKey(storedOptions(parseExportOptions({ remove_group_name: 'TRUE', include_labels: 'f' }), {}));
  const b = optionsKey(storedOptions(parseExportOptions({ remove_group_name: 't' }), {}));
  const c = optionsKey(storedOptions(parseExportOptions({}), {}));
  assert.equal(a, b);
  assert.notEqual(a, c);
});
