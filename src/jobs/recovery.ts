// What a process does when it starts, before it answers requests or runs jobs: takes back the
// jobs that processes of this host held when they died (killed, crashed), rather than leaving
// them until their lease runs out (five minutes for an export), and removes what those processes
// left behind: export `.part` files, spools, imports' temporary files, the staged rows and stored
// files of imports that will not run again; on PGlite it also finishes imports whose publishing
// was interrupted. Live processes' claims and files are never touched (process-identity.ts), and
// claims of other hosts wait out their lease as before.
// The modules' part (which files and rows, which interrupted work) is wired in by src/compose.ts.
import type { AppDeps } from '../context.ts';
import { reclaimAbandonedJobs } from './reclaim.ts';
import type { JobLog } from './log.ts';

export interface Recovery {
  reclaimedJobs: number;
  removedFiles: number;
  finishedImports: number;
}

/** What the modules clean up after a crash, given by the composition root. */
export interface RecoveryCleanups {
  /** Finishes work a dead process left half done (imports' publishing); how many it finished. */
  finishInterrupted(deps: AppDeps): Promise<number>;
  /** Removes what dead processes left behind (staged rows, part files, spools); the files removed. */
  removeLeftovers(deps: AppDeps): Promise<string[]>;
}

export async function recoverJobsAtStart(deps: AppDeps, log: JobLog, cleanups: RecoveryCleanups): Promise<Recovery> {
  const reclaimedJobs = await reclaimAbandonedJobs(deps);
  const finishedImports = await cleanups.finishInterrupted(deps);
  const removed = await cleanups.removeLeftovers(deps);
  if (reclaimedJobs + removed.length + finishedImports > 0) {
    log('info', `after a crash: ${reclaimedJobs} job(s) of ended processes taken back, ${finishedImports} import(s) finished, ${removed.length} leftover file(s) removed`);
  }
  return { reclaimedJobs, removedFiles: removed.length, finishedImports };
}
