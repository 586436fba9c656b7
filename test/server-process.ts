// A real Gather server in its own process, for tests that kill it: the same entry point as
// `npm start`, on a PGlite data directory or on a fresh PostgreSQL database (when DATABASE_URL is set).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPostgresDatabase } from './helpers.ts';
import { PGLITE_TEMPLATE_ENV } from './db-template.ts';

const repoRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolvePort(port));
    });
  });
}

export interface ServerProcess {
  readonly baseUrl: string;
  readonly child: ChildProcess;
  /** SIGKILL: no shutdown code runs, as in a power cut of the process. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** Where a server process keeps its data; survives the processes started on it. */
export interface ServerStorage {
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  start(env?: Record<string, string>): Promise<ServerProcess>;
  remove(): Promise<void>;
}

/**
 * Unpacks the run's migrated PGlite template (see db-template.ts) where the server will look for
 * its database, so that its first start skips initdb; without a template it runs initdb itself.
 */
function seedPgliteDataDir(dataDir: string): void {
  const template = process.env[PGLITE_TEMPLATE_ENV];
  if (!template) return;
  const pgdata = join(dataDir, 'pgdata');
  mkdirSync(pgdata);
  // The tarball names its members from `/`; tar makes them relative to -C (and says so on stderr).
  const untar = spawnSync('tar', ['-xf', template, '-C', pgdata], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (untar.status !== 0) throw new Error(`unpacking the template database failed: ${untar.stderr.toString()}`);
}

export async function createServerStorage(): Promise<ServerStorage> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gather-process-'));
  const serverUrl = process.env['DATABASE_URL'];
  if (!serverUrl) seedPgliteDataDir(dataDir);
  const pgDb = serverUrl ? await createPostgresDatabase(serverUrl) : undefined;
  return {
    dataDir,
    databaseUrl: pgDb?.url,
    start: (env = {}) => startProcess(dataDir, pgDb?.url, env),
    remove: async () => {
      rmSync(dataDir, { recursive: true, force: true });
      await pgDb?.drop();
    },
  };
}

async function startProcess(dataDir: string, databaseUrl: string | undefined, extraEnv: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, SECRET_KEY: 'process-test-secret', LOG_LEVEL: 'warn', ...extraEnv };
  delete env['DATABASE_URL'];
  delete env['NODE_TEST_CONTEXT']; // the child is a server, not a test file
  if (databaseUrl) env['DATABASE_URL'] = databaseUrl;
  const child = spawn(process.execPath, [join(repoRoot, 'bin/gather.js'), 'start'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${baseUrl}/api/v1/`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('server did not start within 180 s');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    baseUrl,
    child,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
