// export_async jobs, Export records (/api/v1/export) and export files, over HTTP.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { basic, createUser, multipart, startTestServer, type TestServer, type TestUser, restartableStorage } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';
import { runOneJob } from '../../src/jobs/worker.ts';
import { buildJobRegistry } from '../../src/compose.ts';
import type { AppDeps } from '../../src/context.ts';

const registry = buildJobRegistry();
const quiet = (): void => {};

async function runJobs(deps: AppDeps): Promise<void> {
  while (await runOneJob(deps, registry, { log: quiet })) {
    // until the queue is empty
  }
}

async function publish(app: FastifyInstance, user: TestUser): Promise<number> {
  const body = multipart({}, [formFile(HOUSEHOLD_CSV, 'household.csv')]);
  const res = await app.inject({ method: 'POST', url: '/api/v1/forms', payload: body.payload, headers: { ...user.auth, ...body.headers } });
  assert.equal(res.statusCode, 201, res.body);
  return Number(res.json().formid);
}

async function submit(app: FastifyInstance, user: TestUser, name: string): Promise<void> {
  const body = multipart({}, [{ name: 'xml_submission_file', fileName: 's.xml', content: householdXml({ uuid: randomUUID(), name }), contentType: 'text/xml' }]);
  const res = await app.inject({ method: 'POST', url: `/${user.username}/submission`, payload: body.payload, headers: { authorization: basic(user.username, user.password), ...body.headers } });
  assert.equal(res.statusCode, 201, res.body);
}

const path = (url: string): string => url.replace('http://testserver', '');

