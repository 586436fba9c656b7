// Several workers on one PostgreSQL database: separate connection pools (as separate processes
// have), a worker process killed mid-job, and the `gather worker` command. PGlite is one
// process's database, so these run only when DATABASE_URL names a PostgreSQL server.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { startTestDatabase, type TestDatabase } from '../helpers.ts';
import { openDatabase, type Database } from '../../src/platform/db.ts';
import { enqueueJob, findJobByUuid, type JobRow } from '../../src/jobs/queue.ts';
import { JobRegistry, runOneJob, startWorkers } from '../../src/jobs/worker.ts';
import { silentJobLog } from '../../src/jobs/log.ts';

const onPostgres = process.env['DATABASE_URL'] !== undefined;
const skip = onPostgres ? false : 'needs DATABASE_URL (PGlite is a single process)';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let db: TestDatabase;
let databaseUrl = '';
before(async () => {
  if (!onPostgres) return;
  db = await startTestDatabase();
  databaseUrl = db.databaseUrl ?? '';
});
after(async () => {
  await db?.close();
});
beforeEach(async () => {
  if (onPostgres) await db.deps.db.deleteFrom('jobs').execute();
});

async function jobOf(uuid: string): Promise<JobRow> {
  const job = await findJobByUuid(db.deps.db, uuid);
  assert.ok(job, `job ${uuid} exists`);
  return job;
}

async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await delay(25);
  }
}

function spawnWithOutput(args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, SECRET_KEY: 'test-secret-key', DATA_DIR: '/nonexistent-test-data-dir', DATABASE_URL: databaseUrl, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { child, output: () => text };
}

describe('workers on one PostgreSQL database', { skip }, () => {
  test('two worker pools over separate connections never run the same job twice', async () => {
    const second: Database = await openDatabase({ databaseUrl, pgliteDir: 'unused' });
    const running = new Set<number>();
    const runs = new Map<number, number>();
    const byPool = { first: 0, second: 0 };
    let overlaps = 0;
    const registryFor = (pool: keyof typeof byPool): JobRegistry => {
      const registry = new JobRegistry();
      registry.register<number>('unit', async (_ctx, n) => {
        if (running.has(n)) overlaps += 1;
        running.add(n);
        runs.set(n, (runs.get(n) ?? 0) + 1);
        byPool[pool] += 1;
        await delay(2 + (n % 5));
        running.delete(n);
        return n;
      });
      return registry;
    };
    const total = 80;
    for (let n = 0; n < total; n++) await enqueueJob(db.deps.db, { type: 'unit', payload: n });
    const options = { count: 3, pollMs: 10, log: silentJobLog };
    const first = startWorkers(db.deps, registryFor('first'), options);
    const other = startWorkers({ ...db.deps, db: second.db }, registryFor('second'), options);
    try {
      await waitFor(() => runs.size === total, 'every job to run');
      await delay(200); // time for any duplicate run to show
    } finally {
      await Promise.all([first.stop(), other.stop()]);
      await second.close();
    }
    assert.equal(overlaps, 0);
    assert.deepEqual([...runs.values()].filter((count) => count !== 1), []);
    const statuses = await db.deps.db.selectFrom('jobs').select(['status', 'attempts']).execute();
    assert.equal(statuses.length, total);
    assert.ok(statuses.every((job) => job.status === 'SUCCESS' && job.attempts === 1));
    assert.ok(byPool.first > 0 && byPool.second > 0, `both pools worked: ${JSON.stringify(byPool)}`);
  });

  test('a worker process killed mid-job keeps its lease until it dies; the job is then claimed again', async () => {
    const { uuid } = await enqueueJob(db.deps.db, { type: 'hang', payload: null });
    const worker = spawnWithOutput(['--import', 'tsx', 'test/jobs/fixtures/hanging-worker.ts'], {});
    try {
      await waitFor(() => worker.output().includes(`running ${uuid}`), 'the worker process to start the job', 60_000);
      const registry = new JobRegistry();
      registry.register('hang', async (ctx) => ({ recovered_on_attempt: ctx.job.attempts }));
      await delay(2500); // more than two leases: only the heartbeat keeps it
      assert.equal(await runOneJob(db.deps, registry, { log: silentJobLog }), false, 'a live worker keeps its job');

      worker.child.kill('SIGKILL');
      await once(worker.child, 'exit');
      assert.equal((await jobOf(uuid)).status, 'STARTED');
      db.clock.advance(2); // past the dead worker's last lease
      // A lease renewal the worker sent just before the kill may still be running in its database
      // session, holding the job's row, which claims skip (SKIP LOCKED) until it ends: the job is
      // claimed again at a later look, as a worker's next poll would.
      let claimed = false;
      await waitFor(async () => (claimed = await runOneJob(db.deps, registry, { log: silentJobLog })), 'the job to be claimed again', 10_000);
      assert.equal(claimed, true);
      const job = await jobOf(uuid);
      assert.equal(job.status, 'SUCCESS');
      assert.equal(job.attempts, 2);
      assert.deepEqual(job.result, { recovered_on_attempt: 2 });
    } finally {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    }
  });

  test('`gather worker` runs jobs without HTTP and exits cleanly on SIGTERM', async () => {
    const worker = spawnWithOutput(['bin/gather.js', 'worker'], { WORKERS: '2' });
    try {
      await waitFor(() => worker.output().includes('2 job workers started'), 'the workers to start', 60_000);
      // This build registers no handlers yet, so the job is settled as an unknown type: proof
      // enough that the process claims and settles jobs.
      const { uuid } = await enqueueJob(db.deps.db, { type: 'not_registered_here', payload: null });
      await waitFor(async () => (await jobOf(uuid)).status === 'FAILURE', 'the worker process to settle the job');
      assert.equal((await jobOf(uuid)).error, 'No handler is registered for job type "not_registered_here".');
      worker.child.kill('SIGTERM');
      const [code] = (await once(worker.child, 'exit')) as [number | null];
      assert.equal(code, 0, worker.output());
    } finally {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    }
  });
});
