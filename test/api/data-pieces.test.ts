// A data API list larger than the pieces it is sent in (src/modules/submissions/data.ts) arrives
// whole: every record once, in order, with characters beyond ASCII intact.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createUser, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';

let server: TestServer;
let bob: TestUser;
let formId: number;
const RECORDS = 40;
// About 4 KB a record: 40 of them make a list several times the 32 K-character pieces.
const note = (n: number): string => `${n} ` + 'Zoë — 名前 🌍 '.repeat(200);

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  const csv = ['survey,,,', ',type,name,label', ',text,note,Note', 'settings,,,', ',form_id,,', ',long_notes,,'].join('\n');
  formId = await publishForm(server.app, bob, formFile(csv, 'long_notes.csv'));
  for (let n = 0; n < RECORDS; n++) {
    const xml = `<?xml version="1.0"?><long_notes id="long_notes"><note>${note(n)}</note><meta><instanceID>uuid:${randomUUID()}</instanceID></meta></long_notes>`;
    const res = await postSubmission(server.app, '/bob/submission', xml, bob.auth);
    assert.equal(res.statusCode, 201, res.body);
  }
});
after(() => server.close());

test('every record in one response, and a page of them, arrive whole and in order', async () => {
  const all = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}`, headers: bob.auth });
  assert.equal(all.statusCode, 200);
  const records = all.json<Array<Record<string, unknown>>>();
  assert.deepEqual(records.map((r) => r['note']), Array.from({ length: RECORDS }, (_, n) => note(n)));
  const page = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?page=2&page_size=15`, headers: bob.auth });
  assert.equal(page.statusCode, 200);
  assert.deepEqual(page.json<Array<Record<string, unknown>>>().map((r) => r['note']), Array.from({ length: 15 }, (_, n) => note(n + 15)));
});