describe('export_async and Export records', () => {
  let server: TestServer;
  let dataDir: string;
  let alice: TestUser;
  let carol: TestUser;
  let dave: TestUser;
  const get = (url: string, user?: TestUser) => server.app.inject({ method: 'GET', url, headers: user ? user.auth : {} });

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gather-export-jobs-'));
    server = await startTestServer({ DATA_DIR: dataDir });
    alice = await createUser(server.app, 'alice');
    carol = await createUser(server.app, 'carol');
    dave = await createUser(server.app, 'dave');
  });
  after(async () => {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /**
   * A form of its own to each test, as exports are reused, listed and deleted by form; owned by an
   * account of its own, since export files are named after the form's id_string (household). It
   * has Bob's and Jane's records; alice reads it, carol and dave have roles that may not export.
   */
  let owners = 0;
  async function ownForm() {
    const owner = await createUser(server.app, `owner${++owners}`);
    const formId = await publish(server.app, owner);
    await submit(server.app, owner, 'Bob');
    await submit(server.app, owner, 'Jane');
    const exportAsync = (query: string, user: TestUser = owner) => get(`/api/v1/forms/${formId}/export_async?${query}`, user);
    const share = async (user: TestUser, role: string) => {
      const res = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/share`, payload: { username: user.username, role }, headers: owner.auth });
      assert.equal(res.statusCode, 204, res.body);
    };
    await share(alice, 'readonly');
    await share(carol, 'readonly-no-download');
    // A share lands as the role asked: the form's meta permissions may narrow it, never widen it.
    await share(dave, 'editor-no-download');
    return { owner, formId, exportAsync, share };
  }

  /** A CSV export of the owner's, made and up to date, for the tests that reuse one. */
  async function madeCsvExport(exportAsync: (query: string) => ReturnType<typeof get>): Promise<void> {
    assert.equal((await exportAsync('format=csv')).statusCode, 202);
    await runJobs(server.deps);
  }

  test('202 job_uuid, PENDING until a worker runs it, then SUCCESS with export_url; the file is the CSV download', async () => {
    const { owner, formId, exportAsync } = await ownForm();
    const start = await exportAsync('format=csv');
    assert.equal(start.statusCode, 202, start.body);
    const jobUuid: string = start.json().job_uuid;
    assert.deepEqual(Object.keys(start.json()), ['job_uuid']);
    assert.match(jobUuid, /^[0-9a-f-]{36}$/);

    const pending = await exportAsync(`job_uuid=${jobUuid}`);
    assert.equal(pending.statusCode, 202);
    assert.deepEqual(pending.json(), { job_status: 'PENDING' });

    await runJobs(server.deps);
    const done = await exportAsync(`job_uuid=${jobUuid}`);
    assert.equal(done.statusCode, 202);
    const { job_status, export_url } = done.json();
    assert.equal(job_status, 'SUCCESS');
    assert.match(export_url, /^http:\/\/testserver\/api\/v1\/export\/\d+$/);

    const file = await get(path(export_url), owner);
    assert.equal(file.statusCode, 200, file.body);
    assert.equal(file.headers['content-type'], 'application/csv');
    assert.match(String(file.headers['content-disposition']), /^attachment; filename="household-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\.csv"/);
    const direct = await get(`/api/v1/forms/${formId}.csv`, owner);
    assert.equal(direct.statusCode, 200);
    assert.equal(file.body, direct.body);
    assert.match(file.body, /^name,age,/);
    assert.equal(file.body.trim().split(/\r?\n/).length, 3);

    // The same file with the type as suffix, as the Export record's export_url gives it.
    assert.equal((await get(`${path(export_url)}.csv`, owner)).body, file.body);
    const id = Number(/(\d+)$/.exec(export_url)?.[1]);
    assert.ok(existsSync(join(dataDir, 'exports', String(formId), `${id}.csv`)));
  });

  test('an up-to-date export is reused at once; two rapid calls share one job; new data makes a new job', async () => {
    const { owner, formId, exportAsync } = await ownForm();
    await madeCsvExport(exportAsync);
    const first = (await exportAsync('format=csv')).json();
    assert.equal(first.job_status, 'SUCCESS');
    assert.match(first.export_url, /\/api\/v1\/export\/\d+$/);

    const a = await exportAsync('format=csv&remove_group_name=true');
    const b = await exportAsync('format=csv&remove_group_name=t');
    assert.equal(a.statusCode, 202);
    assert.ok(a.json().job_uuid);
    assert.equal(b.json().job_uuid, a.json().job_uuid);

    await submit(server.app, owner, 'Newcomer');
    const afterNew = await exportAsync('format=csv');
    assert.ok(afterNew.json().job_uuid, afterNew.body);
    assert.notEqual(afterNew.json().job_uuid, a.json().job_uuid);
    await runJobs(server.deps);
    const fresh = await exportAsync(`job_uuid=${afterNew.json().job_uuid}`);
    assert.equal(fresh.json().job_status, 'SUCCESS');
    assert.notEqual(fresh.json().export_url, first.export_url);
    assert.match((await get(path(fresh.json().export_url), owner)).body, /Newcomer/);

    // Deleting a record changes the data too.
    assert.equal((await exportAsync('format=csv')).json().job_status, 'SUCCESS');
    const records = (await get(`/api/v1/data/${formId}`, owner)).json() as Array<{ _id: number; name: string }>;
    const newcomer = records.find((r) => r.name === 'Newcomer');
    const deleted = await server.app.inject({ method: 'DELETE', url: `/api/v1/data/${formId}/${newcomer?._id}`, headers: owner.auth });
    assert.equal(deleted.statusCode, 204);
    const afterDelete = await exportAsync('format=csv');
    assert.ok(afterDelete.json().job_uuid, afterDelete.body);
    await runJobs(server.deps);
    const final = await exportAsync(`job_uuid=${afterDelete.json().job_uuid}`);
    assert.doesNotMatch((await get(path(final.json().export_url), owner)).body, /Newcomer/);
  });

  test('format=foo and a missing format: 403 Export format not supported; xls and xlsx are accepted', async () => {
    const { exportAsync } = await ownForm();
    for (const query of ['format=foo', '']) {
      const res = await exportAsync(query);
      assert.equal(res.statusCode, 403);
      assert.deepEqual(res.json(), { details: 'Export format not supported' });
    }
    for (const format of ['xls', 'xlsx', 'csvzip', 'savzip', 'kml', 'osm']) {
      const res = await exportAsync(`format=${format}`);
      assert.equal(res.statusCode, 202, `${format}: ${res.body}`);
    }
    await runJobs(server.deps);
  });

  test('unknown or malformed job_uuid: 400', async () => {
    const { exportAsync } = await ownForm();
    assert.equal((await exportAsync(`job_uuid=${randomUUID()}`)).statusCode, 400);
    assert.equal((await exportAsync('job_uuid=not-a-uuid')).statusCode, 400);
  });

  test('who may export: readonly yes; readonly-no-download, editor-no-download no; anonymous 401', async () => {
    const { owner, formId, exportAsync } = await ownForm();
    assert.equal((await exportAsync('format=csv', alice)).statusCode, 202);
    assert.equal((await exportAsync('format=csv', carol)).statusCode, 403);
    assert.equal((await exportAsync('format=csv', dave)).statusCode, 403);
    assert.equal((await get(`/api/v1/forms/${formId}/export_async?format=csv`)).statusCode, 401);

    await madeCsvExport(exportAsync);
    const url = path((await exportAsync('format=csv')).json().export_url);
    assert.equal((await get(url, alice)).statusCode, 200);
    assert.equal((await get(url, carol)).statusCode, 403);
    assert.equal((await get(url, dave)).statusCode, 403);
    assert.equal((await get(url)).statusCode, 404);
    assert.equal((await get('/api/v1/export/999999', owner)).statusCode, 404);
  });

  test('a job whose export fails ends in FAILURE with its error_message', async () => {
    const { owner, formId, exportAsync, share } = await ownForm();
    await share(alice, 'readonly');
    const start = await exportAsync('format=csv&include_labels=true', alice);
    const jobUuid: string = start.json().job_uuid;
    assert.ok(jobUuid, start.body);
    // Alice loses the right to export before the job runs: the job fails, as it runs with her rights.
    await share(alice, 'readonly-no-download');
    await runJobs(server.deps);
    const polled = await exportAsync(`job_uuid=${jobUuid}`);
    assert.equal(polled.statusCode, 202);
    assert.deepEqual(polled.json(), {
      job_status: 'FAILURE',
      job_uuid: jobUuid,
      error_message: 'You do not have permission to perform this action.',
      error: 'You do not have permission to perform this action.',
    });
    const listed = (await get(`/api/v1/export?xform=${formId}`, owner)).json() as Array<Record<string, unknown>>;
    const failed = listed.find((e) => e['task_id'] === jobUuid);
    assert.equal(failed?.['job_status'], 'FAILURE');
    assert.equal(failed?.['error_message'], 'You do not have permission to perform this action.');
    assert.equal(failed?.['export_url'], null);
    await share(alice, 'readonly');
  });

  test('a job that ended without its handler (its worker died on every try) reports FAILURE', async () => {
    const { owner, formId, exportAsync } = await ownForm();
    const jobUuid: string = (await exportAsync('format=csv&include_labels_only=true')).json().job_uuid;
    const error = 'The worker stopped while running the job (attempt 3 of 3).';
    await server.deps.db.updateTable('jobs').set({ status: 'FAILURE', error }).where('uuid', '=', jobUuid).execute();
    const polled = (await exportAsync(`job_uuid=${jobUuid}`)).json();
    assert.equal(polled.job_status, 'FAILURE');
    assert.equal(polled.error_message, error);
    const listed = (await get(`/api/v1/export?xform=${formId}`, owner)).json() as Array<Record<string, unknown>>;
    assert.equal(listed.find((e) => e['task_id'] === jobUuid)?.['job_status'], 'FAILURE');
    // A failed export is not reused: the same request starts a new job.
    const again = (await exportAsync('format=csv&include_labels_only=true')).json();
    assert.ok(again.job_uuid);
    assert.notEqual(again.job_uuid, jobUuid);
    await runJobs(server.deps);
  });

  test('GET /api/v1/export?xform lists the form’s exports with onadata’s fields', async () => {
    const { owner, formId, exportAsync } = await ownForm();
    // Exports of the form's to list: a finished CSV, zipped CSV and SPSS.
    for (const format of ['csv', 'csvzip', 'savzip']) assert.equal((await exportAsync(`format=${format}`)).statusCode, 202);
    await runJobs(server.deps);
    const res = await get(`/api/v1/export?xform=${formId}`, owner);
    assert.equal(res.statusCode, 200);
    const list = res.json() as Array<Record<string, unknown>>;
    const done = list.find((e) => e['job_status'] === 'SUCCESS' && e['type'] === 'csv');
    assert.ok(done);
    assert.deepEqual(Object.keys(done), ['id', 'job_status', 'type', 'task_id', 'xform', 'date_created', 'filename', 'options', 'export_url', 'error_message']);
    assert.equal(done['xform'], `http://testserver/api/v1/forms/${formId}`);
    assert.equal(done['export_url'], `http://testserver/api/v1/export/${String(done['id'])}.csv`);
    assert.match(String(done['filename']), /^household-.*\.csv$/);
    assert.equal((done['options'] as Record<string, unknown>)['group_delimiter'], '/');
    assert.ok(list.some((e) => e['type'] === 'csv_zip'));
    assert.ok(list.some((e) => e['type'] === 'sav_zip'));

    assert.equal((await get('/api/v1/export?xform=abc', owner)).statusCode, 400);
    assert.equal((await get('/api/v1/export?xform=999999', owner)).statusCode, 404);
    assert.equal((await get(`/api/v1/export?xform=${formId}`, carol)).statusCode, 403);
  });

  test('GET /api/v1/export without xform lists the caller’s own exports (the spec; onadata answers [])', async () => {
    const { owner, formId, exportAsync, share } = await ownForm();
    // A reader of its own, whose exports are all of this form's: alice exports in other tests.
    const reader = await createUser(server.app, 'reader');
    await share(reader, 'readonly');
    for (const [query, user] of [['format=csv', owner], ['format=xls', owner], ['format=csv&include_labels=true', reader]] as const) {
      assert.equal((await exportAsync(query, user)).statusCode, 202);
    }
    await runJobs(server.deps);
    const mine = (await get('/api/v1/export', reader)).json() as Array<Record<string, unknown>>;
    const all = (await get(`/api/v1/export?xform=${formId}`, owner)).json() as Array<Record<string, unknown>>;
    assert.ok(mine.length > 0);
    assert.ok(mine.length < all.length);
    const ownerExports = (await get('/api/v1/export', owner)).json() as Array<Record<string, unknown>>;
    assert.equal(ownerExports.length + mine.length, all.length);
    assert.deepEqual((await get('/api/v1/export')).json(), []);
  });

  test('DELETE /api/v1/export/{id}: 204 for its creator (the file goes too), 403 for a reader, then 404', async () => {
    const { owner, formId, exportAsync } = await ownForm();
    await madeCsvExport(exportAsync);
    const url = path((await exportAsync('format=csv')).json().export_url);
    const id = Number(/(\d+)$/.exec(url)?.[1]);
    const file = join(dataDir, 'exports', String(formId), `${id}.csv`);
    assert.ok(existsSync(file));
    assert.equal((await server.app.inject({ method: 'DELETE', url, headers: alice.auth })).statusCode, 403);
    assert.equal((await server.app.inject({ method: 'DELETE', url, headers: owner.auth })).statusCode, 204);
    assert.equal(existsSync(file), false);
    assert.equal((await get(url, owner)).statusCode, 404);
    assert.equal((await server.app.inject({ method: 'DELETE', url, headers: owner.auth })).statusCode, 404);
    // The next request makes a new export rather than pointing at the deleted one.
    assert.ok((await exportAsync('format=csv')).json().job_uuid);
    await runJobs(server.deps);
  });

  test('an export whose file has gone from the disk is made again rather than reused', async () => {
    const { owner, formId, exportAsync } = await ownForm();
    await madeCsvExport(exportAsync);
    const url = path((await exportAsync('format=csv')).json().export_url);
    rmSync(join(dataDir, 'exports', String(formId), `${/(\d+)$/.exec(url)?.[1]}.csv`));
    assert.equal((await get(url, owner)).statusCode, 404);
    const again = (await exportAsync('format=csv')).json();
    assert.ok(again.job_uuid);
    await runJobs(server.deps);
    assert.equal((await exportAsync('format=csv')).json().job_status, 'SUCCESS');
  });

  test('at most ten exports per form and type are kept: the oldest goes with its file', async () => {
    const { owner, formId, exportAsync } = await ownForm();
    for (let n = 0; n < 11; n++) assert.equal((await exportAsync(`format=kml&query={"_id":{"$gt":${n}}}`)).statusCode, 202);
    const kml = ((await get(`/api/v1/export?xform=${formId}`, owner)).json() as Array<Record<string, unknown>>).filter((e) => e['type'] === 'kml');
    assert.equal(kml.length, 10);
    await runJobs(server.deps);
  });
});

// ---------------------------------------------------------------- restart

describe('export jobs across a restart', () => {
  test('a job enqueued before the server stopped runs after a new server starts on the same data', async () => {
    const storage = await restartableStorage('gather-export-restart-');
    try {
      const first = await storage.open();
      const bob = await createUser(first.app, 'bob');
      const formId = await publish(first.app, bob);
      await submit(first.app, bob, 'Before restart');
      const start = await first.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/export_async?format=csv`, headers: bob.auth });
      const jobUuid: string = start.json().job_uuid;
      assert.ok(jobUuid, start.body);
      await first.close();

      const second = await storage.open();
      try {
        const poll = () => second.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/export_async?job_uuid=${jobUuid}`, headers: bob.auth });
        assert.equal((await poll()).json().job_status, 'PENDING');
        await runJobs(second.runtime.deps);
        const done = (await poll()).json();
        assert.equal(done.job_status, 'SUCCESS');
        const file = await second.app.inject({ method: 'GET', url: path(done.export_url), headers: bob.auth });
        assert.equal(file.statusCode, 200);
        assert.match(file.body, /Before restart/);
      } finally {
        await second.close();
      }
    } finally {
      await storage.remove();
    }
  });
});
