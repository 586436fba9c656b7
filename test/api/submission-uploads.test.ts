// Submission bodies up to 1 MiB are read whole and split in memory; larger ones stream through
// the multipart parser. Both give the same records, attachments and limits.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createUser, multipart, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';

let server: TestServer;
let bob: TestUser;
let formId: number;
const UPLOAD_LIMIT = 3 * 1024 * 1024;

function photo(bytes: number): Buffer {
  return Buffer.alloc(bytes, 0xab);
}

async function submit(uuid: string, image: Buffer) {
  const body = multipart({}, [
    { name: 'xml_submission_file', fileName: 'submission.xml', content: householdXml({ uuid, photo: 'photo.png' }), contentType: 'text/xml' },
    { name: 'photo.png', fileName: 'photo.png', content: image, contentType: 'image/png' },
  ]);
  return server.app.inject({ method: 'POST', url: '/bob/submission', payload: body.payload, headers: body.headers });
}

async function attachmentSizes(uuid: string): Promise<number[]> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?query=${encodeURIComponent(JSON.stringify({ _uuid: uuid }))}`, headers: bob.auth });
  const [record] = res.json() as Array<{ _attachments: Array<{ download_url: string }> }>;
  assert.ok(record);
  const sizes: number[] = [];
  for (const attachment of record._attachments) {
    const file = await server.app.inject({ method: 'GET', url: attachment.download_url.replace('http://testserver', ''), headers: bob.auth });
    sizes.push(file.rawPayload.byteLength);
  }
  return sizes;
}

before(async () => {
  server = await startTestServer({ UPLOAD_LIMIT: String(UPLOAD_LIMIT) });
  bob = await createUser(server.app, 'bob');
  formId = await publishForm(server.app, bob, formFile(HOUSEHOLD_CSV, 'household.csv'));
});
after(() => server.close());

describe('submission bodies', () => {
  test('a small body (read whole) and a large one (streamed) store the record and its photo alike', async () => {
    const small = randomUUID();
    const large = randomUUID();
    assert.equal((await submit(small, photo(10_000))).statusCode, 201);
    assert.equal((await submit(large, photo(2 * 1024 * 1024))).statusCode, 201);
    assert.deepEqual(await attachmentSizes(small), [10_000]);
    assert.deepEqual(await attachmentSizes(large), [2 * 1024 * 1024]);
  });

  test('a file over UPLOAD_LIMIT is a 413 whichever way the body is read', async () => {
    const tooLarge = await submit(randomUUID(), photo(UPLOAD_LIMIT + 1));
    assert.equal(tooLarge.statusCode, 413);
    assert.match(tooLarge.body, /too large/);
    const strict = await startTestServer({ UPLOAD_LIMIT: '5000' });
    try {
      const owner = await createUser(strict.app, 'bob');
      const form = multipart({}, [formFile(HOUSEHOLD_CSV, 'household.csv')]);
      assert.equal((await strict.app.inject({ method: 'POST', url: '/api/v1/forms', payload: form.payload, headers: { ...owner.auth, ...form.headers } })).statusCode, 201);
      const body = multipart({}, [
        { name: 'xml_submission_file', fileName: 'submission.xml', content: householdXml({ uuid: randomUUID(), photo: 'photo.png' }), contentType: 'text/xml' },
        { name: 'photo.png', fileName: 'photo.png', content: photo(6000), contentType: 'image/png' },
      ]);
      const small = await strict.app.inject({ method: 'POST', url: '/bob/submission', payload: body.payload, headers: body.headers });
      assert.equal(small.statusCode, 413);
      assert.match(small.body, /too large/);
    } finally {
      await strict.close();
    }
  });

  test('a malformed multipart body is a 400 and stores nothing', async () => {
    const body = multipart({}, [{ name: 'xml_submission_file', fileName: 'submission.xml', content: householdXml({ uuid: randomUUID() }), contentType: 'text/xml' }]);
    const cut = body.payload.subarray(0, body.payload.byteLength - 20);
    const res = await server.app.inject({ method: 'POST', url: '/bob/submission', payload: cut, headers: body.headers });
    assert.equal(res.statusCode, 400);
    assert.match(res.body, /multipart body is malformed/);
  });
});
