// Opens the database: PGlite in DATA_DIR by default, PostgreSQL through `pg` when DATABASE_URL is set.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import {
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Dialect,
  Transaction,
} from 'kysely';
import type pg from 'pg';
import { loadPg } from './pg-module.ts';
import type { Schema } from './schema.ts';
import { PREPARED_MARKER } from './prepared-marker.ts';
import { notePool } from './pg-copy.ts';
import { initialiseInChildProcess } from './pglite-init.ts';
import { acquireDirectoryLock, type DirectoryLock } from './dir-lock.ts';

/**
 * PGlite's own bytea parser turns the hex text into bytes in JavaScript, about 90 ms per MB (a
 * 2 MB photo took 180 ms to download); Buffer's native hex decoder takes under 10 ms for the same
 * bytes. The bytes come back as a plain Uint8Array, as PGlite gives them; text in the older escape
 * format goes to PGlite's parser.
 */
function fastByteaParser(fallback: ((text: string, typeId?: number) => unknown) | undefined) {
  return (text: string, typeId?: number): unknown => {
    if (!text.startsWith('\\x')) return fallback ? fallback(text, typeId) : text;
    const bytes = Buffer.from(text.slice(2), 'hex');
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

export type Db = Kysely<Schema>;
export type Tx = Transaction<Schema>;
export type DbOrTx = Db | Tx;

/**
 * Runs `work` in a transaction: a new one on a database, or the caller's own when `db` already is
 * one, so that a service called inside another's transaction commits or rolls back with it.
 * The one way the code opens a transaction (lint refuses `.transaction()` elsewhere).
 */
export function inTransaction<T>(db: DbOrTx, work: (trx: Tx) => Promise<T>): Promise<T> {
  // eslint-disable-next-line no-restricted-syntax -- the one place a transaction is opened
  return db instanceof Transaction ? work(db) : db.transaction().execute(work);
}

export interface Database {
  readonly db: Db;
  readonly backend: 'pglite' | 'postgres';
  /** PGlite: milliseconds its one connection has been in use since it opened; for its upkeep. */
  readonly busyMs?: () => number;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  /** PGlite data directory; `memory://` for an in-memory database (tests). */
  pgliteDir: string;
  /** Refuse to open a PGlite directory that another process holds. */
  lock?: boolean;
  poolSize?: number;
  /**
   * A PGlite data directory dumped by `dumpDataDir`, loaded instead of running initdb (the test
   * suite starts each file from one migrated template). Only into a directory with no database.
   */
  pgliteTemplate?: Blob | undefined;
}

/**
 * A hot statement whose text starts with `/* prepared:NAME *\/` is prepared once per pg connection
 * and then only bound and executed: PostgreSQL skips parsing and planning it again, which is most
 * of the cost of a small statement. Only statements whose plan suits any table size are marked:
 * after five runs PostgreSQL may keep one generic plan for them. (On PGlite, see
 * pglite-statements.ts.)
 */
function prepareMarkedStatements(client: pg.PoolClient): void {
  const plain = client.query.bind(client) as (...args: unknown[]) => unknown;
  const query = (...args: unknown[]): unknown => {
    const [text, values] = args;
    const name = typeof text === 'string' && args.length === 2 && Array.isArray(values) ? PREPARED_MARKER.exec(text)?.[1] : undefined;
    return name ? plain({ name, text, values }) : plain(...args);
  };
  client.query = query as typeof client.query;
}

/**
 * PostgreSQL's settings inside PGlite, sized for a small server. Its shared memory lives in the
 * WebAssembly heap, which is written through at start and never shrinks: the default 128MB of
 * buffers was most of the idle server's memory. Scans (exports) go through a small ring of buffers
 * whatever this is, the operating system caches the data files below it, and the heap grows as
 * far as maintenance_work_mem during an index build. 8MB of buffers held less than 16MB and ingest
 * cost the same in alternated runs on a quiet machine (bench/RESULTS.md, 2026-11-28).
 * PGlite has one connection: the lock and process tables sized for PostgreSQL's default 100
 * connections and 10 WAL senders would be memory for nothing.
 */
const PGLITE_SETTINGS = ['shared_buffers=8MB', 'maintenance_work_mem=16MB', 'max_connections=5', 'max_wal_senders=0'];

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    // No JIT compilation: it cost about 1.2 s at the start of a scan of 1,000,000 records (an
    // export's repeat counts) and saves far less on the queries this server runs.
    const driver = await loadPg();
    const pool = new driver.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10, options: '-c jit=off' });
    pool.on('connect', prepareMarkedStatements);
    const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
    notePool(db, pool);
    return { db, backend: 'postgres', close: () => db.destroy() };
  }
  // PostgreSQL's code runs as Liftoff's baseline WebAssembly only: optimising its hot functions
  // on the side held 50-70 MB more for the life of the process (code, and the compilers' freed
  // memory, which the C heap keeps), and ingest and CSV export cost the same CPU either way
  // (bench/RESULTS.md, 2026-11-26). Set before PGlite compiles its module.
  setFlagsFromString('--liftoff-only');
  const { PGlite, types } = await import('@electric-sql/pglite');
  // The driver loads PGlite's protocol code, which a server on PostgreSQL never needs.
  const { PGliteDriver } = await import('./pglite-driver.ts');
  let lock: DirectoryLock | undefined;
  let dataDir = options.pgliteDir;
  if (!dataDir.startsWith('memory://')) {
    mkdirSync(dataDir, { recursive: true });
    if (options.lock !== false) lock = acquireDirectoryLock(dataDir);
    dataDir = join(dataDir, 'pgdata');
    if (!options.pgliteTemplate) await initialiseInChildProcess(dataDir);
  }
  try {
    const pglite = await PGlite.create(dataDir, {
      startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((setting) => ['-c', setting])],
      ...(options.pgliteTemplate ? { loadDataDir: options.pgliteTemplate } : {}),
      parsers: { [types.BYTEA]: fastByteaParser(types.parsers[types.BYTEA]) },
    });
    const driver = new PGliteDriver(pglite);
    const dialect: Dialect = {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    };
    const db = new Kysely<Schema>({ dialect });
    return {
      db,
      backend: 'pglite',
      busyMs: () => driver.busyMs(),
      close: async () => {
        await db.destroy();
        lock?.release();
      },
    };
  } catch (error) {
    lock?.release();
    throw error;
  }
}
