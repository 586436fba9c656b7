import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { startTestDatabase, type TestDatabase } from '../helpers.ts';
import { enqueueJob, findJobByUuid, type JobRow } from '../../src/jobs/queue.ts';
import { JobRegistry, TransientJobError, runOneJob, startWorkers, type JobContext } from '../../src/jobs/worker.ts';
import { silentJobLog } from '../../src/jobs/log.ts';
import { hostname } from 'node:os';
import { bootId } from '../../src/platform/process-identity.ts';

let db: TestDatabase;

before(async () => {
  db = await startTestDatabase();
});
after(() => db.close());
beforeEach(async () => {
  await db.deps.db.deleteFrom('jobs').execute();
});

const quiet = { log: silentJobLog };
const run = (registry: JobRegistry): Promise<boolean> => runOneJob(db.deps, registry, quiet);

async function jobOf(uuid: string): Promise<JobRow> {
  const job = await findJobByUuid(db.deps.db, uuid);
  assert.ok(job, `job ${uuid} exists`);
  return job;
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await delay(20);
  }
}

/** A promise the test resolves when it lets a handler finish. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = (): void => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe('runOneJob', () => {
  test('returns false when no job is due', async () => {
    assert.equal(await run(new JobRegistry()), false);
  });

  test('a successful handler stores its result as SUCCESS and releases the lease', async () => {
    const registry = new JobRegistry();
    const seen: unknown[] = [];
    registry.register<{ n: number }>('double', async (ctx, payload) => {
      seen.push(payload);
      assert.equal(ctx.job.status, 'STARTED');
      return { doubled: payload.n * 2 };
    });
    const { uuid } = await enqueueJob(db.deps.db, { type: 'double', payload: { n: 21 }, createdBy: null });
    assert.equal(await run(registry), true);
    const job = await jobOf(uuid);
    assert.deepEqual(seen, [{ n: 21 }]);
    assert.equal(job.status, 'SUCCESS');
    assert.deepEqual(job.result, { doubled: 42 });
    assert.equal(job.error, null);
    assert.equal(job.attempts, 1);
    assert.equal(job.max_attempts, 3);
    assert.equal(job.locked_by, null);
    assert.equal(job.locked_until, null);
    assert.ok(job.started_at && job.finished_at && job.finished_at >= job.started_at);
    assert.equal(await run(registry), false, 'a finished job is not run again');
  });

  test('a handler returning nothing stores a null result', async () => {
    const registry = new JobRegistry();
    registry.register('nothing', async () => undefined);
    const { uuid } = await enqueueJob(db.deps.db, { type: 'nothing', payload: {} });
    await run(registry);
    const job = await jobOf(uuid);
    assert.equal(job.status, 'SUCCESS');
    assert.equal(job.result, null);
  });

  test('a transient failure is retried after an exponential backoff, then succeeds', async () => {
    const registry = new JobRegistry();
    let calls = 0;
    registry.register('flaky', async () => {
      calls += 1;
      if (calls <= 2) throw new TransientJobError(`storage unavailable (${calls})`);
      return 'done';
    });
    const { uuid } = await enqueueJob(db.deps.db, { type: 'flaky', payload: null });

    await run(registry);
    let job = await jobOf(uuid);
    assert.equal(job.status, 'PENDING');
    assert.equal(job.attempts, 1);
    assert.equal(job.error, 'storage unavailable (1)');
    assert.equal(job.locked_by, null);
    const firstWait = job.run_after.getTime() - db.clock.now().getTime();
    assert.ok(firstWait > 1000 && firstWait <= 2000, `first retry waits 2 s, got ${firstWait} ms`);
    assert.equal(await run(registry), false, 'not due before the backoff');

    db.clock.advance(2);
    assert.equal(await run(registry), true);
    job = await jobOf(uuid);
    assert.equal(job.status, 'PENDING');
    assert.equal(job.attempts, 2);
    const secondWait = job.run_after.getTime() - db.clock.now().getTime();
    assert.ok(secondWait > 3000 && secondWait <= 4000, `second retry waits 4 s, got ${secondWait} ms`);

    db.clock.advance(2);
    assert.equal(await run(registry), false, 'still backing off');
    db.clock.advance(2);
    assert.equal(await run(registry), true);
    job = await jobOf(uuid);
    assert.equal(job.status, 'SUCCESS');
    assert.equal(job.result, 'done');
    assert.equal(job.attempts, 3);
    assert.equal(job.error, null);
  });

  test("errors the handler's isTransient recognises are retried too", async () => {
    const registry = new JobRegistry();
    let calls = 0;
    registry.register(
      'network',
      async () => {
        calls += 1;
        if (calls === 1) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        return calls;
      },
      { isTransient: (error) => error instanceof Error && 'code' in error && error.code === 'ECONNRESET' },
    );
    const { uuid } = await enqueueJob(db.deps.db, { type: 'network', payload: null });
    await run(registry);
    assert.equal((await jobOf(uuid)).status, 'PENDING');
    db.clock.advance(2);
    await run(registry);
    assert.equal((await jobOf(uuid)).status, 'SUCCESS');
  });

  test('a permanent failure is FAILURE with the error message, not its stack', async () => {
    const registry = new JobRegistry();
    registry.register('broken', async () => {
      throw new Error('The XLSForm has no survey sheet.');
    });
    const { uuid } = await enqueueJob(db.deps.db, { type: 'broken', payload: null });
    await run(registry);
    const job = await jobOf(uuid);
    assert.equal(job.status, 'FAILURE');
    assert.equal(job.error, 'The XLSForm has no survey sheet.');
    assert.equal(job.attempts, 1);
    assert.ok(job.finished_at);
    assert.equal(job.locked_by, null);
    db.clock.advance(3600);
    assert.equal(await run(registry), false, 'a failed job is never retried');
  });

  test('a transient failure on the last attempt is FAILURE', async () => {
    const registry = new JobRegistry();
    let calls = 0;
    registry.register(
      'always-flaky',
      async () => {
        calls += 1;
        throw new TransientJobError('still down');
      },
      { maxAttempts: 2 },
    );
    const { uuid } = await enqueueJob(db.deps.db, { type: 'always-flaky', payload: null });
    await run(registry);
    assert.equal((await jobOf(uuid)).status, 'PENDING');
    db.clock.advance(2);
    await run(registry);
    const job = await jobOf(uuid);
    assert.equal(calls, 2);
    assert.equal(job.status, 'FAILURE');
    assert.equal(job.error, 'still down');
    assert.equal(job.attempts, 2);
    assert.equal(job.max_attempts, 2);
  });

  test("an enqueue's maxAttempts overrides the handler's", async () => {
    const registry = new JobRegistry();
    registry.register(
      'once',
      async () => {
        throw new TransientJobError('down');
      },
      { maxAttempts: 5 },
    );
    const { uuid } = await enqueueJob(db.deps.db, { type: 'once', payload: null, maxAttempts: 1 });
    await run(registry);
    const job = await jobOf(uuid);
    assert.equal(job.status, 'FAILURE');
    assert.equal(job.max_attempts, 1);
  });

  test('a job whose type has no handler is FAILURE with a clear message', async () => {
    const { uuid } = await enqueueJob(db.deps.db, { type: 'no_such_type', payload: null });
    assert.equal(await run(new JobRegistry()), true);
    const job = await jobOf(uuid);
    assert.equal(job.status, 'FAILURE');
    assert.equal(job.error, 'No handler is registered for job type "no_such_type".');
  });

  test('a result that cannot be stored as JSON is FAILURE', async () => {
    const registry = new JobRegistry();
    registry.register('bigint', async () => ({ count: 1n }));
    const { uuid } = await enqueueJob(db.deps.db, { type: 'bigint', payload: null });
    await run(registry);
    const job = await jobOf(uuid);
    assert.equal(job.status, 'FAILURE');
    assert.match(job.error ?? '', /^The job's result could not be stored as JSON/);
  });

  test('jobs run in the order they were enqueued, and not before run_after', async () => {
    const registry = new JobRegistry();
    const order: string[] = [];
    registry.register<string>('note', async (_ctx, name) => {
      order.push(name);
    });
    await enqueueJob(db.deps.db, { type: 'note', payload: 'later', runAfter: new Date(db.clock.now().getTime() + 60_000) });
    await enqueueJob(db.deps.db, { type: 'note', payload: 'first' });
    await enqueueJob(db.deps.db, { type: 'note', payload: 'second' });
    while (await run(registry));
    assert.deepEqual(order, ['first', 'second']);
    db.clock.advance(60);
    while (await run(registry));
    assert.deepEqual(order, ['first', 'second', 'later']);
  });
});

describe('a worker that died', () => {
  /** Leaves the job as a killed process would: STARTED, its lease running out at `lockedUntil`. */
  async function abandon(uuid: string, attempts: number, lockedUntil: Date): Promise<void> {
    await db.deps.db
      .updateTable('jobs')
      .set({ status: 'STARTED', attempts, locked_by: 'dead-host:1:abc', locked_until: lockedUntil, started_at: db.clock.now() })
      .where('uuid', '=', uuid)
      .execute();
  }

  test('its STARTED job is left alone while the lease holds, then claimed again as the next attempt', async () => {
    const registry = new JobRegistry();
    registry.register('export', async (ctx) => ({ attempt: ctx.job.attempts }));
    const { uuid } = await enqueueJob(db.deps.db, { type: 'export', payload: null });
    await abandon(uuid, 1, new Date(db.clock.now().getTime() + 60_000));

    // A restarted process: a new registry, the same database.
    assert.equal(await run(registry), false, 'the lease has not expired yet');
    db.clock.advance(61);
    assert.equal(await run(registry), true);
    const job = await jobOf(uuid);
    assert.equal(job.status, 'SUCCESS');
    assert.equal(job.attempts, 2);
    assert.deepEqual(job.result, { attempt: 2 });
  });

  test('its job fails without running again once the dead attempt was the last one allowed', async () => {
    const registry = new JobRegistry();
    let ran = false;
    registry.register(
      'crashy',
      async () => {
        ran = true;
      },
      { maxAttempts: 2 },
    );
    const { uuid } = await enqueueJob(db.deps.db, { type: 'crashy', payload: null, maxAttempts: 2 });
    await abandon(uuid, 2, db.clock.now());
    db.clock.advance(1);
    assert.equal(await run(registry), true);
    const job = await jobOf(uuid);
    assert.equal(ran, false, 'the handler is not run a third time');
    assert.equal(job.status, 'FAILURE');
    assert.equal(job.error, 'The worker stopped while running the job (attempt 2 of 2).');
    assert.equal(job.attempts, 2);
    assert.equal(job.locked_by, null);
    assert.ok(job.finished_at);
  });
});

