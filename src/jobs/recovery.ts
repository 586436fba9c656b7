// What a process does when it starts, before it answers requests or runs jobs: takes back the
// jobs that processes of this host held when they died (killed, crashed), rather than leaving
// them until their lease runs out (five minutes for an export), and removes what those processes
// left behind: export `.part` files, spools, imports' temporary files, the staged rows and stored
// files of imports that will not run again; on PGlite it also finishes imports whose publishing
// was interrupted. Live processes' claims and files are never touched (process-identity.ts), and
// claims of other hosts wait out their lease as before.
import type { AppDeps } from '../context.ts';
import { sweepExportLeftovers } from '../modules/exports/files.ts';
import { IMPORT_JOB } from '../modules/imports/service.ts';
import { deleteAbandonedImports } from '../modules/imports/repository.ts';
import { finishInterruptedPublishes } from '../modules/imports/publish.ts';
import { sweepImportTempDirs } from '../modules/imports/upload.ts';
import { reclaimAbandonedJobs } from './reclaim.ts';
import type { JobLog } from './log.ts';

export interface Recovery {
  reclaimedJobs: number;
  removedFiles: number;
  finishedImports: number;
}

export async function recoverAtStart(deps: AppDeps, log: JobLog): Promise<Recovery> {
  const reclaimedJobs = await reclaimAbandonedJobs(deps);
  // PGlite is this process's alone (the directory lock): nobody else is publishing.
  const finishedImports = deps.config.databaseUrl === undefined ? await finishInterruptedPublishes(deps.db) : 0;
  await deleteAbandonedImports(deps.db, IMPORT_JOB);
  const removed = [...(await sweepExportLeftovers(deps.config.dataDir)), ...(await sweepImportTempDirs())];
  if (reclaimedJobs + removed.length + finishedImports > 0) {
    log('info', `after a crash: ${reclaimedJobs} job(s) of ended processes taken back, ${finishedImports} import(s) finished, ${removed.length} leftover file(s) removed`);
  }
  return { reclaimedJobs, removedFiles: removed.length, finishedImports };
}
