// A record import larger than UPLOAD_LIMIT is refused as too large (413, onadata's {"detail": …}
// shape), on both import endpoints, and stores nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, multipart, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { csvForm, formFile } from '../fixtures/forms.ts';

const LIMIT = 4096;

let server: TestServer;
let bob: TestUser;

before(async () => {
  server = await startTestServer({ UPLOAD_LIMIT: String(LIMIT), WORKERS: '0' });
  bob = await createUser(server.app, 'bob');
});
after(() => server.close());

function csvOf(rows: number): string {
  const lines = ['name,age'];
  for (let i = 0; i < rows; i++) lines.push(`Person number ${i},${20 + (i % 50)}`);
  return lines.join('\n') + '\n';
}

/** A form of its own to each test: one test counts the records another imports. */
let forms = 0;
function ownForm(): Promise<number> {
  return publishForm(server.app, bob, formFile(csvForm({ id: `household_survey_${++forms}` })));
}

async function upload(formId: number, endpoint: string, field: string, fileName: string, content: string) {
  const body = multipart({}, [{ name: field, fileName, content, contentType: 'text/csv' }]);
  return server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/${endpoint}`, payload: body.payload, headers: { ...bob.auth, ...body.headers } });
}

async function recordCount(formId: number): Promise<number> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}`, headers: bob.auth });
  return res.json<unknown[]>().length;
}

test('a CSV over the upload limit is answered 413 on csv_import and on import', async () => {
  const formId = await ownForm();
  const big = csvOf(400);
  assert.ok(big.length > LIMIT);
  for (const [endpoint, field] of [
    ['csv_import', 'csv_file'],
    ['import', 'csv_file'],
    ['import', 'xls_file'],
  ] as const) {
    const res = await upload(formId, endpoint, field, 'big.csv', big);
    assert.equal(res.statusCode, 413, `${endpoint} ${field}: ${res.body}`);
    assert.deepEqual(res.json(), { detail: `The file "big.csv" is too large: the limit is ${LIMIT} bytes.` });
  }
  assert.equal(await recordCount(formId), 0);
});

test('a CSV within the limit is still imported', async () => {
  const formId = await ownForm();
  const res = await upload(formId, 'csv_import', 'csv_file', 'small.csv', csvOf(3));
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(await recordCount(formId), 3);
});
