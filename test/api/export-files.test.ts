// Export files: downloads with ?temp_token= (onadata's URL authentication on its export viewset),
// and the files of deleted forms, which go with their Export records.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { basic, createUser, multipart, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';
import { runOneJob } from '../../src/jobs/worker.ts';
import { buildJobRegistry } from '../../src/compose.ts';
import { silentJobLog } from '../../src/jobs/log.ts';

const registry = buildJobRegistry();

let server: TestServer;
let dataDir: string;
let bob: TestUser;
let tempToken: string;

const get = (url: string, headers: Record<string, string> = {}) => server.app.inject({ method: 'GET', url, headers });

async function runJobs(): Promise<void> {
  while (await runOneJob(server.deps, registry, { log: silentJobLog })) {
    // until the queue is empty
  }
}

async function formWithRecord(projectId?: number): Promise<number> {
  const file = formFile(HOUSEHOLD_CSV.replace(',household,Household,', `,household_${randomUUID().slice(0, 8)},Household,`), 'household.csv');
  let formId: number;
  if (projectId === undefined) formId = await publishForm(server.app, bob, file);
  else {
    const body = multipart({}, [file]);
    const res = await server.app.inject({ method: 'POST', url: `/api/v1/projects/${projectId}/forms`, payload: body.payload, headers: { ...bob.auth, ...body.headers } });
    assert.equal(res.statusCode, 201, res.body);
    formId = Number(res.json().formid);
  }
  const idString = String((await get(`/api/v1/forms/${formId}`, bob.auth)).json().id_string);
  const xml = householdXml({ uuid: randomUUID() }).replace('id="household"', `id="${idString}"`);
  const res = await postSubmission(server.app, `/${bob.username}/submission`, xml, bob.auth);
  assert.equal(res.statusCode, 201, res.body);
  return formId;
}

