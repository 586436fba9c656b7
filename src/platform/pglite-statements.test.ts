import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PGlite } from '@electric-sql/pglite';
import { PreparedStatements } from './pglite-statements.ts';

// One PGlite for the file (creating one is most of a test's time); each test has its own table.
let pg: PGlite;
before(async () => {
  pg = await PGlite.create('memory://');
});
after(async () => {
});

async function open(limit?: number): Promise<{ pg: PGlite; statements: PreparedStatements }> {
  await pg.exec('drop table if exists t; create table t (id serial primary key, name text unique, n int, doc jsonb, at timestamptz, bytes bytea)');
  return { pg, statements: new PreparedStatements(pg, limit) };
}

test('prepared statements give what query() gives, values and types alike', async () => {
  const { pg, statements } = await open();
  const at = new Date('2026-11-28T03:00:00.000Z');
  const insert = 'insert into t (name, n, doc, at, bytes) values ($1, $2, $3, $4, $5) returning id';
  const first = await statements.run(insert, ['a', 1, JSON.stringify({ x: [1, 'y'] }), at, new Uint8Array([0, 255])]);
  const second = await statements.run(insert, ['b', null, null, null, null]);
  assert.deepEqual(first.rows, [{ id: 1 }]);
  assert.deepEqual(second.rows, [{ id: 2 }]);

  const select = 'select name, n, doc, at, bytes from t where id = $1';
  const mine = await statements.run(select, [1]);
  const theirs = await pg.query(select, [1]);
  assert.deepEqual(mine.rows, theirs.rows);
  assert.deepEqual(mine.rows[0], { name: 'a', n: 1, doc: { x: [1, 'y'] }, at, bytes: new Uint8Array([0, 255]) });
  assert.deepEqual((await statements.run(select, [2])).rows, [{ name: 'b', n: null, doc: null, at: null, bytes: null }]);

  const updated = await statements.run('update t set n = n + $1 where n is not null or name = $2', [1, 'b']);
  assert.equal(updated.affectedRows, 2);
  assert.deepEqual((await statements.run('delete from t where id = $1', [99])).rows, []);
});

test('an error reaches the caller with its code, and the session goes on', async () => {
  const { pg, statements } = await open();
  const insert = 'insert into t (name) values ($1)';
  await statements.run(insert, ['a']);
  await assert.rejects(statements.run(insert, ['a']), (error: Error & { code?: string }) => error.code === '23505');
  await assert.rejects(statements.run('select nope from t where id = $1', [1]), (error: Error & { code?: string }) => error.code === '42703');

  // In a transaction an error aborts it, as on any PostgreSQL session; rollback recovers.
  await pg.exec('begin');
  await assert.rejects(statements.run(insert, ['a']));
  await assert.rejects(statements.run('select count(*) from t where name = $1', ['a']), /aborted/);
  await pg.exec('rollback');
  assert.deepEqual((await statements.run('select count(*)::int as c from t where name = $1', ['a'])).rows, [{ c: 1 }]);
});

const preparedCount = async (pg: PGlite): Promise<number> =>
  (await pg.query<{ c: number }>('select count(*)::int as c from pg_prepared_statements')).rows[0]?.c ?? 0;

test('statements past the limit are closed on the backend and prepared again when asked', async () => {
  const { pg, statements } = await open(2);
  const count = (): Promise<number> => preparedCount(pg);
  const before = await count();
  for (let round = 0; round < 3; round += 1) {
    for (let k = 0; k < 5; k += 1) {
      const { rows } = await statements.run(`/* prepared:limit-${k} */ select $1::int + ${k} as v`, [round]);
      assert.deepEqual(rows, [{ v: round + k }]);
    }
  }
  // The limit stays prepared, plus the one evicted last (closed with the next prepare).
  assert.ok((await count()) - before <= 3, `prepared statements held: ${(await count()) - before}`);
});

test('a kept statement whose table changed shape is prepared anew after the error', async () => {
  const { pg, statements } = await open();
  const select = '/* prepared:shape */ select * from t where id = $1';
  await statements.run('insert into t (name) values ($1)', ['a']);
  assert.equal((await statements.run(select, [1])).rows.length, 1);
  await pg.exec('alter table t add column extra text');
  // The stale statement fails once, as it would on any PostgreSQL session, and is then forgotten.
  await assert.rejects(statements.run(select, [1]), /cached plan must not change result type/);
  const result = await statements.run(select, [1]);
  assert.deepEqual(Object.keys(result.rows[0] as object), ['id', 'name', 'n', 'doc', 'at', 'bytes', 'extra']);
});

test('an unmarked statement is kept by no name: planned for the table as it is now, new columns seen at once', async () => {
  const { pg, statements } = await open();
  const before = await preparedCount(pg);
  const select = 'select * from t where name = $1';
  await statements.run('insert into t (name, n) values ($1, $2)', ['a', 1]);
  for (let run = 0; run < 8; run += 1) assert.equal((await statements.run(select, ['a'])).rows.length, 1);
  assert.equal(await preparedCount(pg), before, 'no named statement is held');

  await statements.run('insert into t (name, n) select $1 || g, g from generate_series(1, 2000) g', ['x']);
  assert.deepEqual((await statements.run(select, ['x5'])).rows.map((row) => (row as { n: number }).n), [5]);
  assert.equal(await preparedCount(pg), before);

  await pg.exec('alter table t add column extra text');
  const result = await statements.run(select, ['a']);
  assert.deepEqual(Object.keys(result.rows[0] as object), ['id', 'name', 'n', 'doc', 'at', 'bytes', 'extra']);
});

test('an unmarked statement whose parameter types changed is described again after the error', async () => {
  const { pg, statements } = await open();
  const update = 'update t set n = $1 where name = $2';
  await statements.run('insert into t (name, n) values ($1, $2)', ['a', 1]);
  await statements.run(update, [2, 'a']);
  await pg.exec('alter table t alter column n type text');
  // Bound with the integer type found at the first run, 'three' is refused once.
  await assert.rejects(statements.run(update, ['three', 'a']), /invalid input syntax for type integer/);
  await statements.run(update, ['three', 'a']);
  assert.deepEqual((await statements.run('select n from t where name = $1', ['a'])).rows, [{ n: 'three' }]);
});
