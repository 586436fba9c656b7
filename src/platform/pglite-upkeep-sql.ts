// The SQL of the embedded database's upkeep (pglite-upkeep.ts): what each table has been through
// since it was last vacuumed and analysed, autovacuum's settings, and the VACUUM and ANALYZE
// statements themselves.
import { sql } from 'kysely';
import type { Db } from './db.ts';

/** A user table's counters (pg_stat_user_tables) and size (pg_class) as the upkeep weighs them. */
export interface TableActivity {
  readonly schema: string;
  readonly table: string;
  /** pg_class.reltuples: -1 for a table never vacuumed or analysed. */
  readonly reltuples: number;
  /** pg_class.relpages and relallfrozen, as the last VACUUM or ANALYZE left them. */
  readonly relpages: number;
  readonly relallfrozen: number;
  /** The table's size in pages now. */
  readonly pages: number;
  readonly deadTuples: number;
  readonly insertedSinceVacuum: number;
  readonly modifiedSinceAnalyze: number;
  /** VACUUMs and ANALYZEs counted since the statistics were last reset (each start, on PGlite). */
  readonly vacuums: number;
  readonly analyses: number;
}

/** autovacuum's thresholds and scale factors (PostgreSQL's defaults unless the server sets them). */
export interface AutovacuumSettings {
  readonly vacuumThreshold: number;
  readonly vacuumScaleFactor: number;
  /** Cap on the dead-row threshold; -1: none. */
  readonly vacuumMaxThreshold: number;
  /** -1: inserts never call for a VACUUM. */
  readonly insertThreshold: number;
  readonly insertScaleFactor: number;
  readonly analyzeThreshold: number;
  readonly analyzeScaleFactor: number;
}

export async function readAutovacuumSettings(db: Db): Promise<AutovacuumSettings> {
  const { rows } = await sql<AutovacuumSettings>`SELECT
      current_setting('autovacuum_vacuum_threshold')::float8 AS "vacuumThreshold",
      current_setting('autovacuum_vacuum_scale_factor')::float8 AS "vacuumScaleFactor",
      coalesce(current_setting('autovacuum_vacuum_max_threshold', true), '-1')::float8 AS "vacuumMaxThreshold",
      current_setting('autovacuum_vacuum_insert_threshold')::float8 AS "insertThreshold",
      current_setting('autovacuum_vacuum_insert_scale_factor')::float8 AS "insertScaleFactor",
      current_setting('autovacuum_analyze_threshold')::float8 AS "analyzeThreshold",
      current_setting('autovacuum_analyze_scale_factor')::float8 AS "analyzeScaleFactor"`.execute(db);
  const settings = rows[0];
  if (!settings) throw new Error('autovacuum settings: no row');
  return settings;
}

/**
 * Every user table's counters. PGlite keeps counting each statement's changes, but its
 * single-user loop leaves them unpublished in the session (PostgreSQL publishes them from its idle
 * loop, a timer deferring them to once a second): on PGlite 0.5 pg_stat_user_tables stayed at zero
 * across statements seconds apart, and showed every change once pg_stat_force_next_flush() had
 * run. So they are published first, by a statement of their own (at its end), then read.
 */
export async function readTableActivity(db: Db): Promise<TableActivity[]> {
  await sql`SELECT pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<TableActivity>`SELECT s.schemaname AS schema, s.relname AS "table",
      c.reltuples::float8 AS reltuples, c.relpages::int AS relpages, c.relallfrozen::int AS relallfrozen,
      (pg_relation_size(c.oid) / current_setting('block_size')::int)::int AS pages,
      s.n_dead_tup::float8 AS "deadTuples", s.n_ins_since_vacuum::float8 AS "insertedSinceVacuum",
      s.n_mod_since_analyze::float8 AS "modifiedSinceAnalyze",
      (s.vacuum_count + s.autovacuum_count)::int AS vacuums, (s.analyze_count + s.autoanalyze_count)::int AS analyses
    FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid`.execute(db);
  return rows;
}

export type UpkeepStatement = 'vacuum' | 'vacuum analyze' | 'analyze';

/**
 * Runs one VACUUM or ANALYZE. Without parameters the driver sends it by the simple protocol, as a
 * statement of its own outside any transaction, which VACUUM requires.
 */
export async function runUpkeepStatement(db: Db, statement: UpkeepStatement, schema: string, table: string): Promise<void> {
  const target = sql.id(schema, table);
  if (statement === 'vacuum') await sql`VACUUM ${target}`.execute(db);
  else if (statement === 'vacuum analyze') await sql`VACUUM (ANALYZE) ${target}`.execute(db);
  else await sql`ANALYZE ${target}`.execute(db);
}
