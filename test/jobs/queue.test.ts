import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestDatabase, type TestDatabase } from '../helpers.ts';
import { enqueueJob, findJobByUuid } from '../../src/jobs/queue.ts';

let db: TestDatabase;

before(async () => {
  db = await startTestDatabase();
});
after(() => db.close());

describe('enqueueJob', () => {
  test('a job enqueued in a transaction that rolls back does not exist', async () => {
    let uuid = '';
    await assert.rejects(
      db.deps.db.transaction().execute(async (trx) => {
        ({ uuid } = await enqueueJob(trx, { type: 'create_async', payload: { form: 1 } }));
        throw new Error('the request failed after enqueueing');
      }),
      /the request failed/,
    );
    assert.match(uuid, /^[0-9a-f-]{36}$/);
    assert.equal(await findJobByUuid(db.deps.db, uuid), undefined);
  });

  test('a job enqueued in a committed transaction is PENDING with its payload', async () => {
    const before = new Date();
    const { id, uuid } = await db.deps.db.transaction().execute((trx) =>
      enqueueJob(trx, { type: 'export_async', payload: { format: 'csv', ids: [1, 2] }, maxAttempts: 5 }),
    );
    const job = await findJobByUuid(db.deps.db, uuid);
    assert.ok(job);
    assert.equal(job.id, id);
    assert.equal(job.type, 'export_async');
    assert.equal(job.status, 'PENDING');
    assert.deepEqual(job.payload, { format: 'csv', ids: [1, 2] });
    assert.equal(job.attempts, 0);
    assert.equal(job.max_attempts, 5);
    assert.equal(job.result, null);
    assert.equal(job.error, null);
    assert.equal(job.progress, null);
    assert.equal(job.created_by, null);
    assert.ok(job.run_after instanceof Date && job.run_after.getTime() >= before.getTime() - 1000);
    assert.equal(job.started_at, null);
  });

  test('a payload that is a bare array or string survives as JSON', async () => {
    const a = await enqueueJob(db.deps.db, { type: 't', payload: [1, 'two'] });
    const b = await enqueueJob(db.deps.db, { type: 't', payload: 'text' });
    assert.deepEqual((await findJobByUuid(db.deps.db, a.uuid))?.payload, [1, 'two']);
    assert.equal((await findJobByUuid(db.deps.db, b.uuid))?.payload, 'text');
  });

  test('maxAttempts below 1 is refused', async () => {
    await assert.rejects(enqueueJob(db.deps.db, { type: 't', payload: null, maxAttempts: 0 }), RangeError);
  });
});

describe('findJobByUuid', () => {
  test('text that is not a UUID finds nothing instead of raising', async () => {
    assert.equal(await findJobByUuid(db.deps.db, 'not-a-uuid'), undefined);
    assert.equal(await findJobByUuid(db.deps.db, "'; drop table jobs; --"), undefined);
    assert.equal(await findJobByUuid(db.deps.db, ''), undefined);
  });

  test('an unknown UUID finds nothing', async () => {
    assert.equal(await findJobByUuid(db.deps.db, '00000000-0000-4000-8000-000000000000'), undefined);
  });
});
