// The job queue as callers see it: enqueue inside a transaction, look a job up by its UUID.
import { randomUUID } from 'node:crypto';
import type { DbOrTx } from '../platform/db.ts';
import { findJobRowByUuid, insertJob, type JobRow } from './repository.ts';

// The rows' shapes live with their SQL; callers know them from here.
export type { JobProgress, JobRow, JobStatus } from './repository.ts';

export interface NewJob {
  type: string;
  /** Stored as JSON: plain objects, arrays, strings, numbers, booleans and null only. */
  payload: unknown;
  createdBy?: number | null;
  /** Overrides the limit the handler registered. */
  maxAttempts?: number;
  /** Not before this time; default now. */
  runAfter?: Date;
}

/**
 * Adds a job. Pass the request's transaction so the job exists exactly when the request's writes
 * commit; after the commit, `deps.jobWakeup?.wake()` starts it without waiting for a poll.
 */
export async function enqueueJob(db: DbOrTx, job: NewJob): Promise<{ id: number; uuid: string }> {
  if (job.maxAttempts !== undefined && !(Number.isInteger(job.maxAttempts) && job.maxAttempts >= 1)) {
    throw new RangeError(`maxAttempts must be a positive integer, got ${job.maxAttempts}`);
  }
  const payload = JSON.stringify(job.payload ?? null);
  // The app's clock, not the database's: workers compare run_after with the app's clock too, so
  // a database server whose clock runs ahead cannot hold new jobs back.
  const now = new Date();
  return insertJob(db, {
    uuid: randomUUID(),
    type: job.type,
    payload,
    max_attempts: job.maxAttempts ?? null,
    run_after: job.runAfter ?? now,
    created_at: now,
    created_by: job.createdBy ?? null,
  });
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** The job with this UUID; text that is not a UUID finds nothing rather than raising a SQL error. */
export async function findJobByUuid(db: DbOrTx, uuid: string): Promise<JobRow | undefined> {
  if (!UUID.test(uuid)) return undefined;
  return findJobRowByUuid(db, uuid);
}
