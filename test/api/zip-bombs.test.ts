// Zip bombs sent to the routes that unzip uploads: the fault run's 1.5 MB .xlsx whose three sheets
// inflate to 500 MB each. Publishing and importing it answer onadata's 400 with a message saying
// what happened, and the server's memory (measured in a server process of its own) stays bounded.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { bombWorkbook, SHEET_START } from '../../packages/xlsform/test/zip-bomb.ts';
import { createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { createServerStorage } from '../server-process.ts';
import { runOneJob } from '../../src/jobs/worker.ts';
import { buildJobRegistry } from '../../src/compose.ts';
import { silentJobLog } from '../../src/jobs/log.ts';

const MB = 1024 * 1024;
const FIXTURES = join(import.meta.dirname, '../fixtures/imports');
const TOO_LARGE = /^The workbook is too large when uncompressed \(more than \d+ MB\): /;

let bomb: Buffer;
before(async () => {
  bomb = await bombWorkbook({ padBytes: 500 * MB, sheets: 3 });
  assert.ok(bomb.length < 1.6 * MB);
});

function xlsFile(content: Buffer, fileName = 'bomb.xlsx'): { payload: Buffer; headers: Record<string, string> } {
  return multipart({}, [{ name: 'xls_file', fileName, content, contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' }]);
}

describe('zip bombs, in process', () => {
  let server: TestServer;
  let bob: TestUser;
  let formId: number;
  before(async () => {
    server = await startTestServer({ WORKERS: '0', IMPORT_ASYNC_THRESHOLD: String(10 * MB), ALLOW_PRIVATE_URLS: 'true' });
    bob = await createUser(server.app, 'bob');
    const body = xlsFile(readFileSync(join(FIXTURES, 'tutorial.xlsx')), 'tutorial.xlsx');
    const res = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: body.payload, headers: { ...bob.auth, ...body.headers } });
    assert.equal(res.statusCode, 201, res.body);
    formId = Number(res.json().formid);
  });
  after(() => server.close());

  test('publishing one answers the publish failure, saying the workbook is too large', async () => {
    const body = xlsFile(bomb);
    const res = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: body.payload, headers: { ...bob.auth, ...body.headers } });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().type, 'alert-error');
    assert.match(res.json().text, TOO_LARGE);
    const forms = await server.app.inject({ method: 'GET', url: '/api/v1/forms', headers: bob.auth });
    assert.equal(forms.json().length, 1);
  });

  test('replacing a form with one is refused the same way', async () => {
    const body = xlsFile(bomb);
    const res = await server.app.inject({ method: 'PATCH', url: `/api/v1/forms/${formId}`, payload: body.payload, headers: { ...bob.auth, ...body.headers } });
    assert.equal(res.statusCode, 400, res.body);
    assert.match(JSON.stringify(res.json()), /The workbook is too large when uncompressed/);
  });

  test('importing one answers the import failure with the same clear message', async () => {
    const body = xlsFile(bomb);
    const res = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/import`, payload: body.payload, headers: { ...bob.auth, ...body.headers } });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().job_status, 'FAILURE');
    assert.match(res.json().error, TOO_LARGE);
    // 500 MB of spaces before the first row: the reader of old held them in one string.
    const one = await bombWorkbook({ padBytes: 500 * MB, sheetHead: SHEET_START });
    const single = xlsFile(one);
    const again = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/import`, payload: single.payload, headers: { ...bob.auth, ...single.headers } });
    assert.equal(again.statusCode, 400, again.body);
    assert.doesNotMatch(again.json().error, /Invalid string length/);
    assert.match(again.json().error, /^The workbook is not one Excel could open: xl\/worksheets\/sheet1.xml holds more than 4 MB with no markup/);
    const records = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}`, headers: bob.auth });
    assert.deepEqual(records.json(), []);
  });

  test('a custom report template that is one answers 400 saying so', async () => {
    const templates: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' }).end(bomb);
    });
    await new Promise<void>((resolve) => templates.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(templates.address() as AddressInfo).port}/bomb.xlsx`;
      const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.xls?token=${encodeURIComponent(url)}`, headers: bob.auth });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().detail, /^The report template cannot be used: the workbook is too large when uncompressed \(more than 64 MB\): /);
    } finally {
      await new Promise((resolve) => templates.close(resolve));
    }
  });

  test('an import job given one fails with the clear message', async () => {
    const small = await startTestServer({ WORKERS: '0', IMPORT_ASYNC_THRESHOLD: '1000' });
    try {
      const carol = await createUser(small.app, 'carol');
      const form = xlsFile(readFileSync(join(FIXTURES, 'tutorial.xlsx')), 'tutorial.xlsx');
      const published = await small.app.inject({ method: 'POST', url: '/api/v1/forms', payload: form.payload, headers: { ...carol.auth, ...form.headers } });
      const id = Number(published.json().formid);
      const body = xlsFile(bomb);
      const started = await small.app.inject({ method: 'POST', url: `/api/v1/forms/${id}/import`, payload: body.payload, headers: { ...carol.auth, ...body.headers } });
      assert.equal(started.statusCode, 200, started.body);
      const taskId = String(started.json().task_id);
      for (let attempt = 0; attempt < 5; attempt++) await runOneJob(small.deps, buildJobRegistry(), { log: silentJobLog });
      const status = await small.app.inject({ method: 'GET', url: `/api/v1/forms/${id}/import?job_uuid=${taskId}`, headers: carol.auth });
      assert.equal(status.statusCode, 400, status.body);
      assert.equal(status.json().job_status, 'FAILURE');
      assert.match(status.json().error, TOO_LARGE);
    } finally {
      await small.close();
    }
  });
});

/** The server process's peak resident memory since the last reset, in bytes. */
function peakMemory(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1]) * 1024;
}

function residentMemory(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1]) * 1024;
}

/** Resets the process's peak (Linux: writing 5 to clear_refs), so the next reading is this request's. */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

test('four bombs at once raise the server process\'s peak memory by less than 128 MB', async () => {
  const storage = await createServerStorage();
  const server = await storage.start({ WORKERS: '0', IMPORT_ASYNC_THRESHOLD: String(10 * MB) });
  try {
    const pid = server.child.pid as number;
    const password = 'Zip-bomb-pw-42';
    const registered = await fetch(`${server.baseUrl}/api/v1/profiles`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'dora', email: 'dora@example.org', first_name: 'Dora', password }),
    });
    assert.equal(registered.status, 201);
    const auth = { authorization: `Basic ${Buffer.from(`dora:${password}`).toString('base64')}` };
    const form = xlsFile(readFileSync(join(FIXTURES, 'tutorial.xlsx')), 'tutorial.xlsx');
    const published = await fetch(`${server.baseUrl}/api/v1/forms`, { method: 'POST', headers: { ...form.headers, ...auth }, body: form.payload });
    assert.equal(published.status, 201);
    const formId = Number(((await published.json()) as { formid: number }).formid);
    const send = async (url: string): Promise<number> => {
      const body = xlsFile(bomb);
      const res = await fetch(`${server.baseUrl}${url}`, { method: 'POST', headers: { ...body.headers, ...auth }, body: body.payload });
      await res.arrayBuffer();
      return res.status;
    };
    for (const url of ['/api/v1/forms', `/api/v1/forms/${formId}/import`]) {
      // One request first, so what the route loads once (SheetJS, saxes) is not counted.
      assert.equal(await send(url), 400);
      const before = residentMemory(pid);
      resetPeak(pid);
      const statuses = await Promise.all([1, 2, 3, 4].map(() => send(url)));
      assert.deepEqual(statuses, [400, 400, 400, 400]);
      const growth = peakMemory(pid) - before;
      assert.ok(growth < 128 * MB, `${url}: the peak grew by ${Math.round(growth / MB)} MB`);
    }
  } finally {
    await server.stop();
    await storage.remove();
  }
});
