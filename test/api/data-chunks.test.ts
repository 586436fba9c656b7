// A data API list longer than the chunks the records are read in (src/modules/submissions/data.ts
// reads a few thousand at a time, the next while the last is sent) arrives whole: every record
// once and in order, in one response, in pages and windows across a chunk's end, and sorted the
// other way (read by id lookups rather than a range).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, multipart, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';

let server: TestServer;
let bob: TestUser;
let formId: number;
const RECORDS = 4_500;

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  const form = ['survey,,,', ',type,name,label', ',integer,n,N', 'settings,,,', ',form_id,,', ',numbered,,'].join('\n');
  formId = await publishForm(server.app, bob, formFile(form, 'numbered.csv'));
  const rows = ['n', ...Array.from({ length: RECORDS }, (_, n) => String(n))].join('\n');
  const body = multipart({}, [{ name: 'csv_file', fileName: 'rows.csv', content: Buffer.from(rows), contentType: 'text/csv' }]);
  const res = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/csv_import`, payload: body.payload, headers: { ...bob.auth, ...body.headers } });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json<{ additions: number }>().additions, RECORDS, res.body);
});
after(() => server.close());

type Row = { _id: number; n: number | string };

async function list(query: string): Promise<Row[]> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}${query}`, headers: bob.auth });
  assert.equal(res.statusCode, 200, res.body.slice(0, 300));
  return res.json<Row[]>();
}

const numbers = (rows: readonly Row[]): number[] => rows.map((row) => Number(row.n));
const range = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i);

test('every record once and in order, in one response and in pages across chunks', async () => {
  const all = await list('');
  assert.deepEqual(numbers(all), range(0, RECORDS));
  const ids = all.map((row) => row._id);
  assert.ok(ids.every((id, i) => i === 0 || id > (ids[i - 1] ?? 0)), 'ids ascend');

  assert.deepEqual(numbers(await list('?page=2&page_size=2500')), range(2500, RECORDS - 2500));
  assert.deepEqual(numbers(await list('?page=1&page_size=3000')), range(0, 3000));
  for (const start of [998, 1999, 2999, 3999]) assert.deepEqual(numbers(await list(`?start=${start}&limit=3`)), range(start, 3));
});

test('sorted the other way, the same records in reverse', async () => {
  const reversed = await list(`?sort=${encodeURIComponent('{"_id":-1}')}`);
  assert.deepEqual(numbers(reversed), range(0, RECORDS).reverse());
  const page = await list(`?sort=${encodeURIComponent('{"_id":-1}')}&page=2&page_size=2200`);
  assert.deepEqual(numbers(page), range(0, RECORDS).reverse().slice(2200, 4400));
});
