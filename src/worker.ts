// `gather worker`: job workers only, no HTTP, until SIGINT/SIGTERM. On PostgreSQL any number of
// these can share the queue with the servers.
import type { Config } from './config.ts';
import { openRuntime, startDatabaseUpkeep } from './runtime.ts';
import { buildJobRegistry, recoverAtStart } from './compose.ts';
import { consoleJobLog } from './jobs/log.ts';
import { startWorkers } from './jobs/worker.ts';
import { startRestDeliveries } from './modules/restservices/delivery.ts';

export async function runWorkerProcess(config: Config): Promise<void> {
  const runtime = await openRuntime(config, { log: (line) => console.log(line) });
  await recoverAtStart(runtime.deps, consoleJobLog);
  const count = Math.max(1, config.workers);
  const workers = startWorkers(runtime.deps, buildJobRegistry(), { count, log: consoleJobLog });
  const deliveries = startRestDeliveries(runtime.deps, { log: consoleJobLog });
  // On the embedded database this process is the only one that opens it (no server beside it).
  const upkeep = startDatabaseUpkeep(runtime, consoleJobLog);
  console.log(`${count} job worker${count === 1 ? '' : 's'} started`);
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal} received, finishing running jobs`);
    await deliveries.stop();
    await workers.stop();
    await upkeep?.stop();
    await runtime.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
