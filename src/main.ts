// `gather start`: migrate, then serve HTTP (and run WORKERS job workers) until SIGINT/SIGTERM.
// With WEB_PROCESSES above 1 (PostgreSQL only) the first process migrates, runs the job workers
// and keeps WEB_PROCESSES HTTP processes (node:cluster) serving the one port.
import cluster, { type Worker } from 'node:cluster';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import { buildApp } from './app.ts';
import { openRuntime, startDatabaseUpkeep } from './runtime.ts';
import { buildJobRegistry, recoverAtStart } from './compose.ts';
import { consoleJobLog, type JobLog } from './jobs/log.ts';
import { startWorkers, type Workers } from './jobs/worker.ts';
import { startRestDeliveries, type RestDeliveries } from './modules/restservices/delivery.ts';
import type { Upkeep } from './platform/pglite-upkeep.ts';
import { collectOnceAfter } from './platform/idle-collect.ts';

/** A start's garbage is collected this long after the server listens (idle-collect.ts). */
const START_COLLECT_MS = 1000;

export async function startServer(config: Config): Promise<void> {
  if (config.webProcesses > 1 && !config.databaseUrl) {
    throw new Error('WEB_PROCESSES above 1 needs DATABASE_URL: the embedded database can serve only one process');
  }
  if (config.webProcesses > 1 && cluster.isPrimary) return startPrimary(config);
  // A cluster's HTTP processes leave the jobs to the primary.
  return serve(config, { jobWorkers: cluster.isPrimary ? config.workers : 0 });
}

async function serve(config: Config, options: { jobWorkers: number }): Promise<void> {
  const runtime = await openRuntime(config, { log: (line) => console.log(line) });
  // A cluster's HTTP processes leave this to the primary, which did it before starting them.
  if (cluster.isPrimary) await recoverAtStart(runtime.deps, consoleJobLog);
  const app = await buildApp(runtime.deps, { logger: { level: config.logLevel } });
  let workers: Workers | undefined;
  let deliveries: RestDeliveries | undefined;
  let upkeep: Upkeep | undefined;
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    app.log.info(`${signal} received, shutting down`);
    await app.close();
    await deliveries?.stop();
    await workers?.stop();
    await upkeep?.stop();
    await runtime.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  // An HTTP process whose primary is gone (even killed outright) stops too, freeing the port.
  if (cluster.isWorker) process.on('disconnect', () => void stop('primary gone'));
  await app.listen({ port: config.port, host: config.host });
  const backend = runtime.database.backend === 'pglite' ? `embedded PostgreSQL in ${config.dataDir}` : 'PostgreSQL at DATABASE_URL';
  if (cluster.isPrimary) app.log.info(`Gather is listening on http://${config.host}:${config.port} (${backend})`);
  if (options.jobWorkers > 0 && !stopping) {
    workers = startWorkers(runtime.deps, buildJobRegistry(), { count: options.jobWorkers, log: jobLogTo(app.log) });
    app.log.info(`${options.jobWorkers} job worker${options.jobWorkers === 1 ? '' : 's'} started`);
  }
  // REST service deliveries run where the job workers do, in loops of their own.
  if (options.jobWorkers > 0 && !stopping) deliveries = startRestDeliveries(runtime.deps, { log: jobLogTo(app.log) });
  // Only this process opens an embedded database, so its VACUUM and ANALYZE run here.
  if (!stopping) upkeep = startDatabaseUpkeep(runtime, jobLogTo(app.log));
  collectOnceAfter(START_COLLECT_MS);
}

/**
 * The cluster's primary: migrates before any HTTP process starts, runs the job workers, replaces
 * an HTTP process that dies after it was serving, and on SIGINT/SIGTERM stops them all.
 */
async function startPrimary(config: Config): Promise<void> {
  const runtime = await openRuntime(config, { log: (line) => console.log(line) });
  await recoverAtStart(runtime.deps, consoleJobLog);
  const quiet = ['error', 'fatal', 'silent', 'warn'].includes(config.logLevel);
  const serving = new Set<Worker>();
  let stopping = false;
  cluster.on('listening', (worker) => serving.add(worker));
  cluster.on('exit', (worker, code, signal) => {
    const wasServing = serving.delete(worker);
    if (stopping) return;
    console.error(`web process ${worker.process.pid} exited (${signal ?? code})${wasServing ? '; starting another' : ''}`);
    if (wasServing) cluster.fork();
    else if (Object.keys(cluster.workers ?? {}).length === 0) void stop('no web process could start', 1);
  });
  for (let i = 0; i < config.webProcesses; i++) cluster.fork();
  if (!quiet) console.log(`Gather is listening on http://${config.host}:${config.port} with ${config.webProcesses} web processes (PostgreSQL at DATABASE_URL)`);

  const workers = config.workers > 0 ? startWorkers(runtime.deps, buildJobRegistry(), { count: config.workers, log: consoleJobLog }) : undefined;
  const deliveries = config.workers > 0 ? startRestDeliveries(runtime.deps, { log: consoleJobLog }) : undefined;
  const stop = async (reason: string, exitCode = 0): Promise<void> => {
    if (stopping) return;
    stopping = true;
    if (!quiet) console.log(`${reason}, shutting down`);
    const running = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    await Promise.all(
      running.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.isDead()) return resolve();
            w.once('exit', () => resolve());
            w.process.kill('SIGTERM');
          }),
      ),
    );
    await deliveries?.stop();
    await workers?.stop();
    await runtime.close();
    process.exit(exitCode);
  };
  process.on('SIGINT', () => void stop('SIGINT received'));
  process.on('SIGTERM', () => void stop('SIGTERM received'));
}

export function jobLogTo(logger: FastifyBaseLogger): JobLog {
  return (level, message, error) => {
    if (error === undefined) logger[level](message);
    else logger[level]({ err: error }, message);
  };
}
