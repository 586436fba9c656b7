// A flat CSV of more records than one database page (500), with gaps in `_id` from deletions
// and a query: every live matching record appears exactly once, in `_id` order. On PostgreSQL
// the pages are read as independent `_id` ranges several at a time (source.ts rangedPages); on
// PGlite page after page. A csvzip and an xlsx read one smaller page after another (serialPages),
// the first page cut into pieces; on PostgreSQL the pieces share the buffer the page was read into
// by COPY, which must not be read into again before the last piece is written.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Papa from 'papaparse';
import * as XLSX from '@e965/xlsx';
import { createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { unzip } from '../zip.ts';

const RECORDS = 1234;
// pyxform's CSV layout: the sheet name in the first column.
const FORM = ['survey,,,', ',type,name,label', ',integer,n,Number', ',text,word,Word', ''].join('\n');

let server: TestServer;
let bob: TestUser;
let formId: number;

before(async () => {
  server = await startTestServer({ IMPORT_ASYNC_THRESHOLD: '100000000' });
  bob = await createUser(server.app, 'bob');
  const form = multipart({}, [formFile(FORM, 'paging.csv')]);
  const published = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: form.payload, headers: { ...bob.auth, ...form.headers } });
  assert.equal(published.statusCode, 201, published.body);
  formId = Number(published.json().formid);
  const rows = Array.from({ length: RECORDS }, (_, i) => `${i + 1},word ${i + 1}`);
  const csv = multipart({}, [{ name: 'csv_file', fileName: 'rows.csv', content: `n,word\n${rows.join('\n')}\n`, contentType: 'text/csv' }]);
  const imported = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/csv_import`, payload: csv.payload, headers: { ...bob.auth, ...csv.headers } });
  assert.equal(imported.statusCode, 200, imported.body);
  assert.equal(imported.json().additions, RECORDS);
});

after(async () => {
  await server.close();
});

async function exportedRows(query?: string): Promise<Array<Record<string, string>>> {
  const url = `/api/v1/forms/${formId}.csv${query ? `?query=${encodeURIComponent(query)}` : ''}`;
  const res = await server.app.inject({ method: 'GET', url, headers: bob.auth });
  assert.equal(res.statusCode, 200, res.body);
  return Papa.parse<Record<string, string>>(res.body, { header: true, skipEmptyLines: true }).data;
}

async function liveIds(query?: string): Promise<number[]> {
  const filter = query ? `&query=${encodeURIComponent(query)}` : '';
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?fields=${encodeURIComponent('["_id"]')}&sort=${encodeURIComponent('{"_id": 1}')}${filter}`, headers: bob.auth });
  assert.equal(res.statusCode, 200, res.body);
  return (res.json() as Array<{ _id: number }>).map((r) => r._id);
}

test('a CSV export of several pages holds every live record once, in _id order, across deletions', async () => {
  const ids = await liveIds();
  assert.equal(ids.length, RECORDS);
  // Gaps inside the first, a middle and the last page.
  const deleted = [ids[3], ids[499], ids[500], ids[777], ids[RECORDS - 1]].map(Number);
  for (const id of deleted) {
    const res = await server.app.inject({ method: 'DELETE', url: `/api/v1/data/${formId}/${id}`, headers: bob.auth });
    assert.equal(res.statusCode, 204, res.body);
  }
  const rows = await exportedRows();
  const expected = ids.filter((id) => !deleted.includes(id));
  assert.deepEqual(rows.map((r) => Number(r['_id'])), expected);
  assert.deepEqual(
    rows.map((r) => r['n']),
    expected.map((id) => String(ids.indexOf(id) + 1)),
  );
});

test('a query restricts a many-page export to the records the data API matches, in _id order', async () => {
  const query = '{"n": {"$gt": 600}}';
  const rows = await exportedRows(query);
  const expected = await liveIds(query);
  assert.ok(expected.length > 500, `${expected.length} matches: more than one page`);
  assert.deepEqual(rows.map((r) => Number(r['_id'])), expected);
  assert.ok(rows.every((r) => Number(r['n']) > 600));
});

test('a csvzip of several pages holds every live record once, in _id order, across deletions', async () => {
  const ids = await liveIds();
  // Gaps inside the first page's pieces, at a piece's edge and in a later page.
  const deleted = [ids[0], ids[99], ids[100], ids[650], ids[ids.length - 2]].map(Number);
  for (const id of deleted) {
    const res = await server.app.inject({ method: 'DELETE', url: `/api/v1/data/${formId}/${id}`, headers: bob.auth });
    assert.equal(res.statusCode, 204, res.body);
  }
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.csvzip`, headers: bob.auth });
  assert.equal(res.statusCode, 200, res.body);
  const files = await unzip(res.rawPayload);
  const [text = ''] = [...files.values()].map((bytes) => bytes.toString('utf8'));
  const rows = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true }).data;
  const expected = ids.filter((id) => !deleted.includes(id));
  assert.ok(expected.length > 1000);
  assert.deepEqual(rows.map((r) => Number(r['_id'])), expected);
  assert.deepEqual(rows.map((r) => Number(r['_index'])), expected.map((_, i) => i + 1));
});

test('an xlsx of several pages holds every live record once, in _id order, its first page used in pieces', async () => {
  const ids = await liveIds();
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.xlsx`, headers: bob.auth });
  assert.equal(res.statusCode, 200, res.body);
  const book = XLSX.read(res.rawPayload, { type: 'buffer' });
  const sheet = book.Sheets[book.SheetNames[0] ?? ''];
  assert.ok(sheet);
  const rows = XLSX.utils.sheet_to_json<Record<string, unknown>>(sheet);
  assert.ok(ids.length > 1000);
  assert.deepEqual(rows.map((r) => Number(r['_id'])), ids);
  assert.ok(rows.every((r) => r['word'] === `word ${String(r['n'])}`));
});
