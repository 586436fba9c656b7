// Review columns in exports: include_reviews, the default of forms with review enabled
// (`submission_review` metadata), and the latest review's status, comment and date in CSV, XLSX,
// csvzip and savzip (onadata's export builders write the status code, e.g. "2").
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as XLSX from '@e965/xlsx';
import { createUser, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { unzip } from '../zip.ts';
import { psppUnavailableReason, readWithPspp } from '../../src/lib/writers/sav/testing/pspp.ts';

let server: TestServer;
let bob: TestUser;
let formId: number;
let recordId: number;
let reviewDate: string;
let dateModified: string;

const fixture = (path: string) => readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8');
const get = (url: string) => server.app.inject({ method: 'GET', url, headers: bob.auth });

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  formId = await publishForm(server.app, bob, formFile(fixture('submissions/tutorial_w_repeats.csv'), 'tutorial_w_repeats.csv'));
  server.clock.offsetMs = Date.parse('2013-02-18T15:54:01Z') - Date.now();
  const submitted = await postSubmission(server.app, `/${bob.username}/submission`, fixture('submissions/tutorial_w_repeats.xml'), bob.auth);
  assert.equal(submitted.statusCode, 201, submitted.body);
  server.clock.offsetMs = 0;
  recordId = Number((await get(`/api/v1/data/${formId}`)).json()[0]._id);
  const review = await server.app.inject({ method: 'POST', url: '/api/v1/submissionreview', headers: bob.auth, payload: { instance: recordId, status: '2', note: '=Wrong, location' } });
  assert.equal(review.statusCode, 201, review.body);
  const record = (await get(`/api/v1/data/${formId}/${recordId}`)).json<Record<string, unknown>>();
  reviewDate = String(record['_review_date']);
  dateModified = String(record['_date_modified']);
  assert.match(reviewDate, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
});
after(() => server.close());

const CSV_HEADER =
  'name,age,picture,has_children,children[1]/childs_name,children[1]/childs_age,children[2]/childs_name,children[2]/childs_age,' +
  'gps,_gps_latitude,_gps_longitude,_gps_altitude,_gps_precision,web_browsers/firefox,web_browsers/chrome,web_browsers/ie,web_browsers/safari,' +
  'meta/instanceID,_id,_uuid,_submission_time,_date_modified,_tags,_notes,_version,_duration,_submitted_by,_last_edited_by,' +
  '_total_media,_media_count,_media_all_received';

function csvRow(): string {
  return (
    'Bob,25,n/a,1,Tom,12,Dick,5,-1.2625621 36.7921711 0.0 20.0,-1.2625621,36.7921711,0.0,20.0,n/a,n/a,n/a,n/a,' +
    `uuid:b31c6ac2-b8ca-4180-914f-c844fa10ed3b,${recordId},b31c6ac2-b8ca-4180-914f-c844fa10ed3b,2013-02-18T15:54:01+00:00,` +
    `${dateModified.slice(0, 19)}+00:00,,,2014111,,bob,,0,0,True`
  );
}

// The comment starts with "=": as every text cell, it is protected against formula injection.
const REVIEW_CELLS = () => `2,"'=Wrong, location",${reviewDate}`;

