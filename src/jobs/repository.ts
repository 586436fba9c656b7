// SQL for the jobs table. Every write a worker makes after claiming a job checks the claim's
// token (locked_by), so a worker that lost its lease cannot overwrite the job's new owner.
import type { Insertable } from 'kysely';
import type { DbOrTx, Tx } from '../platform/db.ts';
import type { JobsTable } from '../platform/schema.ts';

/** onadata's (Celery's) task states; a job waiting for a retry is PENDING with its last error set. */
export type JobStatus = 'PENDING' | 'STARTED' | 'SUCCESS' | 'FAILURE';

export interface JobProgress {
  current: number;
  total: number;
}

export interface JobRow {
  id: number;
  uuid: string;
  type: string;
  payload: unknown;
  status: JobStatus;
  result: unknown | null;
  error: string | null;
  progress: JobProgress | null;
  attempts: number;
  /** null until first claimed: then the handler's registered limit (or the default) is filled in. */
  max_attempts: number | null;
  run_after: Date;
  locked_until: Date | null;
  /** The claim holding the lease (host:pid:token), null when no worker holds the job. */
  locked_by: string | null;
  created_by: number | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export async function insertJob(db: DbOrTx, job: Insertable<JobsTable>): Promise<{ id: number; uuid: string }> {
  return db.insertInto('jobs').values(job).returning(['id', 'uuid']).executeTakeFirstOrThrow();
}

export async function findJobRowByUuid(db: DbOrTx, uuid: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('uuid', '=', uuid).executeTakeFirst();
}

export async function findJobRowById(db: DbOrTx, id: number): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * The oldest job that is due (PENDING and past run_after) or abandoned (STARTED with an expired
 * lease), locked for this transaction; rows other workers are claiming right now are skipped.
 */
export async function findNextClaimableJob(trx: Tx, now: Date): Promise<JobRow | undefined> {
  return trx
    .selectFrom('jobs')
    .selectAll()
    // Repeats the partial index's predicate so the planner uses it whatever it proves.
    .where('status', 'in', ['PENDING', 'STARTED'])
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'PENDING'), eb('run_after', '<=', now)]),
        eb.and([eb('status', '=', 'STARTED'), eb('locked_until', '<', now)]),
      ]),
    )
    .orderBy('id')
    .limit(1)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
}

export async function markJobStarted(
  trx: Tx,
  id: number,
  claim: { attempts: number; maxAttempts: number; lockedBy: string; lockedUntil: Date; startedAt: Date; error: string | null },
): Promise<JobRow> {
  return trx
    .updateTable('jobs')
    .set({
      status: 'STARTED',
      attempts: claim.attempts,
      max_attempts: claim.maxAttempts,
      locked_by: claim.lockedBy,
      locked_until: claim.lockedUntil,
      started_at: claim.startedAt,
      error: claim.error,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Fails a job inside the claim transaction, without running it (no handler, or no attempts left). */
export async function markClaimedJobFailed(
  trx: Tx,
  id: number,
  failure: { attempts: number; maxAttempts: number; error: string; finishedAt: Date },
): Promise<void> {
  await trx
    .updateTable('jobs')
    .set({
      status: 'FAILURE',
      attempts: failure.attempts,
      max_attempts: failure.maxAttempts,
      error: failure.error,
      finished_at: failure.finishedAt,
      locked_by: null,
      locked_until: null,
    })
    .where('id', '=', id)
    .execute();
}

/** False when the claim no longer holds the job (its lease expired and another worker took it). */
export async function extendJobLease(db: DbOrTx, id: number, lockedBy: string, lockedUntil: Date): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({ locked_until: lockedUntil })
    .where('id', '=', id)
    .where('status', '=', 'STARTED')
    .where('locked_by', '=', lockedBy)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function updateJobProgress(db: DbOrTx, id: number, lockedBy: string, progress: JobProgress): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({ progress: JSON.stringify(progress) })
    .where('id', '=', id)
    .where('status', '=', 'STARTED')
    .where('locked_by', '=', lockedBy)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function markJobSucceeded(
  db: DbOrTx,
  id: number,
  lockedBy: string,
  outcome: { result: string; progress: JobProgress | undefined; finishedAt: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({
      status: 'SUCCESS',
      result: outcome.result,
      error: null,
      ...(outcome.progress ? { progress: JSON.stringify(outcome.progress) } : {}),
      finished_at: outcome.finishedAt,
      locked_by: null,
      locked_until: null,
    })
    .where('id', '=', id)
    .where('locked_by', '=', lockedBy)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function markJobFailed(
  db: DbOrTx,
  id: number,
  lockedBy: string,
  outcome: { error: string; finishedAt: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({ status: 'FAILURE', error: outcome.error, finished_at: outcome.finishedAt, locked_by: null, locked_until: null })
    .where('id', '=', id)
    .where('locked_by', '=', lockedBy)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Back to PENDING until runAfter, keeping the attempt and the error that caused the retry. */
export async function scheduleJobRetry(
  db: DbOrTx,
  id: number,
  lockedBy: string,
  retry: { error: string; runAfter: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({ status: 'PENDING', error: retry.error, run_after: retry.runAfter, locked_by: null, locked_until: null })
    .where('id', '=', id)
    .where('locked_by', '=', lockedBy)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Hands an interrupted job back (graceful shutdown): PENDING and due now, and the attempt is not
 * counted, since the job itself did nothing wrong.
 */
export async function releaseJob(db: DbOrTx, id: number, lockedBy: string, runAfter: Date): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set((eb) => ({
      status: 'PENDING',
      attempts: eb('attempts', '-', 1),
      run_after: runAfter,
      locked_by: null,
      locked_until: null,
    }))
    .where('id', '=', id)
    .where('locked_by', '=', lockedBy)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Running jobs claimed from this host (locked_by starting with `prefix`). */
export async function findStartedJobsClaimedBy(db: DbOrTx, prefix: string): Promise<Array<{ id: number; locked_by: string }>> {
  const escaped = prefix.replace(/[\\%_]/g, (c) => `\\${c}`);
  const rows = await db
    .selectFrom('jobs')
    .select(['id', 'locked_by'])
    .where('status', '=', 'STARTED')
    .where('locked_by', 'like', `${escaped}%`)
    .execute();
  return rows.filter((r): r is { id: number; locked_by: string } => r.locked_by !== null);
}

/**
 * Ends a dead claim's lease now, so that the next poll claims the job again (as an abandoned
 * job: the attempt counts). Only while that claim still holds the job.
 */
export async function expireJobLease(db: DbOrTx, id: number, lockedBy: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({ locked_until: new Date(now.getTime() - 1) })
    .where('id', '=', id)
    .where('status', '=', 'STARTED')
    .where('locked_by', '=', lockedBy)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Running jobs whose lease is still held at `now`: their uuid, type, payload and when they started. */
export async function findLiveClaims(db: DbOrTx, now: Date): Promise<Array<{ uuid: string; type: string; payload: unknown; started_at: Date | null }>> {
  return db
    .selectFrom('jobs')
    .select(['uuid', 'type', 'payload', 'started_at'])
    .where('status', '=', 'STARTED')
    .where('locked_until', '>=', now)
    .execute();
}
