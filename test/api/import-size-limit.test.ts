// A record import larger than UPLOAD_LIMIT is refused as too large (413, onadata's {"detail": …}
// shape), on both import endpoints, and stores nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, multipart, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { csvForm, formFile } from '../fixtures/forms.ts';

const LIMIT = 4096;

let server: TestServer;
let bob: TestUser;
let formId: number;

before(async () => {
  server = await startTestServer({ UPLOAD_LIMIT: String(LIMIT), WORKERS: '0' });
  bob = await createUser(server.app, 'bob');
  formId = await publishForm(server.app, bob, formFile(csvForm()));
});
after(() => server.close());

function csvOf(rows: number): string {
  const lines = ['name,age'];
  for (let i = 0; i < rows; i++) lines.push(`Person number ${i},${20 + (i % 50)}`);
  return lines.join('\n') + '\n';
}

async function upload(endpoint: string, field: string, fileName: string, content: string) {
  const body = multipart({}, [{ name: field, fileName, content, contentType: 'text/csv' }]);
  return server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/${endpoint}`, payload: body.payload, headers: { ...bob.auth, ...body.headers } });
}

async function recordCount(): Promise<number> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}`, headers: bob.auth });
  return res.json<unknown[]>().length;
}

test('a CSV over the upload limit is answered 413 on csv_import and on import', async () => {
  const big = csvOf(400);
  assert.ok(big.length > LIMIT);
  for (const [endpoint, field] of [
    ['csv_import', 'csv_file'],
    ['import', 'csv_file'],
    ['import', 'xls_file'],
  ] as const) {
    const res = await upload(endpoint, field, 'big.csv', big);
    assert.equal(res.statusCode, 413, `${endpoint} ${field}: ${res.body}`);
    assert.deepEqual(res.json(), { detail: `The file "big.csv" is too large: the limit is ${LIMIT} bytes.` });
  }
  assert.equal(await recordCount(), 0);
});

test('a CSV within the limit is still imported', async () => {
  const res = await upload('csv_import', 'csv_file', 'small.csv', csvOf(3));
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(await recordCount(), 3);
});
