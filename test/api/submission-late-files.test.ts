// A re-sent record (same instanceID: a 202 duplicate) may bring the files that had not arrived,
// as ODK Collect sends a record with many files in several posts of the same instance. It may
// not replace a file already stored, attach files its stored version does not have (a different
// XML under the same instanceID), or, from a role that changes only its own records, add files to
// another submitter's record.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createUser, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';

let server: TestServer;
let bob: TestUser;
let alice: TestUser;
let formId: number;

const png = (seed: number) => Buffer.from(`89504e470d0a1a0a${seed.toString(16).padStart(2, '0')}`, 'hex');

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  alice = await createUser(server.app, 'alice');
  formId = await publishForm(server.app, bob, formFile(HOUSEHOLD_CSV, 'household.csv'));
  const share = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/share`, payload: { username: 'alice', role: 'dataentry-minor' }, headers: bob.auth });
  assert.equal(share.statusCode, 204, share.body);
});
after(() => server.close());

async function post(user: TestUser, xml: string, files: Array<{ name: string; content: Buffer }> = []) {
  return postSubmission(server.app, '/bob/submission', xml, user.auth, files.map((f) => ({ ...f, type: 'image/png' })));
}

/** The stored files of the record with this uuid: name → bytes. */
async function storedFiles(uuid: string): Promise<Map<string, Buffer>> {
  const query = encodeURIComponent(JSON.stringify({ _uuid: uuid }));
  const [record] = (await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?query=${query}`, headers: bob.auth })).json() as Array<{
    _attachments: Array<{ name: string; download_url: string }>;
  }>;
  const files = new Map<string, Buffer>();
  for (const a of record?._attachments ?? []) {
    const res = await server.app.inject({ method: 'GET', url: a.download_url.replace('http://testserver', ''), headers: bob.auth });
    files.set(a.name, Buffer.from(res.rawPayload));
  }
  return files;
}

describe('files brought by a re-sent record', () => {
  test('the same instance brings its missing file; a second copy never replaces it', async () => {
    const uuid = randomUUID();
    const xml = householdXml({ uuid, photo: 'late.png' });
    assert.equal((await post(bob, xml)).statusCode, 201);
    assert.equal((await post(bob, xml, [{ name: 'late.png', content: png(1) }])).statusCode, 202);
    assert.deepEqual(await storedFiles(uuid), new Map([['late.png', png(1)]]));
    assert.equal((await post(bob, xml, [{ name: 'late.png', content: png(2) }])).statusCode, 202);
    assert.deepEqual(await storedFiles(uuid), new Map([['late.png', png(1)]]), 'the stored file is kept');
  });

  test('a different XML under a stored instanceID adds no file', async () => {
    const uuid = randomUUID();
    assert.equal((await post(bob, householdXml({ uuid, name: 'Kept', photo: '' }))).statusCode, 201);
    const other = householdXml({ uuid, name: 'Intruder', photo: 'planted.png' });
    assert.equal((await post(bob, other, [{ name: 'planted.png', content: png(3) }])).statusCode, 202);
    assert.deepEqual(await storedFiles(uuid), new Map());
  });

  test('a role that changes only its own records adds no file to another submitter’s record', async () => {
    const uuid = randomUUID();
    const xml = householdXml({ uuid, photo: 'bobs.png' });
    assert.equal((await post(bob, xml)).statusCode, 201);
    const refused = await post(alice, xml, [{ name: 'bobs.png', content: png(4) }]);
    assert.equal(refused.statusCode, 403, refused.body);
    assert.deepEqual(await storedFiles(uuid), new Map());
    // Her own record takes its late file.
    const own = randomUUID();
    const ownXml = householdXml({ uuid: own, photo: 'alices.png' });
    assert.equal((await post(alice, ownXml)).statusCode, 201);
    assert.equal((await post(alice, ownXml, [{ name: 'alices.png', content: png(5) }])).statusCode, 202);
    assert.deepEqual(await storedFiles(own), new Map([['alices.png', png(5)]]));
  });
});
