import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as XLSX from '@e965/xlsx';
import { createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { readBiff8 } from '../../packages/xlsform/src/workbook/biff8.ts';

let server: TestServer;
let bob: TestUser;
let tutorialId: number;

const fixture = (path: string) => readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8');

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  const form = multipart({}, [formFile(fixture('submissions/tutorial_w_repeats.csv'), 'tutorial_w_repeats.csv')]);
  const published = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: form.payload, headers: { ...bob.auth, ...form.headers } });
  assert.equal(published.statusCode, 201, published.body);
  tutorialId = Number(published.json().formid);
  // onadata's worked example (§3.10) forces the submission time to 2013-02-18 15:54:01Z.
  server.clock.offsetMs = Date.parse('2013-02-18T15:54:01Z') - Date.now();
  const body = multipart({}, [{ name: 'xml_submission_file', fileName: 'submission.xml', content: fixture('submissions/tutorial_w_repeats.xml'), contentType: 'text/xml' }]);
  const submitted = await server.app.inject({ method: 'POST', url: `/${bob.username}/submission`, payload: body.payload, headers: { ...bob.auth, ...body.headers } });
  assert.equal(submitted.statusCode, 201, submitted.body);
  server.clock.offsetMs = 0;
});
after(() => server.close());

const MAIN_HEADER = [
  'name', 'age', 'picture', 'has_children', 'gps', '_gps_latitude', '_gps_longitude', '_gps_altitude', '_gps_precision',
  'web_browsers', 'web_browsers/firefox', 'web_browsers/chrome', 'web_browsers/ie', 'web_browsers/safari', 'meta/instanceID',
  '_id', '_uuid', '_submission_time', '_index', '_parent_table_name', '_parent_index', '_tags', '_notes', '_version',
  '_duration', '_submitted_by', '_last_edited_by',
];
const CHILDREN_HEADER = [
  'children/childs_name', 'children/childs_age', '_id', '_uuid', '_submission_time', '_index', '_parent_table_name',
  '_parent_index', '_tags', '_notes', '_version', '_duration', '_submitted_by', '_last_edited_by',
];

function rows(book: XLSX.WorkBook, name: string): unknown[][] {
  const sheet = book.Sheets[name];
  assert.ok(sheet, `sheet ${name}`);
  return XLSX.utils.sheet_to_json(sheet, { header: 1, raw: true, defval: null });
}

async function recordId(): Promise<number> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/data/${tutorialId}`, headers: bob.auth });
  return Number(res.json()[0]._id);
}

function expectTutorial(book: XLSX.WorkBook, id: number): void {
  assert.deepEqual(book.SheetNames, ['tutorial_w_repeats', 'children']);
  const main = rows(book, 'tutorial_w_repeats');
  assert.deepEqual(main[0], MAIN_HEADER);
  // _submission_time is a date cell: SheetJS hands it over as a Date or as the serial number.
  const submitted = main[1]?.[17];
  const serial = 41323 + (15 * 3600 + 54 * 60 + 1) / 86400;
  if (submitted instanceof Date) assert.equal(submitted.toISOString(), '2013-02-18T15:54:01.000Z');
  else assert.ok(typeof submitted === 'number' && Math.abs(submitted - serial) < 1e-9, String(submitted));
  main[1]?.splice(17, 1, 'date');
  assert.deepEqual(main[1], [
    'Bob', 25, null, '1', '-1.2625621 36.7921711 0.0 20.0', -1.2625621, 36.7921711, 0, 20,
    null, null, null, null, null, 'uuid:b31c6ac2-b8ca-4180-914f-c844fa10ed3b',
    id, 'b31c6ac2-b8ca-4180-914f-c844fa10ed3b', 'date', 1, null, -1, null, null, '2014111',
    null, 'bob', null,
  ]);
  assert.equal(main.length, 2);
  const children = rows(book, 'children');
  assert.deepEqual(children, [
    CHILDREN_HEADER,
    ['Tom', 12, null, null, null, 1, 'tutorial_w_repeats', 1, null, null, null, null, null, null],
    ['Dick', 5, null, null, null, 2, 'tutorial_w_repeats', 1, null, null, null, null, null, null],
  ]);
}

describe('spreadsheet downloads', () => {
  test('xlsx: one sheet per section with onadata’s columns, typed values and a real date (§3.3, §3.10)', async () => {
    const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${tutorialId}.xlsx`, headers: bob.auth });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /spreadsheetml/);
    assert.match(String(res.headers['content-disposition']), /tutorial_w_repeats-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}\.xlsx/);
    const book = XLSX.read(res.rawPayload, { type: 'buffer', cellNF: true });
    expectTutorial(book, await recordId());
    assert.equal(book.Sheets.tutorial_w_repeats?.R2?.z, 'yyyy-mm-dd hh:mm:ss');
  });

  test('xls: the same sheets and rows in a legacy Excel file that our BIFF8 reader opens too', async () => {
    const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${tutorialId}.xls`, headers: bob.auth });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /application\/vnd\.ms-excel/);
    expectTutorial(XLSX.read(res.rawPayload, { type: 'buffer' }), await recordId());
    const ours = readBiff8(res.rawPayload);
    assert.deepEqual(ours.sheets.map((sheet) => sheet.name), ['tutorial_w_repeats', 'children']);
    assert.equal(ours.sheets[1]?.grid()[2]?.[0], 'Dick');
  });

  test('remove_group_name drops the group prefixes from the headers', async () => {
    const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${tutorialId}.xlsx?remove_group_name=true`, headers: bob.auth });
    assert.equal(res.statusCode, 200, res.body);
    const book = XLSX.read(res.rawPayload, { type: 'buffer' });
    assert.deepEqual(rows(book, 'children')[0]?.slice(0, 2), ['childs_name', 'childs_age']);
    assert.equal(rows(book, 'tutorial_w_repeats')[0]?.[14], 'instanceID');
  });
});
