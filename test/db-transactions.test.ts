// inTransaction (src/platform/db.ts): a new transaction on a database, the caller's own inside one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { inTransaction } from '../src/platform/db.ts';
import { startTestDatabase, type TestDatabase } from './helpers.ts';

let database: TestDatabase;

before(async () => {
  database = await startTestDatabase();
  await sql`CREATE TABLE tx_probe (n int)`.execute(database.deps.db);
});
after(() => database.close());

const count = async (): Promise<number> =>
  (await sql<{ n: number }>`SELECT count(*)::int AS n FROM tx_probe`.execute(database.deps.db)).rows[0]?.n ?? -1;

test('on a database it commits, or rolls back when the work throws', async () => {
  const { db } = database.deps;
  await sql`DELETE FROM tx_probe`.execute(db);
  await inTransaction(db, (trx) => sql`INSERT INTO tx_probe VALUES (1)`.execute(trx));
  await assert.rejects(
    inTransaction(db, async (trx) => {
      await sql`INSERT INTO tx_probe VALUES (2)`.execute(trx);
      throw new Error('work failed');
    }),
    /work failed/,
  );
  assert.equal(await count(), 1);
});

test("inside a transaction it joins it: the caller's rollback undoes the inner work too", async () => {
  const { db } = database.deps;
  await sql`DELETE FROM tx_probe`.execute(db);
  await assert.rejects(
    inTransaction(db, async (outer) => {
      const inner = await inTransaction(outer, async (trx) => {
        assert.equal(trx, outer);
        await sql`INSERT INTO tx_probe VALUES (3)`.execute(trx);
        return 'inner done';
      });
      assert.equal(inner, 'inner done');
      throw new Error('outer failed');
    }),
    /outer failed/,
  );
  assert.equal(await count(), 0);
});
