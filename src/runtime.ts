// Opening the database and assembling the application's dependencies from a Config.
import { join } from 'node:path';
import type { Config } from './config.ts';
import type { AppDeps } from './context.ts';
import { openDatabase, type Database } from './platform/db.ts';
import { ensurePostgresDatabase } from './platform/pg-bootstrap.ts';
import { migrate } from './platform/migrator.ts';
import { systemClock, type Clock } from './platform/clock.ts';
import { createSealer } from './platform/secrets.ts';
import { AuthCache } from './modules/auth/auth-cache.ts';
import { JobWakeup } from './jobs/wakeup.ts';
import { createLogMailer, type Mailer } from './platform/mailer.ts';
import { MatchCache } from './modules/submissions/match-cache.ts';
import { ResponseCache } from './http/response-cache.ts';
import { SubmissionTargets } from './modules/submissions/target-cache.ts';
import { startPgliteUpkeep, type Upkeep, type UpkeepLog } from './platform/pglite-upkeep.ts';

/** 32 MiB of record ids: eight million matches across the cached queries. */
const MATCH_CACHE_BYTES = 32 * 1024 * 1024;

export interface Runtime {
  readonly deps: AppDeps;
  readonly database: Database;
  close(): Promise<void>;
}

export async function openRuntime(
  config: Config,
  options: {
    pgliteDir?: string;
    /** A dumped, migrated PGlite data directory to start from (tests); migrations still run after. */
    pgliteTemplate?: Blob | undefined;
    clock?: Clock;
    log?: (line: string) => void;
    mailer?: Mailer;
  } = {},
): Promise<Runtime> {
  if (config.databaseUrl) await ensurePostgresDatabase(config.databaseUrl, options.log);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    pgliteDir: options.pgliteDir ?? join(config.dataDir),
    pgliteTemplate: options.pgliteTemplate,
  });
  try {
    await migrate(database.db, options.log);
  } catch (error) {
    await database.close();
    throw error;
  }
  const deps: AppDeps = {
    config,
    db: database.db,
    clock: options.clock ?? systemClock,
    sealer: createSealer(config.secretKey),
    authCache: new AuthCache(config.authCacheMs),
    matchCache: new MatchCache(MATCH_CACHE_BYTES),
    responseCache: new ResponseCache(config.listCacheMs),
    submissionTargets: new SubmissionTargets(),
    jobWakeup: new JobWakeup(),
    mailer: options.mailer ?? createLogMailer((line) => console.log(line)),
  };
  return { deps, database, close: () => database.close() };
}

/**
 * The embedded database's VACUUM and ANALYZE loop (src/platform/pglite-upkeep.ts), in the one
 * process that opens it; none on PostgreSQL, whose autovacuum does this, or with
 * PGLITE_UPKEEP_INTERVAL=0.
 */
export function startDatabaseUpkeep(runtime: Runtime, log: UpkeepLog): Upkeep | undefined {
  const { database, deps } = runtime;
  if (database.backend !== 'pglite' || !database.busyMs || deps.config.pgliteUpkeepMs <= 0) return undefined;
  return startPgliteUpkeep(database.db, { intervalMs: deps.config.pgliteUpkeepMs, busyMs: database.busyMs, log });
}
