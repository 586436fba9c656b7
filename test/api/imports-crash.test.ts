// An import job killed with its server (SIGKILL, mid-import) leaves the form's data as it was:
// after a restart no half of the file is visible, and the job, taken up again, imports the file
// exactly once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { multipart } from '../helpers.ts';
import { createServerStorage, type ServerStorage } from '../server-process.ts';

const FIXTURES = join(import.meta.dirname, '../fixtures/imports');
// Enough rows that a poll sees the job's progress well before it ends: the server writes it every
// 50 ms here (JOB_PROGRESS_MS) instead of every second, which took 30,000 rows; 12,000 rows on
// PGlite sometimes finished within that first second.
const ROWS = 6_000;
const SERVER_ENV = { WORKERS: '1', JOB_PROGRESS_MS: '50' };

let storage: ServerStorage;
before(async () => {
  storage = await createServerStorage();
});
after(async () => {
  await storage.remove();
});

/** good.csv's rows over and over, each a new record (no _uuid, no instanceID). */
function bigCsv(rows: number): string {
  const [header = '', ...lines] = readFileSync(join(FIXTURES, 'good.csv'), 'utf8').trim().split('\n');
  const columns = header.split(',');
  const blank = new Set([columns.indexOf('_uuid'), columns.indexOf('meta/instanceID')]);
  const body = Array.from({ length: rows }, (_, i) => (lines[i % lines.length] ?? '').split(',').map((v, c) => (blank.has(c) ? '' : v)).join(','));
  return `${header}\n${body.join('\n')}\n`;
}

test('an import killed mid-job is never half applied and completes exactly once after a restart', async () => {
  let server = await storage.start(SERVER_ENV);
  let auth = '';
  try {
    const registered = await fetch(`${server.baseUrl}/api/v1/profiles`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'bob', email: 'bob@example.org', first_name: 'Bob', password: 'Crash-import-pw-42' }),
    });
    assert.equal(registered.status, 201);
    const me = await fetch(`${server.baseUrl}/api/v1/user`, { headers: { authorization: `Basic ${Buffer.from('bob:Crash-import-pw-42').toString('base64')}` } });
    auth = `Token ${((await me.json()) as { api_token: string }).api_token}`;
    const form = multipart({}, [{ name: 'xls_file', fileName: 'tutorial.xlsx', content: readFileSync(join(FIXTURES, 'tutorial.xlsx')) }]);
    const published = await fetch(`${server.baseUrl}/api/v1/forms`, { method: 'POST', headers: { ...form.headers, authorization: auth }, body: form.payload });
    assert.equal(published.status, 201);
    const formId = Number(((await published.json()) as { formid: number }).formid);
    const count = async (): Promise<number> => {
      const res = await fetch(`${server.baseUrl}/api/v1/data/${formId}?fields=${encodeURIComponent('["_id"]')}`, { headers: { authorization: auth } });
      return ((await res.json()) as unknown[]).length;
    };

    const csv = multipart({}, [{ name: 'csv_file', fileName: 'big.csv', content: bigCsv(ROWS) }]);
    const started = await fetch(`${server.baseUrl}/api/v1/forms/${formId}/csv_import`, { method: 'POST', headers: { ...csv.headers, authorization: auth }, body: csv.payload });
    assert.equal(started.status, 200);
    const taskId = ((await started.json()) as { task_id: string }).task_id;
    const poll = async (): Promise<{ status: number; body: Record<string, unknown> }> => {
      const res = await fetch(`${server.baseUrl}/api/v1/forms/${formId}/csv_import?job_uuid=${taskId}`, { headers: { authorization: auth } });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    // Kill the server once the job has staged some rows but not all of them.
    let progressed = false;
    for (let i = 0; i < 4800 && !progressed; i++) {
      const { body } = await poll();
      const current = Number(body['current'] ?? 0);
      assert.notEqual(body['job_status'], 'SUCCESS', 'the import finished before it could be killed');
      progressed = body['job_status'] === 'PROGRESS' && current > 0 && current < ROWS;
      if (!progressed) await new Promise((r) => setTimeout(r, 25));
    }
    assert.ok(progressed, 'the import job reported progress');
    await server.kill();

    server = await storage.start(SERVER_ENV);
    const afterRestart = await count();
    assert.ok(afterRestart === 0 || afterRestart === ROWS, `after the restart: ${afterRestart} records`);

    // The job's lease runs out and a worker takes it up again.
    let final = await poll();
    for (let i = 0; i < 1800 && final.body['job_status'] !== 'SUCCESS' && final.status === 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      final = await poll();
    }
    assert.equal(final.body['job_status'], 'SUCCESS', JSON.stringify(final.body));
    assert.equal(final.body['additions'], ROWS);
    assert.equal(await count(), ROWS);
  } finally {
    await server.kill();
  }
});