/** Makes an export of the form by job; answers its id and where its file is. */
async function exportOf(formId: number, format: 'csv' | 'xlsx' = 'csv'): Promise<{ id: number; file: string }> {
  const started = await get(`/api/v1/forms/${formId}/export_async?format=${format}`, bob.auth);
  assert.equal(started.statusCode, 202, started.body);
  await runJobs();
  const list = (await get(`/api/v1/export?xform=${formId}`, bob.auth)).json<Array<{ id: number; type: string; job_status: string }>>();
  const made = list.find((e) => e.type === format);
  assert.ok(made && made.job_status === 'SUCCESS', JSON.stringify(list));
  const file = join(dataDir, 'exports', String(formId), `${made.id}.${format}`);
  assert.ok(existsSync(file), file);
  return { id: made.id, file };
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gather-export-files-'));
  server = await startTestServer({ DATA_DIR: dataDir });
  bob = await createUser(server.app, 'bob');
  const me = await get('/api/v1/user', { authorization: basic(bob.username, bob.password) });
  tempToken = String(me.json().temp_token);
});
after(async () => {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('?temp_token= on /api/v1/export', () => {
  let formId: number;
  let exportId: number;
  before(async () => {
    formId = await formWithRecord();
    exportId = (await exportOf(formId)).id;
  });

  test('downloads the file with no Authorization header; without the token the export is not there', async () => {
    const withToken = await get(`/api/v1/export/${exportId}.csv?temp_token=${tempToken}`);
    assert.equal(withToken.statusCode, 200, withToken.body);
    assert.match(withToken.body, /^name,age,address\/village,/);
    assert.equal(withToken.body, (await get(`/api/v1/export/${exportId}`, bob.auth)).body);
    assert.equal((await get(`/api/v1/export/${exportId}`)).statusCode, 404);
  });

  test('lists and deletes exports with it too, as onadata’s export viewset does', async () => {
    const list = await get(`/api/v1/export?xform=${formId}&temp_token=${tempToken}`);
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(list.json<Array<{ id: number }>>().map((e) => e.id), [exportId]);
    const other = await exportOf(formId, 'xlsx');
    const deleted = await server.app.inject({ method: 'DELETE', url: `/api/v1/export/${other.id}?temp_token=${tempToken}` });
    assert.equal(deleted.statusCode, 204, deleted.body);
    assert.equal(existsSync(other.file), false);
  });

  test('other routes ignore it; an Authorization header comes first', async () => {
    assert.equal((await get(`/api/v1/user?temp_token=${tempToken}`)).statusCode, 401);
    assert.equal((await get(`/api/v1/forms/${formId}?temp_token=${tempToken}`)).statusCode, 404);
    assert.equal((await get(`/api/v1/data/${formId}?temp_token=${tempToken}`)).statusCode, 404);
    assert.equal((await get(`/api/v1/export/${exportId}?temp_token=wrong`, bob.auth)).statusCode, 200);
  });

  test('an unknown token gets 401 "Invalid token"; an expired one 401 "Token expired"', async () => {
    const unknown = await get(`/api/v1/export/${exportId}?temp_token=0123456789abcdef0123456789abcdef01234567`);
    assert.equal(unknown.statusCode, 401);
    assert.deepEqual(unknown.json(), { detail: 'Invalid token' });
    assert.equal(unknown.headers['www-authenticate'], 'TempToken');
    server.clock.advance(21_601);
    try {
      const expired = await get(`/api/v1/export/${exportId}?temp_token=${tempToken}`);
      assert.equal(expired.statusCode, 401);
      assert.deepEqual(expired.json(), { detail: 'Token expired' });
    } finally {
      server.clock.advance(-21_601);
    }
  });
});

describe('export files of deleted forms', () => {
  const exportRows = async (formId: number): Promise<number> =>
    (await server.deps.db.selectFrom('exports').select('id').where('form_id', '=', formId).execute()).length;

  test('DELETE /api/v1/forms/{pk} deletes the form’s exports and their files', async () => {
    const formId = await formWithRecord();
    const csv = await exportOf(formId);
    const xlsx = await exportOf(formId, 'xlsx');
    const res = await server.app.inject({ method: 'DELETE', url: `/api/v1/forms/${formId}`, headers: bob.auth });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(existsSync(csv.file), false);
    assert.equal(existsSync(xlsx.file), false);
    assert.equal(await exportRows(formId), 0);
  });

  test('delete_async does the same when its job runs', async () => {
    const formId = await formWithRecord();
    const csv = await exportOf(formId);
    const res = await server.app.inject({ method: 'DELETE', url: `/api/v1/forms/${formId}/delete_async`, headers: bob.auth });
    assert.equal(res.statusCode, 202, res.body);
    assert.ok(existsSync(csv.file), 'the file stays until the job runs');
    await runJobs();
    assert.equal(existsSync(csv.file), false);
    assert.equal(await exportRows(formId), 0);
  });

  test('deleting a project deletes the exports of its forms', async () => {
    const project = await server.app.inject({ method: 'POST', url: '/api/v1/projects', headers: bob.auth, payload: { name: `p-${randomUUID()}` } });
    assert.equal(project.statusCode, 201, project.body);
    const projectId = Number(project.json().projectid);
    const formId = await formWithRecord(projectId);
    const csv = await exportOf(formId);
    const res = await server.app.inject({ method: 'DELETE', url: `/api/v1/projects/${projectId}`, headers: bob.auth });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(existsSync(csv.file), false);
    assert.equal(await exportRows(formId), 0);
  });

  test('an export asked for after the form was deleted is refused', async () => {
    const formId = await formWithRecord();
    await server.app.inject({ method: 'DELETE', url: `/api/v1/forms/${formId}`, headers: bob.auth });
    assert.equal((await get(`/api/v1/forms/${formId}/export_async?format=csv`, bob.auth)).statusCode, 404);
    assert.equal(await exportRows(formId), 0);
  });
});
