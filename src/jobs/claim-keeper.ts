// Keeps a claimed job's lease alive while its handler runs (a long export must not be taken
// over by another worker) and writes its progress. All writes go through one chain so a flushed
// older progress value can never land after a newer one.
import type { AppDeps } from '../context.ts';
import type { JobProgress } from './queue.ts';
import { extendJobLease, updateJobProgress } from './repository.ts';
import type { JobLog } from './log.ts';

const MIN_HEARTBEAT_MS = 50;

export class ClaimKeeper {
  readonly #deps: AppDeps;
  readonly #jobId: number;
  readonly #lockedBy: string;
  readonly #leaseMs: number;
  readonly #onLost: () => void;
  readonly #log: JobLog;
  #timer: NodeJS.Timeout | undefined;
  #chain: Promise<void> = Promise.resolve();
  #unwrittenProgress: JobProgress | undefined;
  #lastProgressWriteAt = -Infinity;
  #lost = false;

  constructor(deps: AppDeps, job: { id: number; lockedBy: string; leaseMs: number }, onLost: () => void, log: JobLog) {
    this.#deps = deps;
    this.#jobId = job.id;
    this.#lockedBy = job.lockedBy;
    this.#leaseMs = job.leaseMs;
    this.#onLost = onLost;
    this.#log = log;
  }

  start(): void {
    const every = Math.max(this.#leaseMs / 3, MIN_HEARTBEAT_MS);
    this.#timer = setInterval(() => void this.#heartbeat(), every);
    this.#timer.unref();
  }

  /** Stops the heartbeat and waits for writes in flight; returns progress not yet written. */
  async stop(): Promise<JobProgress | undefined> {
    clearInterval(this.#timer);
    await this.#chain;
    return this.#unwrittenProgress;
  }

  async reportProgress(current: number, total: number): Promise<void> {
    if (!(Number.isFinite(current) && Number.isFinite(total) && current >= 0 && total >= 0)) {
      throw new RangeError(`progress must be finite and non-negative, got ${current} of ${total}`);
    }
    const progress = { current, total };
    const now = performance.now();
    // Written at most every JOB_PROGRESS_MS, and whenever current reaches total.
    if (current < total && now - this.#lastProgressWriteAt < this.#deps.config.jobProgressMs) {
      this.#unwrittenProgress = progress;
      return;
    }
    this.#lastProgressWriteAt = now;
    this.#unwrittenProgress = undefined;
    await this.#write(async () => this.#held(await updateJobProgress(this.#deps.db, this.#jobId, this.#lockedBy, progress)));
  }

  #heartbeat(): Promise<void> {
    return this.#write(async () => {
      const lockedUntil = new Date(this.#deps.clock.now().getTime() + this.#leaseMs);
      this.#held(await extendJobLease(this.#deps.db, this.#jobId, this.#lockedBy, lockedUntil));
      const progress = this.#unwrittenProgress;
      if (progress && !this.#lost) {
        this.#unwrittenProgress = undefined;
        this.#lastProgressWriteAt = performance.now();
        this.#held(await updateJobProgress(this.#deps.db, this.#jobId, this.#lockedBy, progress));
      }
    });
  }

  #held(stillHeld: boolean): void {
    if (stillHeld || this.#lost) return;
    this.#lost = true;
    this.#onLost();
  }

  // A failed write (database briefly unreachable) is logged and retried by the next heartbeat;
  // the lease is a third of the way from expiring at most.
  #write(operation: () => Promise<void>): Promise<void> {
    const next = this.#chain.then(operation).catch((error: unknown) => {
      this.#log('warn', `job ${this.#jobId}: could not renew its lease or write its progress`, error);
    });
    this.#chain = next;
    return next;
  }
}
