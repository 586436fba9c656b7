// `gather start`: migrate, then serve HTTP until SIGINT/SIGTERM.
import type { Config } from './config.ts';
import { buildApp } from './app.ts';
import { openRuntime } from './runtime.ts';

export async function startServer(config: Config): Promise<void> {
  const runtime = await openRuntime(config, { log: (line) => console.log(line) });
  const app = await buildApp(runtime.deps, { logger: { level: config.logLevel } });
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    app.log.info(`${signal} received, shutting down`);
    await app.close();
    await runtime.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  await app.listen({ port: config.port, host: config.host });
  const backend = runtime.database.backend === 'pglite' ? `embedded PostgreSQL in ${config.dataDir}` : 'PostgreSQL at DATABASE_URL';
  app.log.info(`Gather is listening on http://${config.host}:${config.port} (${backend})`);
}
