import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseUpkeepStep } from './pglite-upkeep.ts';
import type { AutovacuumSettings, TableActivity } from './pglite-upkeep-sql.ts';

// PostgreSQL 18's defaults.
const defaults: AutovacuumSettings = {
  vacuumThreshold: 50,
  vacuumScaleFactor: 0.2,
  vacuumMaxThreshold: 100_000_000,
  insertThreshold: 1000,
  insertScaleFactor: 0.2,
  analyzeThreshold: 50,
  analyzeScaleFactor: 0.1,
};

const table = (name: string, activity: Partial<TableActivity> = {}): TableActivity => ({
  schema: 'public',
  table: name,
  reltuples: 10_000,
  relpages: 100,
  relallfrozen: 0,
  pages: 100,
  deadTuples: 0,
  insertedSinceVacuum: 0,
  modifiedSinceAnalyze: 0,
  vacuums: 1,
  analyses: 1,
  ...activity,
});

test('a table is vacuumed past 50 + 20% of its rows dead, analysed past 50 + 10% changed, as autovacuum decides', () => {
  assert.equal(chooseUpkeepStep([table('a', { deadTuples: 2050, modifiedSinceAnalyze: 1050 })], defaults), undefined);
  assert.deepEqual(chooseUpkeepStep([table('a', { deadTuples: 2051, modifiedSinceAnalyze: 2051 })], defaults), { statement: 'vacuum analyze', schema: 'public', table: 'a' });
  assert.deepEqual(chooseUpkeepStep([table('a', { deadTuples: 2051, modifiedSinceAnalyze: 1000 })], defaults), { statement: 'vacuum', schema: 'public', table: 'a' });
  assert.deepEqual(chooseUpkeepStep([table('a', { modifiedSinceAnalyze: 1051 })], defaults), { statement: 'analyze', schema: 'public', table: 'a' });
});

test('inserts call for a VACUUM past 1000 + 20% of the unfrozen rows; -1 turns that off', () => {
  const halfFrozen = table('a', { relallfrozen: 50, insertedSinceVacuum: 2001 });
  assert.equal(chooseUpkeepStep([halfFrozen], defaults)?.statement, 'vacuum');
  assert.equal(chooseUpkeepStep([{ ...halfFrozen, insertedSinceVacuum: 2000 }], defaults), undefined);
  assert.equal(chooseUpkeepStep([halfFrozen], { ...defaults, insertThreshold: -1 }), undefined);
});

test('a table never vacuumed or analysed (reltuples -1) counts as empty; the one furthest past its threshold goes first', () => {
  const fresh = table('fresh', { reltuples: -1, relpages: 0, deadTuples: 60 });
  assert.deepEqual(chooseUpkeepStep([fresh], defaults), { statement: 'vacuum', schema: 'public', table: 'fresh' });
  const big = table('big', { deadTuples: 4000 });
  assert.equal(chooseUpkeepStep([big, fresh], defaults)?.table, 'big');
  assert.equal(chooseUpkeepStep([big, { ...fresh, deadTuples: 1000 }], defaults)?.table, 'fresh');
});

test('after a start, the largest table changed since its last VACUUM or ANALYZE is analysed once, after any that are due', () => {
  const lost = { vacuums: 0, analyses: 0 };
  const tables = [table('same', { ...lost }), table('grew', { ...lost, pages: 150 }), table('grew more', { ...lost, pages: 400 }), table('seen', { pages: 900 })];
  assert.deepEqual(chooseUpkeepStep(tables, defaults), { statement: 'analyze', schema: 'public', table: 'grew more' });
  assert.equal(chooseUpkeepStep([...tables, table('due', { modifiedSinceAnalyze: 5000 })], defaults)?.table, 'due');
  assert.equal(chooseUpkeepStep([table('same', { ...lost }), table('seen', { pages: 900 })], defaults), undefined);
});