describe('review columns in exports', () => {
  test('CSV: no review columns by default; include_reviews=true adds the latest review’s status, comment and date', async () => {
    const plain = await get(`/api/v1/forms/${formId}.csv`);
    assert.equal(plain.statusCode, 200, plain.body);
    assert.equal(plain.body, `${CSV_HEADER}\n${csvRow()}\n`);
    const reviewed = await get(`/api/v1/forms/${formId}.csv?include_reviews=true`);
    assert.equal(reviewed.body, `${CSV_HEADER},_review_status,_review_comment,_review_date\n${csvRow()},${REVIEW_CELLS()}\n`);
    const unreviewed = await get(`/api/v1/data/${formId}.csv?include_reviews=true&query=${encodeURIComponent('{"_review_status": "1"}')}`);
    // No record matches, so no repeat columns either (their number comes from the records).
    const emptyHeader = CSV_HEADER.replace(/children\[\d\]\/childs_(name|age),/g, '');
    assert.equal(unreviewed.body, `${emptyHeader},_review_status,_review_comment,_review_date\n`);
  });

  test('XLSX: the review columns follow _last_edited_by on every sheet, filled on the record’s row only', async () => {
    const res = await get(`/api/v1/forms/${formId}.xlsx?include_reviews=true`);
    assert.equal(res.statusCode, 200, res.body);
    const book = XLSX.read(res.rawPayload, { type: 'buffer' });
    const sheet = (name: string) => XLSX.utils.sheet_to_json<unknown[]>(book.Sheets[name] ?? assert.fail(name), { header: 1, raw: true, defval: null });
    const main = sheet('tutorial_w_repeats');
    main[1]?.splice(17, 1, 'date');
    // Text cells are never evaluated: the note and comment are kept as written (CSV protects them).
    assert.deepEqual(main, [
      [
        'name', 'age', 'picture', 'has_children', 'gps', '_gps_latitude', '_gps_longitude', '_gps_altitude', '_gps_precision',
        'web_browsers', 'web_browsers/firefox', 'web_browsers/chrome', 'web_browsers/ie', 'web_browsers/safari', 'meta/instanceID',
        '_id', '_uuid', '_submission_time', '_index', '_parent_table_name', '_parent_index', '_tags', '_notes', '_version',
        '_duration', '_submitted_by', '_last_edited_by', '_review_status', '_review_comment', '_review_date',
      ],
      [
        'Bob', 25, null, '1', '-1.2625621 36.7921711 0.0 20.0', -1.2625621, 36.7921711, 0, 20,
        null, null, null, null, null, 'uuid:b31c6ac2-b8ca-4180-914f-c844fa10ed3b',
        recordId, 'b31c6ac2-b8ca-4180-914f-c844fa10ed3b', 'date', 1, null, -1, null, '=Wrong, location', '2014111',
        null, 'bob', null, '2', '=Wrong, location', reviewDate,
      ],
    ]);
    assert.deepEqual(sheet('children'), [
      [
        'children/childs_name', 'children/childs_age', '_id', '_uuid', '_submission_time', '_index', '_parent_table_name',
        '_parent_index', '_tags', '_notes', '_version', '_duration', '_submitted_by', '_last_edited_by',
        '_review_status', '_review_comment', '_review_date',
      ],
      ['Tom', 12, null, null, null, 1, 'tutorial_w_repeats', 1, null, null, null, null, null, null, null, null, null],
      ['Dick', 5, null, null, null, 2, 'tutorial_w_repeats', 1, null, null, null, null, null, null, null, null, null],
    ]);
  });

  test('a form with review enabled exports the review columns by default, and include_reviews=false leaves them out', async () => {
    const enabled = await server.app.inject({ method: 'POST', url: '/api/v1/metadata', headers: bob.auth, payload: { xform: formId, data_type: 'submission_review', data_value: 'true' } });
    assert.equal(enabled.statusCode, 201, enabled.body);
    const byDefault = await get(`/api/v1/forms/${formId}.csv`);
    assert.equal(byDefault.body, `${CSV_HEADER},_review_status,_review_comment,_review_date\n${csvRow()},${REVIEW_CELLS()}\n`);
    const without = await get(`/api/v1/forms/${formId}.csv?include_reviews=false`);
    assert.equal(without.body, `${CSV_HEADER}\n${csvRow()}\n`);

    // An export job stores the option it is made with.
    const started = await get(`/api/v1/forms/${formId}/export_async?format=csvzip`);
    assert.equal(started.statusCode, 202, started.body);
    const stored = (await get(`/api/v1/export?xform=${formId}`)).json<Array<{ options: Record<string, unknown> }>>();
    assert.deepEqual(stored.map((e) => e.options['include_reviews']), [true]);
    const zipped = await get(`/api/v1/forms/${formId}.csvzip`);
    const files = await unzip(zipped.rawPayload);
    const main = files.get('tutorial_w_repeats.csv')?.toString('utf8') ?? '';
    const [header = '', row = ''] = main.split('\n');
    assert.ok(header.endsWith(',_last_edited_by,_review_status,_review_comment,_review_date'), header);
    assert.ok(row.endsWith(`,bob,,${REVIEW_CELLS()}`), row);
    assert.ok(files.get('children.csv')?.toString('utf8').split('\n')[1]?.endsWith(',,,'));

    // Review turned off again (data_value false): the default follows.
    const disabled = await server.app.inject({ method: 'PATCH', url: `/api/v1/metadata/${String(enabled.json().id)}`, headers: bob.auth, payload: { data_value: 'false' } });
    assert.equal(disabled.statusCode, 200, disabled.body);
    assert.equal((await get(`/api/v1/forms/${formId}.csv`)).body, `${CSV_HEADER}\n${csvRow()}\n`);
  });

  test('savzip: the review variables, named as onadata names them', async () => {
    const res = await get(`/api/v1/forms/${formId}.savzip?include_reviews=true`);
    assert.equal(res.statusCode, 200, res.body);
    const sav = (await unzip(res.rawPayload)).get('tutorial_w_repeats.sav') ?? assert.fail('no main .sav');
    for (const name of ['@_review_status', '@_review_comment', '@_review_date']) assert.ok(sav.includes(name), name);
    if (!process.env['CI'] && psppUnavailableReason()) return;
    const main = readWithPspp([sav]);
    const [header = [], row = []] = main.data;
    const at = (name: string) => row[header.indexOf(name)]?.trim();
    assert.equal(at('@_review_status'), '2');
    // SPSS has no formulas: the comment is kept as written (CSV protects it, above).
    assert.equal(at('@_review_comment'), '=Wrong, location');
    assert.equal(at('@_review_date'), reviewDate);
  });
});
