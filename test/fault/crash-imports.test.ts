// Fault suite, imports: a CSV import whose rows carry their instanceID, killed (SIGKILL) with its
// server mid-job. After the restart none or all of its rows are visible, the job completes with
// every row stored once, and the user retrying the same file stores no row twice: as in onadata,
// each row then edits the record it names (which takes a new instanceID), and adds none. test/api/imports-crash.test.ts covers rows
// without an instanceID (each a new record).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServerStorage, type ServerProcess, type ServerStorage } from '../server-process.ts';
import { getJson, postMultipart, publish, records, registerUser, report, tutorialCsv, tutorialForm, waitFor } from './harness.ts';

/** Enough rows that a poll sees the job part-way: its progress is written every 50 ms here. */
const ROWS = 6_000;
const SERVER_ENV = { WORKERS: '1', JOB_PROGRESS_MS: '50' };

let storage: ServerStorage;
let server: ServerProcess | undefined;
before(async () => {
  storage = await createServerStorage();
});
after(async () => {
  await server?.kill();
  await storage.remove();
});

interface JobState {
  job_status?: string;
  current?: number;
  additions?: number;
  updates?: number;
  duplicates?: number;
}

test('imports: a CSV import killed mid-job is all or nothing, completes, and a retry stores each row once', { timeout: 600_000 }, async () => {
  server = await storage.start(SERVER_ENV);
  const first = server;
  const auth = await registerUser(first.baseUrl, 'bob');
  const formId = await publish(first.baseUrl, auth, tutorialForm());
  const uuids = Array.from({ length: ROWS }, () => randomUUID());
  const csv = tutorialCsv(uuids);

  const startImport = async (baseUrl: string): Promise<string> => {
    const res = await postMultipart(baseUrl, `/api/v1/forms/${formId}/csv_import`, auth, [{ name: 'csv_file', fileName: 'rows.csv', content: csv }]);
    const text = await res.text();
    assert.equal(res.status, 200, text);
    return (JSON.parse(text) as { task_id: string }).task_id;
  };
  const poll = (baseUrl: string, task: string): Promise<JobState> => getJson<JobState>(baseUrl, `/api/v1/forms/${formId}/csv_import?job_uuid=${task}`, auth);
  const finished = (baseUrl: string, task: string): Promise<JobState> =>
    waitFor(
      'the import job to finish',
      async () => {
        const state = await poll(baseUrl, task);
        return state.job_status === 'SUCCESS' || state.job_status === 'FAILURE' ? state : undefined;
      },
      // The rows, then as many edits, on PGlite: with 30,000 rows once 180 s were not enough on a
      // machine at load 10 (the test's own timeout still bounds the whole).
      270_000,
    );

  const task = await startImport(first.baseUrl);
  const progress = await waitFor(
    'the import to report progress',
    async () => {
      const state = await poll(first.baseUrl, task);
      assert.notEqual(state.job_status, 'SUCCESS', 'the import finished before it could be killed');
      const current = Number(state.current ?? 0);
      return state.job_status === 'PROGRESS' && current > 0 && current < ROWS ? current : undefined;
    },
    180_000,
    50,
  );
  await first.kill();

  server = await storage.start(SERVER_ENV);
  const restarted = server;
  const stored = async (): Promise<string[]> => (await records<{ _uuid: string }>(restarted.baseUrl, auth, formId, ['_uuid'])).map((r) => r._uuid);
  const visibleAfterRestart = (await stored()).length;
  assert.ok(visibleAfterRestart === 0 || visibleAfterRestart === ROWS, `after the restart: ${visibleAfterRestart} records, not none or all`);

  const resumed = await finished(restarted.baseUrl, task);
  assert.equal(resumed.job_status, 'SUCCESS', JSON.stringify(resumed));
  const afterJob = await stored();

  // The user, unsure whether it went through, imports the same file again.
  const retry = await finished(restarted.baseUrl, await startImport(restarted.baseUrl));
  assert.equal(retry.job_status, 'SUCCESS', JSON.stringify(retry));
  const afterRetry = await stored();
  const present = new Set(afterJob);
  const lost = uuids.filter((uuid) => !present.has(uuid)).length;
  const duplicated = afterJob.length - present.size + (afterRetry.length - new Set(afterRetry).size);
  report('imports', {
    rows: ROWS,
    'staged at the kill': progress,
    'visible after the restart': visibleAfterRestart,
    'stored after the job': afterJob.length,
    'retry added': Number(retry.additions ?? 0),
    'retry edited': Number(retry.updates ?? 0),
    'stored after the retry': afterRetry.length,
    lost,
    duplicated,
  });
  assert.equal(lost, 0, 'every row of the import is stored');
  assert.equal(duplicated, 0, 'no row is stored twice');
  assert.equal(afterJob.length, ROWS);
  assert.equal(Number(retry.additions ?? 0), 0, 'the retry adds no record');
  assert.equal(afterRetry.length, ROWS, 'the retry leaves one record a row');
  await restarted.stop();
  server = undefined;
});
