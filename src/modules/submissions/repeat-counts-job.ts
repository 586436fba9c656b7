// The background job migration 0015 queues on a database holding records stored before their
// repeat counts were kept: it counts them, a batch at a time (each batch its own statement, so a
// stop loses at most one batch and the job goes on where it was), until none is left.
import type { JobContext } from '../../jobs/registry.ts';
import { countUncountedRecords, storeRepeatCountsOfOldRecords } from './repository.ts';

export const COUNT_STORED_REPEATS_JOB = 'count_stored_repeats';

/** Records per statement: a few hundred milliseconds of PostgreSQL's time. */
const BATCH = 2_000;

export async function runCountStoredRepeatsJob(ctx: JobContext): Promise<{ counted: number }> {
  const total = await countUncountedRecords(ctx.deps.db);
  let counted = 0;
  for (;;) {
    ctx.signal.throwIfAborted();
    const stored = await storeRepeatCountsOfOldRecords(ctx.deps.db, BATCH);
    if (stored === 0) break;
    counted += stored;
    await ctx.reportProgress(Math.min(counted, total), total);
  }
  return { counted };
}
