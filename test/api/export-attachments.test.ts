// The attachments export (`zip`): every file attached to the records in scope, under
// `<id_string>/<record _uuid>/<file name>`, by direct download from /forms and /data and by job,
// restricted by `query` like every format, and refused to roles that may not export.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { basic, createUser, multipart, publishForm, startTestServer, type MultipartFile, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { unzip } from '../zip.ts';
import { setFormRole } from '../../src/modules/forms/repository.ts';
import { runOneJob } from '../../src/jobs/worker.ts';
import { buildJobRegistry } from '../../src/compose.ts';

const registry = buildJobRegistry();
const FORM = [
  'survey,,,',
  ',type,name,label',
  ',text,name,Name',
  ',image,photo,Photo',
  ',file,doc,Document',
  'settings,,,',
  ',form_title,form_id,version',
  ',Market stalls,stalls,2026112501',
].join('\n');

function stallXml(uuid: string, name: string, photo = '', doc = '', id = 'stalls'): string {
  return `<?xml version="1.0"?><stalls id="${id}" version="2026112501"><name>${name}</name><photo>${photo}</photo><doc>${doc}</doc><meta><instanceID>uuid:${uuid}</instanceID></meta></stalls>`;
}
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, ...Array.from({ length: 3000 }, (_, i) => (i * 31) % 256)]);
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

let server: TestServer;
let dataDir: string;
let bob: TestUser;
let formId: number;
let emptyFormId: number;
const uuids = { ann: randomUUID(), ben: randomUUID(), cat: randomUUID() };

async function submit(xml: string, media: MultipartFile[] = []): Promise<void> {
  const body = multipart({}, [{ name: 'xml_submission_file', fileName: 's.xml', content: xml, contentType: 'text/xml' }, ...media]);
  const res = await server.app.inject({ method: 'POST', url: '/bob/submission', payload: body.payload, headers: { authorization: basic('bob', bob.password), ...body.headers } });
  assert.equal(res.statusCode, 201, res.body);
}

const file = (fileName: string, content: Buffer | string, contentType: string): MultipartFile => ({ name: fileName, fileName, content, contentType });

