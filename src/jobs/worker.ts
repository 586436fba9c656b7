// Worker loops: each claims and runs one job at a time, polls when the queue is empty, and
// wakes early when this process enqueues a job. Several loops (and several processes on
// PostgreSQL) share the queue safely: claims use FOR UPDATE SKIP LOCKED.
import type { AppDeps } from '../context.ts';
import type { JobRegistry } from './registry.ts';
import { consoleJobLog, type JobLog } from './log.ts';
import { runOneJob } from './run-job.ts';
import { reclaimAbandonedJobs } from './reclaim.ts';

export { JobRegistry, TransientJobError, type JobContext, type JobHandler, type JobTypeOptions } from './registry.ts';
export { runOneJob, retryDelaySeconds, type RunJobOptions } from './run-job.ts';

export interface WorkerOptions {
  /** Concurrent loops in this process. */
  count: number;
  /** Pause between polls of an empty queue. Default 500 ms. */
  pollMs?: number;
  /** On stop(), how long running handlers may take to finish before they are aborted. Default 10 s. */
  graceMs?: number;
  /** How often this process takes back the jobs of this host's ended processes. Default 30 s. */
  reclaimMs?: number;
  log?: JobLog;
}

export interface Workers {
  /** Waits for running handlers (aborting them after the grace period) and ends the loops. */
  stop(): Promise<void>;
  /** Ends idle loops' waits now: a job was just enqueued. */
  wake(): void;
}

/** How long aborted handlers get to settle before stop() returns regardless. */
const ABORT_SETTLE_MS = 2000;

export class WorkerShutdownError extends Error {
  override name = 'WorkerShutdownError';
  constructor() {
    super('The worker is shutting down.');
  }
}

export function startWorkers(deps: AppDeps, registry: JobRegistry, options: WorkerOptions): Workers {
  const pollMs = options.pollMs ?? 500;
  const graceMs = options.graceMs ?? 10_000;
  const log = options.log ?? consoleJobLog;
  const shutdown = new AbortController();
  let stopRequested = false;
  let stopping: Promise<void> | undefined;
  let sleepers = new Set<() => void>();

  const wake = (): void => {
    const waking = sleepers;
    sleepers = new Set();
    for (const resume of waking) resume();
  };
  const unsubscribe = deps.jobWakeup?.subscribe(wake);

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const resume = (): void => {
        clearTimeout(timer);
        sleepers.delete(resume);
        resolve();
      };
      const timer = setTimeout(resume, ms);
      sleepers.add(resume);
    });

  const loop = async (): Promise<void> => {
    while (!stopRequested) {
      let ranJob = false;
      try {
        ranJob = await runOneJob(deps, registry, { log, shutdownSignal: shutdown.signal });
      } catch (error) {
        // The database is unreachable or a write failed; a job left STARTED is claimed again
        // once its lease expires.
        log('error', 'job worker: could not claim or settle a job', error);
      }
      if (!ranJob && !stopRequested) await sleep(pollMs);
    }
  };
  const loops = Promise.all(Array.from({ length: options.count }, () => loop()));
  // A sibling process (a `gather worker`, a cluster process) may die while this one runs on.
  const reclaim = setInterval(() => {
    reclaimAbandonedJobs(deps).then(
      (n) => {
        if (n > 0) wake();
      },
      (error: unknown) => log('error', 'job worker: could not take back the jobs of ended processes', error),
    );
  }, options.reclaimMs ?? 30_000);
  reclaim.unref();

  const stop = async (): Promise<void> => {
    clearInterval(reclaim);
    wake();
    if (!(await settlesWithin(loops, graceMs))) {
      shutdown.abort(new WorkerShutdownError());
      if (!(await settlesWithin(loops, ABORT_SETTLE_MS))) {
        log('warn', 'job worker: a handler ignored its abort signal; its job is claimed again when its lease expires');
      }
    }
    unsubscribe?.();
  };

  return {
    wake,
    stop: () => {
      if (stopping === undefined) {
        stopRequested = true;
        stopping = stop();
      }
      return stopping;
    },
  };
}

async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
