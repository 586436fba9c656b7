// One migrated database per test run, copied for each test file instead of migrating a new one:
// on PGlite a dumped data directory that each file loads (loading skips initdb, most of the cost
// of a new in-memory PGlite), on PostgreSQL a database that CREATE DATABASE … TEMPLATE copies.
// scripts/run-tests.mjs builds it (`node --import tsx test/db-template.ts build DIR`) and names it
// in the environment; without those variables each file migrates its own database, as before.
import { openAsBlob } from 'node:fs';
import { writeFile } from 'node:fs/promises';
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
  // A Blob backed by the file: PGlite reads it once into its own copy, and the process holds no
  // other copy of the tarball for its life (a Blob made from the file's bytes is two more).
  pgliteTemplate ??= openAsBlob(path);
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
  // A WAL segment is a file of 16 MB whatever it holds, and every file of the suite copies it into
  // PGlite's in-memory file system: the migrations' WAL, which the checkpoint below makes useless,
  // and zeros past its end. Switching to a new segment first leaves the checkpoint at the start of
  // a segment of its own (wal_recycle off: the old one is deleted, not renamed into a future one
  // with its bytes), and the tarball keeps only that segment's written pages (walTail).
  await pglite.exec('SET wal_recycle = off');
  await pglite.query('SELECT pg_switch_wal()');
  // The dump copies the files as they are: write the dirty buffers out first, so that loading it
  // has nothing to replay.
  await pglite.exec('CHECKPOINT');
  const tarball = new Uint8Array(await (await pglite.dumpDataDir('none')).arrayBuffer());
  // Asked after the dump: whatever the dump holds was written before this position.
  const { rows } = await pglite.query<{ file_name: string; file_offset: number }>(
    'SELECT file_name, file_offset FROM pg_walfile_name_offset(pg_current_wal_insert_lsn())',
  );
  await db.destroy();
  const end = rows[0];
  if (!end) throw new Error('no WAL position');
  const path = join(dir, 'gather-test-template.tar');
  await writeFile(path, walTail(tarball, `/pg_wal/${end.file_name}`, end.file_offset));
  return { [PGLITE_TEMPLATE_ENV]: path };
}

const TAR_BLOCK = 512;
const WAL_PAGE = 8192;

/**
 * The dumped data directory with its current WAL segment cut after the page that holds the end
 * of the WAL, and one page more. PostgreSQL finds the end of the WAL on reading an empty record
 * or page, or on reading past the end of the segment's file; when it writes more, it writes into
 * the file from there, which grows it (a segment file is never required to be whole, only
 * created whole). PGlite dumps a ustar archive: a 512-byte header per member, whose size field and
 * checksum are rewritten for the shorter member.
 */
function walTail(tar: Uint8Array, member: string, endOffset: number): Uint8Array {
  const keep = (Math.floor(endOffset / WAL_PAGE) + 2) * WAL_PAGE;
  const ascii = (from: number, length: number): string =>
    Buffer.from(tar.buffer, tar.byteOffset + from, length).toString('latin1').replace(/\0.*$/s, '');
  for (let at = 0; at + TAR_BLOCK <= tar.length; ) {
    const size = Number.parseInt(ascii(at + 124, 12).trim() || '0', 8);
    const dataBlocks = Math.ceil(size / TAR_BLOCK) * TAR_BLOCK;
    if (ascii(at, 100) === member && ascii(at + 345, 155) === '' && size > keep) {
      const header = tar.slice(at, at + TAR_BLOCK);
      header.set(Buffer.from(`${keep.toString(8).padStart(11, '0')}\0`, 'latin1'), 124);
      header.fill(0x20, 148, 156);
      const sum = header.reduce((total, byte) => total + byte, 0);
      header.set(Buffer.from(`${sum.toString(8).padStart(6, '0')}\0 `, 'latin1'), 148);
      const next = at + TAR_BLOCK + dataBlocks;
      return Buffer.concat([tar.subarray(0, at), header, tar.subarray(at + TAR_BLOCK, at + TAR_BLOCK + keep), tar.subarray(next)]);
    }
    if (size === 0 && tar.subarray(at, at + TAR_BLOCK).every((byte) => byte === 0)) break;
    at += TAR_BLOCK + dataBlocks;
  }
  throw new Error(`the dumped data directory has no WAL segment ${member} to shorten`);
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
