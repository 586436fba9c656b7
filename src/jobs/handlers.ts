// Every job type this build runs, for the server's in-process workers and `gather worker`.
// Modules add one line each: registry.register('export_async', runExport, { leaseSeconds: 120 }).
import { JobRegistry } from './registry.ts';
import { DELETE_JOB, PUBLISH_JOB, runDeleteJob, runPublishJob } from '../modules/forms/async.ts';
import { EXPORT_JOB, runExportJob } from '../modules/exports/jobs.ts';
import { IMPORT_JOB } from '../modules/imports/service.ts';
import { runImportJob } from '../modules/imports/job.ts';
import { COUNT_STORED_REPEATS_JOB, runCountStoredRepeatsJob } from '../modules/submissions/repeat-counts-job.ts';

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
