// A server killed outright (SIGKILL) in the middle of an export: at the next start its job is
// taken back at once, not after its five-minute lease, and the `.part` file and spools it left
// are removed, while files of live processes stay. On PGlite a lock file naming a live process
// that is not the one that wrote it (a reused pid) does not keep the server from starting.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { multipart } from '../helpers.ts';
import { createServerStorage, type ServerProcess, type ServerStorage } from '../server-process.ts';
import { processStartTicks, processTag } from '../../src/platform/process-identity.ts';

const FIXTURES = join(import.meta.dirname, '../fixtures/imports');
// Enough records that a poll sees the export's progress (written every 50 ms here) before it ends.
const ROWS = 8_000;
const SERVER_ENV = { WORKERS: '1', JOB_PROGRESS_MS: '50' };

let storage: ServerStorage;
before(async () => {
  storage = await createServerStorage();
});
after(async () => {
  await storage.remove();
});

function bigCsv(rows: number): string {
  const [header = '', ...lines] = readFileSync(join(FIXTURES, 'good.csv'), 'utf8').trim().split('\n');
  const columns = header.split(',');
  const blank = new Set([columns.indexOf('_uuid'), columns.indexOf('meta/instanceID')]);
  const body = Array.from({ length: rows }, (_, i) => (lines[i % lines.length] ?? '').split(',').map((v, c) => (blank.has(c) ? '' : v)).join(','));
  return `${header}\n${body.join('\n')}\n`;
}

/** The tag of a process that has exited. */
function deadTag(): string {
  const child = spawnSync(process.execPath, ['-e', ''], {});
  return `${child.pid}.0.1`;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Names under DATA_DIR/tmp and DATA_DIR/exports/<form>/ that are temporary (spools, `.part`). */
function temporaryFiles(dataDir: string, formId: number): string[] {
  const list = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).map((n) => join(dir, n)) : []);
  return [...list(join(dataDir, 'tmp')), ...list(join(dataDir, 'exports', String(formId))).filter((p) => p.endsWith('.part'))];
}

test('an export killed with its server runs again at once after a restart, and its leftovers are removed', async () => {
  let server: ServerProcess = await storage.start(SERVER_ENV);
  try {
    const registered = await fetch(`${server.baseUrl}/api/v1/profiles`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'bob', email: 'bob@example.org', first_name: 'Bob', password: 'Crash-export-pw-42' }),
    });
    assert.equal(registered.status, 201);
    const me = await fetch(`${server.baseUrl}/api/v1/user`, { headers: { authorization: `Basic ${Buffer.from('bob:Crash-export-pw-42').toString('base64')}` } });
    const auth = `Token ${((await me.json()) as { api_token: string }).api_token}`;
    const form = multipart({}, [{ name: 'xls_file', fileName: 'tutorial.xlsx', content: readFileSync(join(FIXTURES, 'tutorial.xlsx')) }]);
    const published = await fetch(`${server.baseUrl}/api/v1/forms`, { method: 'POST', headers: { ...form.headers, authorization: auth }, body: form.payload });
    assert.equal(published.status, 201);
    const formId = Number(((await published.json()) as { formid: number }).formid);
    const get = async (path: string): Promise<Record<string, unknown>> => {
      const res = await fetch(`${server.baseUrl}${path}`, { headers: { authorization: auth } });
      return (await res.json()) as Record<string, unknown>;
    };

    // Enough records that the export runs for a while.
    const csv = multipart({}, [{ name: 'csv_file', fileName: 'big.csv', content: bigCsv(ROWS) }]);
    const imported = await fetch(`${server.baseUrl}/api/v1/forms/${formId}/csv_import`, { method: 'POST', headers: { ...csv.headers, authorization: auth }, body: csv.payload });
    const importTask = ((await imported.json()) as { task_id: string }).task_id;
    for (let i = 0; i < 1800; i++) {
      const status = await get(`/api/v1/forms/${formId}/csv_import?job_uuid=${importTask}`);
      if (status['job_status'] === 'SUCCESS') break;
      assert.notEqual(status['job_status'], 'FAILURE', JSON.stringify(status));
      await sleep(100);
    }

    const started = await get(`/api/v1/forms/${formId}/export_async?format=xlsx`);
    const jobUuid = String(started['job_uuid']);
    const exportStatus = (): Promise<Record<string, unknown>> => get(`/api/v1/forms/${formId}/export_async?job_uuid=${jobUuid}`);
    let running = false;
    for (let i = 0; i < 1200 && !running; i++) {
      const status = await exportStatus();
      assert.notEqual(status['job_status'], 'SUCCESS', 'the export finished before it could be killed');
      running = Number(status['progress'] ?? 0) > 0;
      if (!running) await sleep(25);
    }
    assert.ok(running, 'the export job reported progress');
    await server.kill();

    // What the killed server left, and files planted as a dead process's and as a live one's.
    const host = hostname();
    const dead = deadTag();
    mkdirSync(join(storage.dataDir, 'tmp'), { recursive: true });
    mkdirSync(join(storage.dataDir, 'exports', String(formId)), { recursive: true });
    const deadSpool = join(storage.dataDir, 'tmp', `xls-spool@${host}@${dead}@planted`);
    const deadPart = join(storage.dataDir, 'exports', String(formId), `9999.xlsx@${host}@${dead}@planted.part`);
    const liveSpool = join(storage.dataDir, 'tmp', `xls-spool@${host}@${processTag()}@planted`);
    for (const path of [deadSpool, deadPart, liveSpool]) writeFileSync(path, 'left over');
    const leftovers = temporaryFiles(storage.dataDir, formId).filter((p) => p !== liveSpool);
    assert.ok(leftovers.length >= 2);

    if (!storage.databaseUrl) {
      // The kill left the lock behind; make it name a live process (pid 1) started at another time.
      const [, boot = '0'] = processTag(1).split('.');
      writeFileSync(join(storage.dataDir, 'gather.lock'), `1.${boot}.${Number(processStartTicks(1) ?? '1') + 1}`);
    }

    server = await storage.start(SERVER_ENV);
    let final = await exportStatus();
    for (let i = 0; i < 600 && final['job_status'] !== 'SUCCESS' && final['job_status'] !== 'FAILURE'; i++) {
      await sleep(100);
      final = await exportStatus();
    }
    // Within the wait above (60 s), well short of the export's 300 s lease.
    assert.equal(final['job_status'], 'SUCCESS', JSON.stringify(final));
    const remaining = temporaryFiles(storage.dataDir, formId);
    for (const path of leftovers) assert.ok(!remaining.includes(path), `${path} was removed`);
    assert.ok(remaining.includes(liveSpool), 'a live process’s spool is kept');
  } finally {
    await server.kill();
  }
});
