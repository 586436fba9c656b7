// `DATABASE_URL=…/gather npm start` on a server without that database: created when the user may,
// otherwise (or when the server is down) one line saying what to do, never a stack trace.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ensurePostgresDatabase } from '../src/platform/pg-bootstrap.ts';

const repoRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));
const serverUrl = process.env['DATABASE_URL'];

/** `gather migrate` (what `start` does first) with this DATABASE_URL: exit code and stderr. */
function migrateWith(databaseUrl: string): { status: number | null; stderr: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, GATHER_TSX: '1' };
  delete env['NODE_TEST_CONTEXT'];
  const result = spawnSync(process.execPath, [join(repoRoot, 'bin/gather.js'), 'migrate'], { env, encoding: 'utf8', timeout: 120_000 });
  return { status: result.status, stderr: result.stderr };
}

function urlFor(database: string, user?: string): string {
  const url = new URL(serverUrl ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/${database}`;
  if (user) url.username = user;
  return url.toString();
}

const serverAddress = ((url) => `${url.hostname}:${url.port || '5432'}`)(new URL(urlFor('postgres')));

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: urlFor('postgres') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

test('an unreachable PostgreSQL stops the start with one line', () => {
  const { status, stderr } = migrateWith('postgres://postgres@127.0.0.1:1/gather');
  assert.equal(status, 1);
  assert.equal(stderr.trim().split('\n').length, 1, stderr);
  assert.match(stderr, /^gather: cannot reach PostgreSQL at 127\.0\.0\.1:1 \(ECONNREFUSED\)/);
  assert.doesNotMatch(stderr, /\n\s+at /);
});

test('a missing database is created, once, and logged', { skip: !serverUrl && 'needs DATABASE_URL' }, async () => {
  const name = `gather_boot_${randomBytes(4).toString('hex')}`;
  const lines: string[] = [];
  try {
    await ensurePostgresDatabase(urlFor(name), (line) => lines.push(line));
    assert.deepEqual(lines, [`created database "${name}" on ${serverAddress} (it did not exist)`]);
    await ensurePostgresDatabase(urlFor(name), (line) => lines.push(line));
    assert.equal(lines.length, 1, 'an existing database is left alone');
    const { status, stderr } = migrateWith(urlFor(name));
    assert.equal(status, 0, stderr);
  } finally {
    await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
});

test('a user who may not create it is told the command to run', { skip: !serverUrl && 'needs DATABASE_URL' }, async () => {
  const role = `gather_nocreate_${randomBytes(4).toString('hex')}`;
  const name = `gather_boot_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE ROLE ${role} LOGIN`));
  try {
    const { status, stderr } = migrateWith(urlFor(name, role));
    assert.equal(status, 1);
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.ok(stderr.startsWith(`gather: database "${name}" does not exist on ${serverAddress} and could not be created`), stderr);
    assert.ok(stderr.includes(`\`createdb -h ${serverAddress.replace(':', ' -p ')} -U postgres -O ${role} ${name}\``), stderr);
    const exists = await admin((c) => c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]));
    assert.equal(exists.rowCount, 0);
  } finally {
    await admin((c) => c.query(`DROP ROLE IF EXISTS ${role}`));
  }
});
