// Every job type this build runs, for the server's in-process workers and `gather worker`.
// Modules add one line each: registry.register('export_async', runExport, { leaseSeconds: 120 }).
import { JobRegistry } from './registry.ts';

export function buildJobRegistry(): JobRegistry {
  const registry = new JobRegistry();
  return registry;
}
