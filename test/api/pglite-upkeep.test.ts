// The embedded database's upkeep (src/platform/pglite-upkeep.ts): churn on a table gets it
// vacuumed and analysed, as autovacuum would on a PostgreSQL server, while requests go on being
// answered. PGlite only: on PostgreSQL autovacuum does this and the upkeep never starts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import { createUser, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { startDatabaseUpkeep } from '../../src/runtime.ts';
import type { Upkeep } from '../../src/platform/pglite-upkeep.ts';

const onPostgres = process.env['DATABASE_URL'] ? 'the upkeep runs on the embedded database only' : false;

let server: TestServer;
let user: TestUser;
let upkeep: Upkeep | undefined;
const failures: string[] = [];

before(async () => {
  if (onPostgres) return;
  server = await startTestServer({ PGLITE_UPKEEP_INTERVAL: '1' });
  user = await createUser(server.app, 'keeper');
});

after(async () => {
  await upkeep?.stop();
  await server?.close();
});

interface Counters {
  vacuums: number;
  analyses: number;
  dead: number;
  reltuples: number;
}

async function counters(table: string): Promise<Counters> {
  const { db } = server.deps;
  await sql`SELECT pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<Counters>`SELECT s.vacuum_count::int AS vacuums, s.analyze_count::int AS analyses,
      s.n_dead_tup::int AS dead, c.reltuples::float8 AS reltuples
    FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = ${table}`.execute(db);
  const row = rows[0];
  assert.ok(row, `no statistics for ${table}`);
  return row;
}

/** Polls `look` until `done` holds of its answer, for at most `seconds`, pausing `pauseMs` between looks. */
async function eventually<T>(look: () => Promise<T>, done: (value: T) => boolean, seconds: number, pauseMs: number): Promise<T> {
  const until = Date.now() + seconds * 1000;
  let value = await look();
  while (!done(value) && Date.now() < until) {
    await delay(pauseMs);
    value = await look();
  }
  return value;
}

async function answered(): Promise<number> {
  const res = await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: user.auth });
  return res.statusCode;
}

test('churn on a table gets it vacuumed and analysed in a quiet moment, and reltuples right', { skip: onPostgres }, async () => {
  const { db } = server.deps;
  // A loop another test started would vacuum the table before it is counted: this test starts its own.
  await upkeep?.stop();
  upkeep = undefined;
  // 3,000 deliveries queued one by one and 2,500 of them removed, as the REST dispatcher does.
  for (let i = 0; i < 3000; i++) await sql`INSERT INTO rest_service_outbox (service_id, instance_id, event) VALUES (${1}, ${i}, 'created')`.execute(db);
  await sql`DELETE FROM rest_service_outbox WHERE instance_id < ${2500}`.execute(db);
  const before = await counters('rest_service_outbox');
  assert.equal(before.dead, 2500);
  assert.equal(before.vacuums, 0);

  upkeep = startDatabaseUpkeep(server.runtime, (level, message, error) => failures.push(`${level} ${message} ${String(error)}`));
  assert.ok(upkeep, 'the upkeep starts on PGlite with PGLITE_UPKEEP_INTERVAL set');
  // Looks 1.5 s apart leave the database the quiet second a step waits for.
  const done = await eventually(() => counters('rest_service_outbox'), (c) => c.vacuums > 0 && c.analyses > 0, 60, 1500);
  assert.ok(done.vacuums >= 1 && done.analyses >= 1, `vacuumed and analysed: ${JSON.stringify(done)}`);
  assert.equal(done.dead, 0);
  assert.equal(done.reltuples, 500);
  assert.equal(await answered(), 200);
  assert.deepEqual(failures, []);
});

test('a database never quiet still gets its step once overdue, and every request meanwhile is answered', { skip: onPostgres }, async () => {
  const { db } = server.deps;
  for (let i = 0; i < 400; i++) await sql`INSERT INTO jobs (uuid, type, payload) VALUES (gen_random_uuid(), 'upkeep-test', ${JSON.stringify({ i })}::jsonb)`.execute(db);
  await sql`UPDATE jobs SET payload = '{}'::jsonb WHERE type = 'upkeep-test'`.execute(db);
  const before = await counters('jobs');
  assert.ok(before.dead >= 400, JSON.stringify(before));
  // The loop the first test started, or one of this test's own when it runs alone.
  upkeep ??= startDatabaseUpkeep(server.runtime, (level, message, error) => failures.push(`${level} ${message} ${String(error)}`));
  assert.ok(upkeep);
  // A request and a statement holding the database 30 ms every 80 ms or so: never a quiet second,
  // so the step waits until it is overdue (ten intervals from its tick), then runs between them.
  const started = Date.now();
  const statuses: number[] = [];
  const done = await eventually(
    async () => {
      statuses.push(await answered());
      await sql`SELECT pg_sleep(0.03)`.execute(db);
      return counters('jobs');
    },
    (c) => c.vacuums > before.vacuums,
    60,
    50,
  );
  assert.ok(done.vacuums > before.vacuums, `vacuumed: ${JSON.stringify(done)}`);
  // The loop's tick began at most a quiet window and an interval before this test: some 2 s.
  assert.ok(Date.now() - started >= 5000, `vacuumed after ${Date.now() - started} ms of a busy database`);
  assert.ok(statuses.length > 20);
  assert.deepEqual(new Set(statuses), new Set([200]));
  assert.deepEqual(failures, []);
});

test('stopping waits for the step under way and ends the loop', { skip: onPostgres }, async () => {
  const running = upkeep;
  upkeep = undefined;
  await running?.stop();
  const { db } = server.deps;
  await sql`UPDATE jobs SET payload = '{"again": true}'::jsonb WHERE type = 'upkeep-test'`.execute(db);
  const before = await counters('jobs');
  await delay(2500);
  const later = await counters('jobs');
  assert.equal(later.vacuums, before.vacuums);
  assert.equal(later.analyses, before.analyses);
});
