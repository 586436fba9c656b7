// Shared bench helpers: start a real Gather server process on a backend, wait for it, stop it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const repoRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));
export const POSTGRES_SERVER = process.env['BENCH_POSTGRES'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export type Backend = 'pglite' | 'postgres';

export interface BenchServer {
  baseUrl: string;
  backend: Backend;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function postgresAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_SERVER, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_SERVER });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/**
 * The environment and node flags `npm start` runs the server with (package.json's start script:
 * `NAME=value … node --flag … bin/gather.js start`), so that a bench measures what users run.
 * BENCH_START, a script of the same form, replaces it: a bench of other settings, side by side.
 */
function npmStartSettings(): { env: Record<string, string>; nodeArgs: string[] } {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const script = process.env['BENCH_START'] ?? manifest.scripts['start'] ?? '';
  const words = script.trim().split(/\s+/);
  const env: Record<string, string> = {};
  let at = 0;
  for (; /^[A-Z_]+=/.test(words[at] ?? ''); at += 1) {
    const [name = '', ...value] = (words[at] ?? '').split('=');
    env[name] = value.join('=');
  }
  if (words[at] !== 'node') throw new Error(`the start script is not "… node … bin/gather.js start": ${script}`);
  const nodeArgs: string[] = [];
  for (at += 1; (words[at] ?? '').startsWith('--'); at += 1) nodeArgs.push(words[at] ?? '');
  return { env, nodeArgs };
}

export async function startServer(
  backend: Backend,
  port: number,
  extraEnv: Record<string, string> = {},
  nodeArgs: string[] = [],
  /** PostgreSQL: a named database kept after the run (created when missing) instead of a fresh one. */
  options: { keepDatabase?: string } = {},
): Promise<BenchServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gather-bench-'));
  const asStarted = npmStartSettings();
  const env: NodeJS.ProcessEnv = { ...process.env, ...asStarted.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...extraEnv };
  delete env['DATABASE_URL'];
  let dbName: string | undefined;
  const kept = options.keepDatabase;
  // Tokens are sealed under SECRET_KEY: a kept database needs the same key on every run.
  if (kept && extraEnv['SECRET_KEY'] === undefined) env['SECRET_KEY'] = `gather-bench-${kept}`;
  if (backend === 'postgres' && kept) {
    const exists = new pg.Client({ connectionString: POSTGRES_SERVER });
    await exists.connect();
    const found = (await exists.query('SELECT 1 FROM pg_database WHERE datname = $1', [kept])).rowCount;
    await exists.end();
    if (!found) await adminQuery(`CREATE DATABASE ${kept}`);
    const url = new URL(POSTGRES_SERVER);
    url.pathname = `/${kept}`;
    env['DATABASE_URL'] = url.toString();
  } else if (backend === 'postgres') {
    dbName = `gather_bench_${process.pid}_${port}`;
    await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await adminQuery(`CREATE DATABASE ${dbName}`);
    const url = new URL(POSTGRES_SERVER);
    url.pathname = `/${dbName}`;
    env['DATABASE_URL'] = url.toString();
  }
  // BENCH_SERVER_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) reaches the server's node.
  const byHand = (process.env['BENCH_SERVER_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...asStarted.nodeArgs, ...nodeArgs, ...byHand, join(repoRoot, 'bin/gather.js'), 'start'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${baseUrl}/api/v1/`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('server did not start within 120 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    baseUrl,
    backend,
    process: child,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
      if (dbName) await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    },
  };
}

/** Registers an account (or, in a kept database, signs in to it) and returns its API token. */
export async function createAccount(baseUrl: string, username: string, options: { mayExist?: boolean } = {}): Promise<string> {
  const password = `Bench-${username}-pw-42`;
  const created = await fetch(`${baseUrl}/api/v1/profiles`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, first_name: 'Bench', email: `${username}@example.org`, password }),
  });
  const exists = created.status === 400 && options.mayExist && /already exists/i.test(await created.clone().text());
  if (created.status !== 201 && !exists) throw new Error(`registration failed: ${created.status} ${await created.text()}`);
  const me = await fetch(`${baseUrl}/api/v1/user`, {
    headers: { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` },
  });
  const body = (await me.json()) as { api_token: string };
  return body.api_token;
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export function printTable(headers: string[], rows: Array<Array<string | number>>): void {
  const cells = rows.map((row) => row.map(String));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (values: string[]): string => `| ${values.map((v, i) => v.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  console.log(line(headers));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of cells) console.log(line(row));
}
