// One migrated database per test run, copied for each test file instead of migrating a new one:
// on PGlite a dumped data directory that each file loads (loading skips initdb, most of the cost
// of a new in-memory PGlite), on PostgreSQL a database that CREATE DATABASE … TEMPLATE copies.
// scripts/run-tests.mjs builds it (`node --import tsx test/db-template.ts build DIR`) and names it
// in the environment; without those variables each file migrates its own database, as before.
import { readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { openDatabase } from '../src/platform/db.ts';
import { migrate } from '../src/platform/migrator.ts';
import { PGliteDriver } from '../src/platform/pglite-driver.ts';
import type { Schema } from '../src/platform/schema.ts';

/** Path of the migrated PGlite data directory's tarball. */
export const PGLITE_TEMPLATE_ENV = 'GATHER_TEST_PGLITE_TEMPLATE';
/** Name of the migrated template database on the DATABASE_URL server. */
export const PG_TEMPLATE_ENV = 'GATHER_TEST_PG_TEMPLATE';

let pgliteTemplate: Promise<Blob> | undefined;

/** The run's migrated PGlite template, read once per test file; undefined when there is none. */
export function pgliteTemplateBlob(): Promise<Blob> | undefined {
  const path = process.env[PGLITE_TEMPLATE_ENV];
  if (!path) return undefined;
  pgliteTemplate ??= readFile(path).then((bytes) => new Blob([bytes]));
  return pgliteTemplate;
}

/** The run's template database on PostgreSQL, when there is one. */
export function postgresTemplateName(): string | undefined {
  const name = process.env[PG_TEMPLATE_ENV];
  // The name goes into SQL as an identifier: accept only what build() makes.
  return name && /^gather_template_\w+$/.test(name) ? name : undefined;
}

function adminUrl(serverUrl: string, database = 'postgres'): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function adminQuery(serverUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl(serverUrl) });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

async function buildPglite(dir: string): Promise<Record<string, string>> {
  const pglite = await PGlite.create('memory://');
  const db = new Kysely<Schema>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new PGliteDriver(pglite),
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  await migrate(db);
  // Every test file loads the dump into a new PGlite, and writing its files into PGlite's
  // in-memory file system is most of that load: template0 and template1, which no test uses
  // (PGlite never creates a database), are a third of the files.
  for (const unused of ['template1', 'template0']) {
    await pglite.exec(`ALTER DATABASE ${unused} IS_TEMPLATE false`);
    await pglite.exec(`DROP DATABASE ${unused}`);
  }
  // The dump copies the files as they are: write the dirty buffers out first, so that loading it
  // needs no recovery.
  await pglite.exec('CHECKPOINT');
  const tarball = await pglite.dumpDataDir('none');
  await db.destroy();
  const path = join(dir, 'gather-test-template.tar');
  await writeFile(path, new Uint8Array(await tarball.arrayBuffer()));
  return { [PGLITE_TEMPLATE_ENV]: path };
}

async function buildPostgres(serverUrl: string): Promise<Record<string, string>> {
  const name = `gather_template_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const database = await openDatabase({ databaseUrl: adminUrl(serverUrl, name), pgliteDir: 'memory://', poolSize: 1 });
  try {
    await migrate(database.db);
  } finally {
    await database.close();
  }
  return { [PG_TEMPLATE_ENV]: name };
}

/** Builds the template for the database the tests will use; returns the variables that name it. */
export async function buildTemplate(dir: string): Promise<Record<string, string>> {
  const serverUrl = process.env['DATABASE_URL'];
  return serverUrl ? buildPostgres(serverUrl) : buildPglite(dir);
}

/** Drops a template database (the PGlite tarball is the runner's temporary file). */
export async function dropTemplate(name: string): Promise<void> {
  const serverUrl = process.env['DATABASE_URL'];
  if (!serverUrl || !/^gather_template_\w+$/.test(name)) return;
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [command, arg] = process.argv.slice(2);
  if (command === 'build' && arg) process.stdout.write(JSON.stringify(await buildTemplate(arg)));
  else if (command === 'drop' && arg) await dropTemplate(arg);
  else {
    console.error('usage: db-template.ts build DIR | drop NAME');
    process.exitCode = 2;
  }
}
