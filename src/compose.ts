// The composition root of the background side: the modules' job handlers and what they clean up
// after a crash, handed to src/jobs, which imports no module (eslint's layer zones).
import type { AppDeps } from './context.ts';
import { JobRegistry } from './jobs/registry.ts';
import type { JobLog } from './jobs/log.ts';
import { recoverJobsAtStart, type Recovery, type RecoveryCleanups } from './jobs/recovery.ts';
import { DELETE_JOB, PUBLISH_JOB, runDeleteJob, runPublishJob } from './modules/forms/async.ts';
import { EXPORT_JOB, runExportJob } from './modules/exports/jobs.ts';
import { sweepExportLeftovers } from './modules/exports/files.ts';
import { IMPORT_JOB } from './modules/imports/service.ts';
import { runImportJob } from './modules/imports/job.ts';
import { deleteAbandonedImports } from './modules/imports/repository.ts';
import { finishInterruptedPublishes } from './modules/imports/publish.ts';
import { sweepImportTempDirs } from './modules/imports/upload.ts';
import { COUNT_STORED_REPEATS_JOB, runCountStoredRepeatsJob } from './modules/submissions/repeat-counts-job.ts';

/**
 * Every job type this build runs, for the server's in-process workers and `gather worker`.
 * Modules add one line each: registry.register('export_async', runExport, { leaseSeconds: 120 }).
 */

export function buildJobRegistry(): JobRegistry {
  const registry = new JobRegistry();
  registry.register(PUBLISH_JOB, runPublishJob, { maxAttempts: 1 });
  registry.register(DELETE_JOB, runDeleteJob);
  // Big exports run for minutes: a 5-minute lease, renewed by the heartbeat every 100 s.
  registry.register(EXPORT_JOB, runExportJob, { leaseSeconds: 300 });
  // A short lease: an import killed with its server is taken up again soon after a restart.
  registry.register(IMPORT_JOB, runImportJob, { maxAttempts: 3, leaseSeconds: 20 });
  // Each batch is committed on its own: a retry goes on from where the last one stopped.
  registry.register(COUNT_STORED_REPEATS_JOB, runCountStoredRepeatsJob, { maxAttempts: 5 });
  return registry;
}

const cleanups: RecoveryCleanups = {
  // PGlite is this process's alone (the directory lock): nobody else is publishing.
  finishInterrupted: async (deps) => (deps.config.databaseUrl === undefined ? finishInterruptedPublishes(deps.db) : 0),
  removeLeftovers: async (deps) => {
    await deleteAbandonedImports(deps.db, IMPORT_JOB);
    return [...(await sweepExportLeftovers(deps.config.dataDir)), ...(await sweepImportTempDirs())];
  },
};

/** What a process does when it starts, before it answers requests or runs jobs (src/jobs/recovery.ts). */
export function recoverAtStart(deps: AppDeps, log: JobLog): Promise<Recovery> {
  return recoverJobsAtStart(deps, log, cleanups);
}
