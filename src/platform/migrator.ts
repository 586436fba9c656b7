// Applies migrations/NNNN_name.sql in order, each in its own transaction, recording the version.
// An advisory lock makes concurrent starts against one PostgreSQL server take turns.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { inTransaction, type Db } from './db.ts';
import { PROJECT_ROOT } from './project-root.ts';

const MIGRATIONS_DIR = join(PROJECT_ROOT, 'migrations') + '/';
const LOCK_ID = 7_306_118; // arbitrary, constant for Gather

export async function migrate(db: Db, log: (line: string) => void = () => {}): Promise<string[]> {
  await sql`CREATE TABLE IF NOT EXISTS schema_migrations (
    version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`.execute(db);
  const files = readdirSync(MIGRATIONS_DIR).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  const applied: string[] = [];
  for (const file of files) {
    const version = file.slice(0, -4);
    const done = await inTransaction(db, async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${LOCK_ID})`.execute(trx);
      const existing = await trx
        .selectFrom('schema_migrations')
        .select('version')
        .where('version', '=', version)
        .executeTakeFirst();
      if (existing) return false;
      await sql.raw(readFileSync(MIGRATIONS_DIR + file, 'utf8')).execute(trx);
      await trx.insertInto('schema_migrations').values({ version }).execute();
      return true;
    });
    if (done) {
      applied.push(version);
      log(`applied migration ${version}`);
    }
  }
  return applied;
}