describe('while a handler runs', () => {
  test('the heartbeat keeps the lease of a job running longer than its lease', async () => {
    const registry = new JobRegistry();
    const finish = gate();
    registry.register('long-export', async () => {
      await finish.opened;
      return 'exported';
    }, { leaseSeconds: 0.3 });
    const { uuid } = await enqueueJob(db.deps.db, { type: 'long-export', payload: null });
    const running = run(registry);
    await waitFor(async () => (await jobOf(uuid)).status === 'STARTED', 'the job to start');
    await delay(900); // three leases
    const job = await jobOf(uuid);
    assert.ok(job.locked_until && job.locked_until > db.clock.now(), 'the lease was renewed');
    assert.equal(await run(registry), false, 'no other worker may claim it');
    finish.open();
    await running;
    const done = await jobOf(uuid);
    assert.equal(done.status, 'SUCCESS');
    assert.equal(done.attempts, 1);
  });

  test('progress is visible to pollers while the job runs; throttled values are written at the end', async () => {
    const registry = new JobRegistry();
    const step = gate();
    registry.register('import', async (ctx: JobContext) => {
      await ctx.reportProgress(1, 10);
      await step.opened;
      await ctx.reportProgress(9, 10); // within a second of the last write: held back
      return { imported: 10 };
    });
    const { uuid } = await enqueueJob(db.deps.db, { type: 'import', payload: null });
    const running = run(registry);
    await waitFor(async () => (await jobOf(uuid)).progress !== null, 'progress');
    const job = await jobOf(uuid);
    assert.equal(job.status, 'STARTED');
    assert.deepEqual(job.progress, { current: 1, total: 10 });
    step.open();
    await running;
    const done = await jobOf(uuid);
    assert.equal(done.status, 'SUCCESS');
    assert.deepEqual(done.progress, { current: 9, total: 10 });
  });

  test('reaching the total is written at once', async () => {
    const registry = new JobRegistry();
    const finish = gate();
    registry.register('count', async (ctx: JobContext) => {
      await ctx.reportProgress(0, 3);
      await ctx.reportProgress(3, 3);
      await finish.opened;
    });
    const { uuid } = await enqueueJob(db.deps.db, { type: 'count', payload: null });
    const running = run(registry);
    await waitFor(async () => (await jobOf(uuid)).progress?.current === 3, 'the final count');
    finish.open();
    await running;
  });

  test('a worker whose lease was taken over is aborted and its outcome discarded', async () => {
    const registry = new JobRegistry();
    let aborted = false;
    registry.register('slow', async (ctx: JobContext) => {
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      aborted = true;
      return 'stale result';
    }, { leaseSeconds: 0.3 });
    const { uuid } = await enqueueJob(db.deps.db, { type: 'slow', payload: null });
    const running = run(registry);
    await waitFor(async () => (await jobOf(uuid)).status === 'STARTED', 'the job to start');
    // Another worker claimed it after this one stalled past its lease.
    await db.deps.db.updateTable('jobs').set({ locked_by: 'other-host:2:def', attempts: 2 }).where('uuid', '=', uuid).execute();
    await running;
    assert.equal(aborted, true);
    const job = await jobOf(uuid);
    assert.equal(job.status, 'STARTED');
    assert.equal(job.locked_by, 'other-host:2:def');
    assert.equal(job.result, null);
  });
});

