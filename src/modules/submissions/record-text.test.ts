import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recordText, type RecordRow } from './record-text.ts';

const row: RecordRow = {
  json: '{"name": "Ann"}', id: 7, form_id: 3, created_us: Date.UTC(2026, 10, 1, 8, 0, 0) * 1000 + 123, modified_us: -1,
  edited_us: null, submitted_by_name: 'bob', edited: false, last_edited_by_name: null, total_media: 1, media_count: 0, attachments: null,
};

test('the meta keys follow the stored answers in jsonb order, times with microseconds', () => {
  assert.equal(
    recordText(row),
    '{"name": "Ann", "_id": 7, "_edited": false, "_xform_id": 3, "_attachments": [], "_media_count": 0, "_total_media": 1, "_submitted_by": "bob", ' +
      '"_date_modified": "1969-12-31T23:59:59.999999+00:00", "_last_edited_by": null, "_submission_time": "2026-11-01T08:00:00.000123+00:00", "_media_all_received": false}',
  );
});

test('an edited record has _last_edited; an empty record is the meta keys alone', () => {
  const text = recordText({ ...row, json: '{}', edited: true, edited_us: 0, attachments: '[{"id": 1}]' });
  const parsed = JSON.parse(text) as Record<string, unknown>;
  assert.equal(parsed['_last_edited'], '1970-01-01T00:00:00.000000+00:00');
  assert.deepEqual(parsed['_attachments'], [{ id: 1 }]);
  assert.equal(parsed['name'], undefined);
});
