// Links to an attachment carry its file name percent-encoded (as encodeURIComponent does), so a
// name with spaces, non-ASCII letters, # or & still makes one valid URL that downloads the file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createUser, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';

const NAME = 'photo é #1&x.jpg';
const ENCODED = 'photo%20%C3%A9%20%231%26x.jpg';
const PHOTO = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4, 5]);

let server: TestServer;
let bob: TestUser;
let formId: number;

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  formId = await publishForm(server.app, bob, formFile(HOUSEHOLD_CSV));
  const xml = householdXml({ uuid: randomUUID(), photo: NAME.replace('&', '&amp;') });
  const res = await postSubmission(server.app, '/bob/submission', xml, bob.auth, [{ name: NAME, content: PHOTO, type: 'image/jpeg' }]);
  assert.equal(res.statusCode, 201, res.body);
});
after(() => server.close());

test('download_url in a record’s _attachments is percent-encoded and downloads the file', async () => {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}`, headers: bob.auth });
  const [record] = res.json<Array<{ _attachments: Array<{ id: number; name: string; download_url: string }> }>>();
  const attachment = record?._attachments[0];
  assert.ok(attachment);
  assert.equal(attachment.name, NAME);
  assert.equal(attachment.download_url, `http://testserver/api/v1/files/${attachment.id}?filename=${ENCODED}`);
  const url = new URL(attachment.download_url);
  assert.equal(url.searchParams.get('filename'), NAME);
  const file = await server.app.inject({ method: 'GET', url: url.pathname + url.search, headers: bob.auth });
  assert.equal(file.statusCode, 200);
  assert.deepEqual(file.rawPayload, PHOTO);
});

test('a CSV export links the photo by the same encoded address', async () => {
  const csv = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.csv`, headers: bob.auth });
  assert.equal(csv.statusCode, 200, csv.body);
  const link = /http:\/\/testserver\/api\/v1\/files\/\d+\?filename=[^,\r\n]*/.exec(csv.body)?.[0];
  assert.ok(link, csv.body);
  assert.ok(link.endsWith(`?filename=${ENCODED}`), link);
});

test('a record’s _attachments are the same in a list, in pages, sorted, and read alone', async () => {
  // Records without files around the one with a file: a list reads a range of records at once.
  for (let i = 0; i < 3; i++) {
    const res = await postSubmission(server.app, '/bob/submission', householdXml({ uuid: randomUUID() }), bob.auth);
    assert.equal(res.statusCode, 201, res.body);
  }
  type Listed = { _id: number; _attachments: Array<Record<string, unknown>> };
  const get = async (url: string) => {
    const res = await server.app.inject({ method: 'GET', url, headers: bob.auth });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Listed | Listed[]>();
  };
  const list = (await get(`/api/v1/data/${formId}`)) as Listed[];
  const withFile = list.find((r) => r._attachments.length > 0);
  assert.ok(withFile);
  const [attachment] = withFile._attachments;
  assert.deepEqual(Object.keys(attachment ?? {}).sort(), ['download_url', 'filename', 'id', 'instance', 'mimetype', 'name', 'xform']);
  assert.equal(attachment?.['instance'], withFile._id);
  assert.equal(attachment?.['xform'], formId);
  assert.equal(attachment?.['mimetype'], 'image/jpeg');
  for (const other of list) if (other !== withFile) assert.deepEqual(other._attachments, []);
  const alone = (await get(`/api/v1/data/${formId}/${withFile._id}`)) as Listed;
  assert.deepEqual(alone._attachments, withFile._attachments);
  const paged = (await get(`/api/v1/data/${formId}?page=1&page_size=2`)) as Listed[];
  const sorted = (await get(`/api/v1/data/${formId}?sort=${encodeURIComponent('{"_id":-1}')}`)) as Listed[];
  for (const records of [paged, sorted]) {
    for (const record of records) assert.deepEqual(record._attachments, list.find((r) => r._id === record._id)?._attachments);
  }
});