async function download(url: string, auth: Record<string, string> = bob.auth) {
  return server.app.inject({ method: 'GET', url, headers: auth });
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gather-export-attachments-'));
  server = await startTestServer({ DATA_DIR: dataDir });
  bob = await createUser(server.app, 'bob');
  formId = await publishForm(server.app, bob, formFile(FORM, 'stalls.csv'));
  // Ann: a photo and a text document; Ben: a photo of the same name as Ann's; Cat: no file.
  await submit(stallXml(uuids.ann, 'Ann', 'photo.jpg', 'notes.csv'), [file('photo.jpg', JPEG, 'image/jpeg'), file('notes.csv', 'a,b\n1,2\n', 'text/csv')]);
  await submit(stallXml(uuids.ben, 'Ben', 'photo.jpg'), [file('photo.jpg', PNG, 'image/png')]);
  await submit(stallXml(uuids.cat, 'Cat'));
  const other = ['survey,,,', ',type,name,label', ',text,name,Name', 'settings,,,', ',form_title,form_id,version', ',Empty,empty_form,1'].join('\n');
  emptyFormId = await publishForm(server.app, bob, formFile(other, 'empty_form.csv'));
});
after(async () => {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('attachments zip', () => {
  test('a direct download holds every attached file, a folder per record, files compressed already stored as they are', async () => {
    for (const url of [`/api/v1/forms/${formId}.zip`, `/api/v1/data/${formId}.zip`]) {
      const res = await download(url);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['content-type'], 'application/zip');
      assert.match(String(res.headers['content-disposition']), /^attachment; filename="download\.zip"; filename\*=UTF-8''stalls-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\.zip$/);
      const files = await unzip(res.rawPayload);
      assert.deepEqual([...files.keys()], [`stalls/${uuids.ann}/photo.jpg`, `stalls/${uuids.ann}/notes.csv`, `stalls/${uuids.ben}/photo.jpg`], url);
      assert.ok(files.get(`stalls/${uuids.ann}/photo.jpg`)?.equals(JPEG));
      assert.equal(files.get(`stalls/${uuids.ann}/notes.csv`)?.toString(), 'a,b\n1,2\n');
      assert.ok(files.get(`stalls/${uuids.ben}/photo.jpg`)?.equals(PNG));
    }
  });

  test('query restricts the records whose files are exported', async () => {
    const res = await download(`/api/v1/forms/${formId}.zip?query=${encodeURIComponent('{"name": "Ben"}')}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual([...(await unzip(res.rawPayload)).keys()], [`stalls/${uuids.ben}/photo.jpg`]);
    const bad = await download(`/api/v1/forms/${formId}.zip?query=${encodeURIComponent('{"name":')}`);
    assert.equal(bad.statusCode, 400, bad.body);
    assert.match(String(bad.headers['content-type']), /^application\/json/);
  });

  test('a form without files gives an empty zip that unpacks', async () => {
    const res = await download(`/api/v1/forms/${emptyFormId}.zip`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await unzip(res.rawPayload)).size, 0);
  });

  test('export_async?format=zip makes the same file as a job, listed with type zip', async () => {
    const start = await download(`/api/v1/forms/${formId}/export_async?format=zip`);
    assert.equal(start.statusCode, 202, start.body);
    while (await runOneJob(server.deps, registry, { log: () => {} })) {
      // until the queue is empty
    }
    const done = await download(`/api/v1/forms/${formId}/export_async?job_uuid=${start.json().job_uuid}`);
    assert.equal(done.json().job_status, 'SUCCESS', done.body);
    const exportUrl = String(done.json().export_url).replace('http://testserver', '');
    const fileRes = await download(exportUrl);
    assert.equal(fileRes.statusCode, 200);
    assert.equal(fileRes.headers['content-type'], 'application/zip');
    assert.equal((await unzip(fileRes.rawPayload)).size, 3);
    const listed = (await download(`/api/v1/export?xform=${formId}`)).json() as Array<{ type: string; export_url: string }>;
    assert.deepEqual(
      listed.map((e) => e.type),
      ['zip'],
    );
    assert.match(listed[0]?.export_url ?? '', /\/api\/v1\/export\/\d+\.zip$/);
  });

  test('a file that arrives late with a re-sent record makes a stored export stale', async () => {
    // A form of its own: the exports stored here and Dee's record would change what the other tests list.
    const formId = await publishForm(server.app, bob, formFile(FORM.replace(',Market stalls,stalls,', ',Market stalls,stalls_late,'), 'stalls_late.csv'));
    const late = randomUUID();
    await submit(stallXml(late, 'Dee', 'late.jpg', '', 'stalls_late'));
    /** An export_async for the zip: a new job run to its end, or the stored export reused. */
    const job = async (): Promise<{ reused: boolean; files: Map<string, Buffer>; csv: string }> => {
      const start = await download(`/api/v1/forms/${formId}/export_async?format=zip`);
      assert.equal(start.statusCode, 202, start.body);
      const reused = start.json().job_status === 'SUCCESS';
      let exportUrl = String(start.json().export_url);
      if (!reused) {
        while (await runOneJob(server.deps, registry, { log: () => {} })) {
          // until the queue is empty
        }
        const done = await download(`/api/v1/forms/${formId}/export_async?job_uuid=${start.json().job_uuid}`);
        assert.equal(done.json().job_status, 'SUCCESS', done.body);
        exportUrl = String(done.json().export_url);
      }
      const zip = await download(exportUrl.replace('http://testserver', ''));
      const csv = await download(`/api/v1/forms/${formId}.csv?query=${encodeURIComponent('{"name": "Dee"}')}`);
      return { reused, files: await unzip(zip.rawPayload), csv: csv.body };
    };
    const before = await job();
    assert.equal(before.files.has(`stalls_late/${late}/late.jpg`), false);
    assert.equal(before.reused, false);
    assert.equal((await job()).reused, true, 'nothing changed: the stored export is reused');
    // ODK Collect sends the record again with the file it could not send before: 202 duplicate.
    const body = multipart({}, [
      { name: 'xml_submission_file', fileName: 's.xml', content: stallXml(late, 'Dee', 'late.jpg', '', 'stalls_late'), contentType: 'text/xml' },
      file('late.jpg', JPEG, 'image/jpeg'),
    ]);
    const resent = await server.app.inject({ method: 'POST', url: '/bob/submission', payload: body.payload, headers: { authorization: basic('bob', bob.password), ...body.headers } });
    assert.equal(resent.statusCode, 202, resent.body);
    const afterwards = await job();
    assert.equal(afterwards.reused, false, 'the late file made the stored export stale');
    assert.ok(afterwards.files.get(`stalls_late/${late}/late.jpg`)?.equals(JPEG));
    assert.match(afterwards.csv, /,1,1,True\r?\n$/, 'the record now counts its file');
    const deleted = await server.app.inject({ method: 'DELETE', url: `/api/v1/data/${formId}/${String((await download(`/api/v1/data/${formId}?query=${encodeURIComponent('{"name": "Dee"}')}`)).json()[0]._id)}`, headers: bob.auth });
    assert.equal(deleted.statusCode, 204, deleted.body);
  });

  test('roles that may not download data cannot export the files', async () => {
    const viewer = await createUser(server.app, 'viewer');
    await setFormRole(server.deps.db, formId, viewer.id, 'readonly-no-download');
    assert.equal((await download(`/api/v1/forms/${formId}.zip`, viewer.auth)).statusCode, 403);
    assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.zip` })).statusCode, 404);
  });
});
