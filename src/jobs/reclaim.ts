// Taking back the jobs of this host's ended processes: a claim whose process is gone (killed,
// crashed) has its lease ended now, so that the next poll runs the job again instead of waiting
// out the lease (five minutes for an export). Done at start and then periodically by the workers
// (a `gather worker` may die while the server keeps running).
import type { AppDeps } from '../context.ts';
import { claimIsAbandoned, hostClaimPrefix } from './claimant.ts';
import { expireJobLease, findStartedJobsClaimedBy } from './repository.ts';

/** Ends the lease of every running job claimed on this host by a process that is gone; answers how many. */
export async function reclaimAbandonedJobs(deps: AppDeps): Promise<number> {
  const now = deps.clock.now();
  let reclaimed = 0;
  for (const job of await findStartedJobsClaimedBy(deps.db, hostClaimPrefix())) {
    if (claimIsAbandoned(job.locked_by) && (await expireJobLease(deps.db, job.id, job.locked_by, now))) reclaimed++;
  }
  return reclaimed;
}
