// Autovacuum's work for the embedded database. PGlite is PostgreSQL in single-user mode: no
// background workers, so no autovacuum. Without this loop nothing would ever remove the dead rows
// that edits, the REST deliveries' queue (a row per record, deleted once delivered), the jobs
// table and record history leave behind, and the planner would never get statistics.
//
// Each PGLITE_UPKEEP_INTERVAL the loop picks at most one table and VACUUMs and/or ANALYZEs it,
// deciding as autovacuum does: PostgreSQL's own counters (pg_stat_user_tables, published on
// demand: see readTableActivity) against its thresholds (readAutovacuumSettings) and
// pg_class.reltuples. PGlite has one connection, and runs in this thread: while the statement
// runs every request waits, and a VACUUM (ANALYZE) of a large `instances` table takes seconds
// (its ANALYZE reads a sample of whole records; bench/RESULTS.md). So the loop waits for a quiet
// moment before it starts, and does one table a tick, which bounds any request's extra wait to
// one table's step. Quiet is a second in
// which the database was busy less than BUSY_SHARE of the time, not one with no statement at all:
// an idle server's job workers and REST dispatcher look at their queues every few hundred
// milliseconds, cheaply, and would otherwise never leave it one. A server never that quiet still
// gets its step once it has waited OVERDUE_TICKS intervals: a short pause now and then costs less
// than tables and indexes that only grow.
//
// PGlite does not keep the counters across restarts (PostgreSQL keeps them only through a clean
// shutdown of a server). A table's changes made before this start are therefore unknown; where
// the table's size differs from what its last VACUUM or ANALYZE recorded (pg_class.relpages), it
// has changed since, and it is ANALYZEd once: that refreshes reltuples and the planner's
// statistics, and its sample estimates the dead rows, which the next ticks weigh as usual.
import type { Db } from './db.ts';
import {
  readAutovacuumSettings,
  readTableActivity,
  runUpkeepStatement,
  type AutovacuumSettings,
  type TableActivity,
  type UpkeepStatement,
} from './pglite-upkeep-sql.ts';

/**
 * A step starts after a window this long in which the database was busy less than BUSY_SHARE of
 * the time: an idle server's queue looks stay well under it (bench/RESULTS.md), a stream of
 * requests does not.
 */
const QUIET_MS = 1000;
const BUSY_SHARE = 0.15;
/** Intervals a step waits for a quiet moment before it runs regardless. */
const OVERDUE_TICKS = 10;

export interface UpkeepStep {
  readonly statement: UpkeepStatement;
  readonly schema: string;
  readonly table: string;
}

/**
 * The one step this tick: the table furthest past one of autovacuum's thresholds (dead rows, rows
 * inserted since its last VACUUM, rows changed since its last ANALYZE), VACUUMed and/or ANALYZEd
 * as autovacuum would; else the largest table changed before this start and not ANALYZEd since.
 */
export function chooseUpkeepStep(tables: readonly TableActivity[], settings: AutovacuumSettings): UpkeepStep | undefined {
  let best: { step: UpkeepStep; excess: number } | undefined;
  for (const t of tables) {
    const reltuples = Math.max(0, t.reltuples);
    let vacuumAt = settings.vacuumThreshold + settings.vacuumScaleFactor * reltuples;
    if (settings.vacuumMaxThreshold >= 0) vacuumAt = Math.min(vacuumAt, settings.vacuumMaxThreshold);
    const unfrozen = t.relpages > 0 ? 1 - Math.min(1, t.relallfrozen / t.relpages) : 1;
    const insertAt = settings.insertThreshold + settings.insertScaleFactor * reltuples * unfrozen;
    const analyzeAt = settings.analyzeThreshold + settings.analyzeScaleFactor * reltuples;
    const excesses = {
      dead: t.deadTuples / Math.max(1, vacuumAt),
      inserted: settings.insertThreshold >= 0 ? t.insertedSinceVacuum / Math.max(1, insertAt) : 0,
      modified: t.modifiedSinceAnalyze / Math.max(1, analyzeAt),
    };
    const vacuum = t.deadTuples > vacuumAt || (settings.insertThreshold >= 0 && t.insertedSinceVacuum > insertAt);
    const analyze = t.modifiedSinceAnalyze > analyzeAt;
    if (!vacuum && !analyze) continue;
    const excess = Math.max(excesses.dead, excesses.inserted, excesses.modified);
    if (best && best.excess >= excess) continue;
    const statement: UpkeepStatement = vacuum && analyze ? 'vacuum analyze' : vacuum ? 'vacuum' : 'analyze';
    best = { step: { statement, schema: t.schema, table: t.table }, excess };
  }
  if (best) return best.step;
  const unknown = tables
    .filter((t) => t.vacuums === 0 && t.analyses === 0 && t.pages !== t.relpages)
    .sort((a, b) => b.pages - a.pages)[0];
  return unknown ? { statement: 'analyze', schema: unknown.schema, table: unknown.table } : undefined;
}

export type UpkeepLog = (level: 'info' | 'warn' | 'error', message: string, error?: unknown) => void;

export interface UpkeepOptions {
  intervalMs: number;
  /** Milliseconds the database has been in use so far (PGliteDriver.busyMs). */
  busyMs: () => number;
  log: UpkeepLog;
  /** Told of each step done (tests). */
  onStep?: (step: UpkeepStep, ms: number) => void;
}

export interface Upkeep {
  /** Ends the loop, after the step under way if there is one. */
  stop(): Promise<void>;
}

export function startPgliteUpkeep(db: Db, options: UpkeepOptions): Upkeep {
  const { intervalMs, busyMs, log } = options;
  const quietMs = Math.min(QUIET_MS, intervalMs);
  let stopped = false;
  let wakeSleeper: (() => void) | undefined;
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        wakeSleeper = undefined;
        resolve();
      }, ms);
      wakeSleeper = () => {
        clearTimeout(timer);
        wakeSleeper = undefined;
        resolve();
      };
    });

  let settings: AutovacuumSettings | undefined;
  const step = async (): Promise<void> => {
    settings ??= await readAutovacuumSettings(db);
    const chosen = chooseUpkeepStep(await readTableActivity(db), settings);
    if (!chosen || stopped) return;
    const started = performance.now();
    await runUpkeepStatement(db, chosen.statement, chosen.schema, chosen.table);
    const ms = performance.now() - started;
    options.onStep?.(chosen, ms);
    if (ms >= quietMs) log('info', `database upkeep: ${chosen.statement} ${chosen.table} took ${Math.round(ms)} ms`);
  };

  const loop = async (): Promise<void> => {
    while (!stopped) {
      await sleep(intervalMs);
      const overdueAt = performance.now() + OVERDUE_TICKS * intervalMs;
      while (!stopped && performance.now() < overdueAt) {
        const busyBefore = busyMs();
        await sleep(quietMs);
        if (busyMs() - busyBefore < BUSY_SHARE * quietMs) break;
      }
      if (stopped) break;
      try {
        await step();
      } catch (error) {
        log('error', 'database upkeep: a step failed; trying again at the next tick', error);
      }
    }
  };
  const running = loop();
  return {
    stop: async () => {
      stopped = true;
      wakeSleeper?.();
      await running;
    },
  };
}