describe('startWorkers', () => {
  test('wake() starts a new job without waiting for the next poll', async () => {
    const registry = new JobRegistry();
    registry.register('quick', async () => 'ok');
    const workers = startWorkers(db.deps, registry, { count: 1, pollMs: 60_000, ...quiet });
    try {
      await delay(100); // the loop found nothing and sleeps for a minute
      const { uuid } = await enqueueJob(db.deps.db, { type: 'quick', payload: null });
      db.deps.jobWakeup?.wake();
      await waitFor(async () => (await jobOf(uuid)).status === 'SUCCESS', 'the job to run', 3000);
    } finally {
      await workers.stop();
    }
  });

  test('several loops in one process run every job exactly once', async () => {
    const registry = new JobRegistry();
    const runs = new Map<number, number>();
    registry.register<number>('unit', async (_ctx, n) => {
      runs.set(n, (runs.get(n) ?? 0) + 1);
      await delay(5);
      return n;
    });
    const uuids: string[] = [];
    for (let n = 0; n < 30; n++) uuids.push((await enqueueJob(db.deps.db, { type: 'unit', payload: n })).uuid);
    const workers = startWorkers(db.deps, registry, { count: 3, pollMs: 20, ...quiet });
    try {
      await waitFor(async () => runs.size === 30 && (await jobOf(uuids[29] ?? '')).status === 'SUCCESS', 'all jobs', 20_000);
      await delay(100);
    } finally {
      await workers.stop();
    }
    assert.deepEqual([...runs.values()].filter((count) => count !== 1), []);
    for (const uuid of uuids) assert.equal((await jobOf(uuid)).status, 'SUCCESS');
  });

  test('stop() lets a running handler finish within the grace period', async () => {
    const registry = new JobRegistry();
    registry.register('finishing', async () => {
      await delay(200);
      return 'finished';
    });
    const workers = startWorkers(db.deps, registry, { count: 1, pollMs: 20, graceMs: 5000, ...quiet });
    const { uuid } = await enqueueJob(db.deps.db, { type: 'finishing', payload: null });
    await waitFor(async () => (await jobOf(uuid)).status === 'STARTED', 'the job to start');
    await workers.stop();
    const job = await jobOf(uuid);
    assert.equal(job.status, 'SUCCESS');
    assert.equal(job.result, 'finished');
  });

  test('stop() aborts a handler still running after the grace period and hands its job back', async () => {
    const registry = new JobRegistry();
    let reason: unknown;
    registry.register('endless', async (ctx: JobContext) => {
      await new Promise<void>((_resolve, reject) =>
        ctx.signal.addEventListener('abort', () => {
          reason = ctx.signal.reason;
          reject(ctx.signal.reason);
        }),
      );
    });
    const workers = startWorkers(db.deps, registry, { count: 1, pollMs: 20, graceMs: 200, ...quiet });
    const { uuid } = await enqueueJob(db.deps.db, { type: 'endless', payload: null });
    await waitFor(async () => (await jobOf(uuid)).status === 'STARTED', 'the job to start');
    await workers.stop();
    assert.ok(reason instanceof Error && reason.name === 'WorkerShutdownError');
    const job = await jobOf(uuid);
    assert.equal(job.status, 'PENDING', 'handed back for the next worker');
    assert.equal(job.attempts, 0, 'an interrupted run is not counted against the job');
    assert.equal(job.locked_by, null);
    assert.ok(job.run_after <= db.clock.now());
  });
});

describe('a sibling process that died while this one runs', () => {
  test('its running job is taken back by the workers without waiting out the lease', { skip: bootId() === undefined && 'needs /proc' }, async () => {
    const registry = new JobRegistry();
    let ran = 0;
    registry.register('orphan', async () => {
      ran++;
      return {};
    });
    const { uuid } = await enqueueJob(db.deps.db, { type: 'orphan', payload: {}, createdBy: null });
    // Claimed an hour's lease ago by a process of this machine's boot that no longer exists.
    const deadClaim = `${hostname()}:${2 ** 30 + 7}.${bootId() ?? ''}.12345:token`;
    await db.deps.db
      .updateTable('jobs')
      .set({ status: 'STARTED', locked_by: deadClaim, locked_until: new Date(Date.now() + 3600_000), attempts: 1 })
      .where('uuid', '=', uuid)
      .execute();
    const workers = startWorkers(db.deps, registry, { count: 1, pollMs: 20, reclaimMs: 50, ...quiet });
    try {
      await waitFor(async () => (await jobOf(uuid)).status === 'SUCCESS', 'the orphaned job to run');
      assert.equal(ran, 1);
    } finally {
      await workers.stop();
    }
  });
});
