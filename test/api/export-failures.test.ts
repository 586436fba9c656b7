// An export that fails before its first byte (here: its temporary files cannot be made, as on a
// full or read-only disk) answers the JSON error shape, without the attachment header and file
// type the download had already set, so a client never saves an error as a spreadsheet.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUser, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';

const FORM = ['survey,,,', ',type,name,label', ',text,name,Name', ',begin repeat,kids,Kids', ',text,kid,Kid', ',end repeat,,', 'settings,,,', ',form_title,form_id,version', ',Failing,failing,2026112502'].join('\n');

let server: TestServer;
let dir: string;
let bob: TestUser;
let formId: number;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gather-export-failures-'));
  // DATA_DIR is a file: nothing can be made under it.
  const dataDir = join(dir, 'not-a-directory');
  writeFileSync(dataDir, '');
  server = await startTestServer({ DATA_DIR: dataDir });
  bob = await createUser(server.app, 'bob');
  formId = await publishForm(server.app, bob, formFile(FORM, 'failing.csv'));
  const res = await server.app.inject({
    method: 'POST',
    url: '/api/v1/submissions',
    headers: { ...bob.auth, 'content-type': 'application/json' },
    payload: { id: 'failing', submission: { name: 'Ann', kids: [{ 'kids/kid': 'Bo' }] } },
  });
  assert.equal(res.statusCode, 201, res.body);
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a download whose temporary files cannot be made answers a JSON 500 without the attachment header', async () => {
  // CSV needs no temporary file: it still downloads.
  const csv = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.csv`, headers: bob.auth });
  assert.equal(csv.statusCode, 200, csv.body);
  assert.match(String(csv.headers['content-disposition']), /attachment/);
  for (const suffix of ['xls', 'xlsx', 'csvzip']) {
    const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.${suffix}`, headers: bob.auth });
    assert.equal(res.statusCode, 500, `${suffix}: ${res.body}`);
    assert.match(String(res.headers['content-type']), /^application\/json/, suffix);
    assert.equal(res.headers['content-disposition'], undefined, suffix);
    assert.equal(typeof (JSON.parse(res.body) as Record<string, unknown>)['detail'], 'string', `${suffix}: ${res.body}`);
  }
});
