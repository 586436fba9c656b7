// Fault suite, exports: an export job killed (SIGKILL) with its server while it writes its file.
// After the restart the job is taken up again at once (not after its 300 s lease), completes with
// every record, and no partial export (`.part`) or temporary file is left in DATA_DIR.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { unzip } from '../zip.ts';
import { createServerStorage, type ServerProcess, type ServerStorage } from '../server-process.ts';
import { getJson, postMultipart, publish, records, registerUser, report, tutorialCsv, tutorialForm, waitFor } from './harness.ts';

/** Enough records that the export is seen writing its file (the kill comes then). */
const RECORDS = 5_000;
const SERVER_ENV = { WORKERS: '1' };
/** Well within the old 300 s lease: a restart must take the job up again itself. */
const RESUME_TIMEOUT_MS = 90_000;

let storage: ServerStorage;
let server: ServerProcess | undefined;
before(async () => {
  storage = await createServerStorage();
});
after(async () => {
  await server?.kill();
  await storage.remove();
});

/** Files an export or a spool leaves while at work: `*.part` anywhere, anything under tmp/ (the database's own files aside). */
function leftovers(dataDir: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const name = relative(dataDir, path);
      if (name === 'pgdata') continue;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.part') || name.startsWith(`tmp/`)) found.push(name);
    }
  };
  if (existsSync(dataDir)) walk(dataDir);
  return found;
}

interface ExportState {
  job_status?: string;
  job_uuid?: string;
  export_url?: string;
  progress?: number;
}

test('exports: an export job killed mid-run completes after a restart and leaves no partial files', { timeout: 600_000 }, async () => {
  server = await storage.start(SERVER_ENV);
  const first = server;
  const auth = await registerUser(first.baseUrl, 'bob');
  const formId = await publish(first.baseUrl, auth, tutorialForm());
  const imported = await postMultipart(first.baseUrl, `/api/v1/forms/${formId}/csv_import`, auth, [{ name: 'csv_file', fileName: 'rows.csv', content: tutorialCsv(RECORDS) }]);
  const task = ((await imported.json()) as { task_id: string }).task_id;
  await waitFor(
    'the records to be imported',
    async () => {
      const state = await getJson<{ job_status?: string }>(first.baseUrl, `/api/v1/forms/${formId}/csv_import?job_uuid=${task}`, auth);
      assert.notEqual(state.job_status, 'FAILURE', JSON.stringify(state));
      return state.job_status === 'SUCCESS' ? true : undefined;
    },
    300_000,
  );

  const beforeExport = new Set(leftovers(storage.dataDir));
  const started = await fetch(`${first.baseUrl}/api/v1/forms/${formId}/export_async?format=xlsx`, { headers: { authorization: auth } });
  const job = (await started.json()) as ExportState;
  assert.equal(started.status, 202, JSON.stringify(job));
  assert.ok(job.job_uuid, JSON.stringify(job));
  // Kill as soon as the job has a file in the making.
  const deadline = Date.now() + 120_000;
  let atKill: string[] = [];
  while (atKill.length === 0) {
    assert.ok(Date.now() < deadline, 'the export never started writing');
    atKill = leftovers(storage.dataDir).filter((name) => !beforeExport.has(name));
    if (atKill.length === 0) await sleep(5);
  }
  await first.kill();
  const afterKill = leftovers(storage.dataDir);

  server = await storage.start(SERVER_ENV);
  const restarted = server;
  const resumedAt = Date.now();
  const done = await waitFor(
    'the export to complete after the restart',
    async () => {
      const res = await fetch(`${restarted.baseUrl}/api/v1/forms/${formId}/export_async?job_uuid=${job.job_uuid}`, { headers: { authorization: auth } });
      const state = (await res.json()) as ExportState;
      assert.notEqual(state.job_status, 'FAILURE', JSON.stringify(state));
      return state.job_status === 'SUCCESS' ? state : undefined;
    },
    RESUME_TIMEOUT_MS,
    250,
  );
  const resumeSeconds = (Date.now() - resumedAt) / 1000;
  assert.ok(done.export_url, JSON.stringify(done));
  const file = await fetch(done.export_url.replace(/^https?:\/\/[^/]+/, restarted.baseUrl), { headers: { authorization: auth } });
  assert.equal(file.status, 200);
  const sheets = await unzip(Buffer.from(await file.arrayBuffer()));
  const sheet = sheets.get('xl/worksheets/sheet1.xml')?.toString('utf8') ?? '';
  const rows = (sheet.match(/<row[ >]/g) ?? []).length;
  const remaining = leftovers(storage.dataDir);
  const stored = (await records<{ _id: number }>(restarted.baseUrl, auth, formId, ['_id'])).length;
  report('exports', {
    records: stored,
    'files left by the import': beforeExport.size,
    'files in the making at the kill': atKill.length,
    'files after the kill': afterKill.length,
    'seconds to complete after the restart': resumeSeconds.toFixed(1),
    'rows in the export': rows - 1,
    'partial or temporary files left': remaining.length,
  });
  assert.equal(rows - 1, stored, 'the export holds every record (and its header row)');
  assert.deepEqual(remaining, [], 'no partial or temporary file is left');
  await restarted.stop();
  server = undefined;
});
