import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../errors.ts';
import { DEFAULT_EXPORT_OPTIONS, parseExportDate, parseExportOptions, strToBool } from './options.ts';

describe('export options', () => {
  test('str_to_bool: true, t, 1 in any case; anything else (a bare flag too) is false', () => {
    for (const yes of ['true', 'TRUE', 't', 'T', '1', ' True ']) assert.equal(strToBool(yes), true, yes);
    for (const no of ['', 'false', 'yes', 'on', '0', undefined]) assert.equal(strToBool(no), false, String(no));
  });

  test('no parameters give the defaults (include_hxl and include_images on)', () => {
    assert.deepEqual(parseExportOptions({}), DEFAULT_EXPORT_OPTIONS);
  });

  test('every option', () => {
    const o = parseExportOptions({
      remove_group_name: 'true', group_delimiter: '.', do_not_split_select_multiples: 't', binary_select_multiples: '1',
      value_select_multiples: 'true', include_labels: 'true', include_labels_only: 'true', include_hxl: 'false',
      include_images: 'false', include_reviews: 'true', show_choice_labels: 'true', language: 'French',
      repeat_index_tags: '(,)', win_excel_utf8: 'true', query: '{"_version": "2"}', start: '19_01_31_12_30_00', end: '19_02_01_00_00_00',
    });
    assert.deepEqual(o, {
      removeGroupName: true, groupDelimiter: '.', splitSelectMultiples: false, binarySelectMultiples: true, valueSelectMultiples: true,
      includeLabels: true, includeLabelsOnly: true, includeHxl: false, includeImages: false, includeReviews: true, showChoiceLabels: true,
      language: 'French', repeatIndexTags: ['(', ')'], winExcelUtf8: true, query: '{"_version": "2"}',
      start: new Date('2019-01-31T12:30:00Z'), end: new Date('2019-02-01T00:00:00Z'),
    });
  });

  test('group_delimiter other than . is /', () => {
    assert.equal(parseExportOptions({ group_delimiter: '-' }).groupDelimiter, '/');
  });

  test('repeat_index_tags must be two of [ ] ( ) { } . _', () => {
    assert.deepEqual(parseExportOptions({ repeat_index_tags: '_,_' }).repeatIndexTags, ['_', '_']);
    for (const bad of ['<,>', '[', '[,],[', 'ab,cd']) {
      assert.throws(() => parseExportOptions({ repeat_index_tags: bad }), (e: unknown) => e instanceof AppError && e.status === 400, bad);
    }
  });

  test('start/end: YY_MM_DD_hh_mm_ss, else 400 with onadata’s message', () => {
    assert.deepEqual(parseExportDate('70_01_01_00_00_00'), new Date('1970-01-01T00:00:00Z'));
    for (const bad of ['2019-01-31', '19_13_01_00_00_00', '19_02_30_00_00_00', '19_01_01_25_00_00']) {
      assert.throws(
        () => parseExportOptions({ start: bad }),
        (e: unknown) => e instanceof AppError && e.status === 400 && JSON.stringify(e.body) === '{"detail":"Dates must be in the format YY_MM_DD_hh_mm_ss"}',
        bad,
      );
    }
  });
});
