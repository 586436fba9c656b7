// Claiming and running one job. The claim is one short transaction; the handler runs outside
// it (on PGlite a transaction holds the only session), under a lease the heartbeat renews.
import { randomBytes } from 'node:crypto';
import type { AppDeps } from '../context.ts';
import type { JobRow } from './queue.ts';
import { DEFAULT_MAX_ATTEMPTS, type JobRegistration, type JobRegistry, type JobContext } from './registry.ts';
import { ClaimKeeper } from './claim-keeper.ts';
import { claimantName } from './claimant.ts';
import { consoleJobLog, jobErrorMessage, type JobLog } from './log.ts';
import {
  findNextClaimableJob,
  markClaimedJobFailed,
  markJobFailed,
  markJobStarted,
  markJobSucceeded,
  releaseJob,
  scheduleJobRetry,
} from './repository.ts';
import { inTransaction } from '../platform/db.ts';

export interface RunJobOptions {
  log?: JobLog;
  /** Aborted when the process shuts down: the running handler is aborted and its job handed back. */
  shutdownSignal?: AbortSignal;
}

const RETRY_CAP_SECONDS = 600;

/** Wait before retry number `attempts` + 1: 2, 4, 8 … seconds, at most ten minutes. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(2 ** attempts, RETRY_CAP_SECONDS);
}

type Claim =
  | { kind: 'none' }
  | { kind: 'failed'; job: JobRow; error: string }
  | { kind: 'run'; job: JobRow; lockedBy: string; registration: JobRegistration };

async function claimNextJob(deps: AppDeps, registry: JobRegistry): Promise<Claim> {
  const now = deps.clock.now();
  return inTransaction(deps.db, async (trx): Promise<Claim> => {
    const job = await findNextClaimableJob(trx, now);
    if (!job) return { kind: 'none' };
    const registration = registry.get(job.type);
    const maxAttempts = job.max_attempts ?? registration?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    // A STARTED job reaching here outlived its lease: its worker died (crash, kill, OOM) and the
    // attempt it was on counts, since the job itself may be what killed it.
    const abandoned = job.status === 'STARTED';
    const fail = async (error: string): Promise<Claim> => {
      await markClaimedJobFailed(trx, job.id, { attempts: job.attempts, maxAttempts, error, finishedAt: now });
      return { kind: 'failed', job, error };
    };
    if (!registration) return fail(`No handler is registered for job type "${job.type}".`);
    if (abandoned && job.attempts >= maxAttempts) {
      return fail(`The worker stopped while running the job (attempt ${job.attempts} of ${maxAttempts}).`);
    }
    const lockedBy = `${claimantName()}:${randomBytes(6).toString('hex')}`;
    const started = await markJobStarted(trx, job.id, {
      attempts: job.attempts + 1,
      maxAttempts,
      lockedBy,
      lockedUntil: new Date(now.getTime() + registration.leaseMs),
      startedAt: now,
      error: abandoned ? `The worker stopped while running attempt ${job.attempts}; retrying.` : job.error,
    });
    return { kind: 'run', job: started, lockedBy, registration };
  });
}

/** Claims and runs at most one due job; false when none was due. */
export async function runOneJob(deps: AppDeps, registry: JobRegistry, options: RunJobOptions = {}): Promise<boolean> {
  const log = options.log ?? consoleJobLog;
  const claim = await claimNextJob(deps, registry);
  if (claim.kind === 'none') return false;
  if (claim.kind === 'failed') {
    log('warn', `job ${claim.job.uuid} (${claim.job.type}) failed: ${claim.error}`);
    return true;
  }
  await runClaimedJob(deps, claim, log, options.shutdownSignal);
  return true;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

async function runClaimedJob(
  deps: AppDeps,
  claim: { job: JobRow; lockedBy: string; registration: JobRegistration },
  log: JobLog,
  shutdownSignal: AbortSignal | undefined,
): Promise<void> {
  const { job, lockedBy, registration } = claim;
  const label = `job ${job.uuid} (${job.type})`;
  const abort = new AbortController();
  let leaseLost = false;
  const onShutdown = (): void => abort.abort(shutdownSignal?.reason);
  if (shutdownSignal?.aborted) onShutdown();
  else shutdownSignal?.addEventListener('abort', onShutdown, { once: true });
  const keeper = new ClaimKeeper(
    deps,
    { id: job.id, lockedBy, leaseMs: registration.leaseMs },
    () => {
      leaseLost = true;
      abort.abort(new Error('The job was taken over by another worker after its lease expired.'));
    },
    log,
  );
  const context: JobContext = {
    deps,
    job,
    signal: abort.signal,
    reportProgress: async (current, total) => {
      abort.signal.throwIfAborted();
      await keeper.reportProgress(current, total);
    },
  };

  keeper.start();
  let outcome: Outcome;
  try {
    outcome = { ok: true, value: await registration.handler(context, job.payload) };
  } catch (error) {
    outcome = { ok: false, error };
  }
  const unwrittenProgress = await keeper.stop();
  shutdownSignal?.removeEventListener('abort', onShutdown);

  if (leaseLost) {
    log('warn', `${label} lost its lease to another worker; this run's outcome is discarded`);
    return;
  }
  const now = deps.clock.now();
  if (outcome.ok) {
    const result = toJson(outcome.value);
    if (typeof result === 'string') {
      await markJobSucceeded(deps.db, job.id, lockedBy, { result, progress: unwrittenProgress, finishedAt: now });
      deps.responseCache.invalidate();
      return;
    }
    outcome = { ok: false, error: result.error };
  }

  const { error } = outcome;
  const maxAttempts = job.max_attempts ?? DEFAULT_MAX_ATTEMPTS;
  if (shutdownSignal?.aborted) {
    await releaseJob(deps.db, job.id, lockedBy, now);
    log('info', `${label} was interrupted by shutdown and handed back to the queue`);
  } else if (registration.isTransient(error) && job.attempts < maxAttempts) {
    const runAfter = new Date(now.getTime() + retryDelaySeconds(job.attempts) * 1000);
    await scheduleJobRetry(deps.db, job.id, lockedBy, { error: jobErrorMessage(error), runAfter });
    log('warn', `${label} failed on attempt ${job.attempts} of ${maxAttempts}; retrying after ${runAfter.toISOString()}`, error);
  } else {
    await markJobFailed(deps.db, job.id, lockedBy, { error: jobErrorMessage(error), finishedAt: now });
    log('warn', `${label} failed on attempt ${job.attempts} of ${maxAttempts}`, error);
  }
}

function toJson(value: unknown): string | { error: Error } {
  try {
    return JSON.stringify(value ?? null) ?? 'null';
  } catch (error) {
    return { error: new Error(`The job's result could not be stored as JSON: ${jobErrorMessage(error)}`) };
  }
}
