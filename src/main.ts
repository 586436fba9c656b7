// `gather start`: migrate, then serve HTTP (and run WORKERS job workers) until SIGINT/SIGTERM.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import { buildApp } from './app.ts';
import { openRuntime } from './runtime.ts';
import { buildJobRegistry } from './jobs/handlers.ts';
import type { JobLog } from './jobs/log.ts';
import { startWorkers, type Workers } from './jobs/worker.ts';

export async function startServer(config: Config): Promise<void> {
  const runtime = await openRuntime(config, { log: (line) => console.log(line) });
  const app = await buildApp(runtime.deps, { logger: { level: config.logLevel } });
  let workers: Workers | undefined;
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    app.log.info(`${signal} received, shutting down`);
    await app.close();
    await workers?.stop();
    await runtime.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  await app.listen({ port: config.port, host: config.host });
  const backend = runtime.database.backend === 'pglite' ? `embedded PostgreSQL in ${config.dataDir}` : 'PostgreSQL at DATABASE_URL';
  app.log.info(`Gather is listening on http://${config.host}:${config.port} (${backend})`);
  if (config.workers > 0 && !stopping) {
    workers = startWorkers(runtime.deps, buildJobRegistry(), { count: config.workers, log: jobLogTo(app.log) });
    app.log.info(`${config.workers} job worker${config.workers === 1 ? '' : 's'} started`);
  }
}

export function jobLogTo(logger: FastifyBaseLogger): JobLog {
  return (level, message, error) => {
    if (error === undefined) logger[level](message);
    else logger[level]({ err: error }, message);
  };
}
