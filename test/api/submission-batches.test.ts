// Submissions arriving together share one insert (insert-batch.ts), on either database: each is
// still answered for itself (201 once per instanceID, 202 for the others), counted once, and a
// decision that no longer holds refuses the whole batch's insert, after which each is decided
// again as if nothing had been remembered. A batch whose insert fails is tried record by record.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createUser, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';

let server: TestServer;
let bob: TestUser;
let formId: number;

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  formId = await publishForm(server.app, bob, formFile(HOUSEHOLD_CSV, 'household.csv'));
});
after(() => server.close());

async function stored(): Promise<{ count: number; rows: number }> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}`, headers: bob.auth });
  const rows = await sql<{ n: number }>`SELECT count(*)::int AS n FROM instances WHERE form_id = ${formId}`.execute(server.deps.db);
  return { count: Number(res.json().num_of_submissions), rows: Number(rows.rows[0]?.n) };
}

test('submissions sent together are each stored once and answered for themselves', async () => {
  // Counted from what the file's other tests left on the form.
  const before = await stored();
  // One first, so that the device's decision is remembered and the rest take the batched insert.
  assert.equal((await postSubmission(server.app, '/bob/submission', householdXml({ uuid: randomUUID() }), bob.auth)).statusCode, 201);
  const repeated = randomUUID();
  const xmls = [...Array.from({ length: 10 }, () => householdXml({ uuid: randomUUID() })), householdXml({ uuid: repeated }), householdXml({ uuid: repeated })];
  const answers = await Promise.all(xmls.map((xml) => postSubmission(server.app, '/bob/submission', xml, bob.auth)));
  assert.deepEqual(answers.map((res) => res.statusCode).sort(), [...Array.from({ length: 11 }, () => 201), 202]);
  assert.deepEqual(await stored(), { count: before.count + 12, rows: before.rows + 12 });

  // Sent again, together: all already stored.
  const again = await Promise.all(xmls.map((xml) => postSubmission(server.app, '/bob/submission', xml, bob.auth)));
  assert.deepEqual(again.map((res) => res.statusCode), xmls.map(() => 202));
  assert.deepEqual(await stored(), { count: before.count + 12, rows: before.rows + 12 });
});

test('a remembered decision that no longer holds is decided again for each of a batch', async () => {
  // One first, so that the decision is remembered when the form stops taking submissions.
  assert.equal((await postSubmission(server.app, '/bob/submission', householdXml({ uuid: randomUUID() }), bob.auth)).statusCode, 201);
  const before = await stored();
  await sql`UPDATE forms SET downloadable = false WHERE id = ${formId}`.execute(server.deps.db);
  const refused = await Promise.all(Array.from({ length: 4 }, () => postSubmission(server.app, '/bob/submission', householdXml({ uuid: randomUUID() }), bob.auth)));
  assert.deepEqual(refused.map((res) => res.statusCode), [405, 405, 405, 405]);
  await sql`UPDATE forms SET downloadable = true WHERE id = ${formId}`.execute(server.deps.db);
  const taken = await Promise.all(Array.from({ length: 4 }, () => postSubmission(server.app, '/bob/submission', householdXml({ uuid: randomUUID() }), bob.auth)));
  assert.deepEqual(taken.map((res) => res.statusCode), [201, 201, 201, 201]);
  assert.deepEqual(await stored(), { count: before.count + 4, rows: before.rows + 4 });
});

test('a batch whose insert fails is stored record by record: only the failing record is refused', async () => {
  // One first, so that the decision is remembered and the rest take the batched insert.
  assert.equal((await postSubmission(server.app, '/bob/submission', householdXml({ uuid: randomUUID() }), bob.auth)).statusCode, 201);
  // A record the database refuses (as a constraint would): its failure aborts the batch's statement.
  await sql`CREATE SEQUENCE poison_rows`.execute(server.deps.db);
  await sql`CREATE FUNCTION poison_refused() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM nextval('poison_rows');
      IF NEW.xml LIKE '%<name>Poison</name>%' THEN RAISE EXCEPTION 'poisoned record'; END IF;
      RETURN NEW;
    END $$`.execute(server.deps.db);
  await sql`CREATE TRIGGER poison_refused BEFORE INSERT ON instances FOR EACH ROW EXECUTE FUNCTION poison_refused()`.execute(server.deps.db);
  try {
    const before = await stored();
    const xmls = [...Array.from({ length: 5 }, () => householdXml({ uuid: randomUUID() })), householdXml({ uuid: randomUUID(), name: 'Poison' })];
    const answers = await Promise.all(xmls.map((xml) => postSubmission(server.app, '/bob/submission', xml, bob.auth)));
    assert.deepEqual(answers.map((res) => res.statusCode), [201, 201, 201, 201, 201, 500]);
    assert.deepEqual(await stored(), { count: before.count + 5, rows: before.rows + 5 });
    // The records met the trigger more than once each: together first, then one by one.
    const rows = await sql<{ n: string }>`SELECT last_value::text AS n FROM poison_rows`.execute(server.deps.db);
    assert.ok(Number(rows.rows[0]?.n) > xmls.length, `the trigger ran ${rows.rows[0]?.n} times for ${xmls.length} records`);
  } finally {
    await sql`DROP TRIGGER poison_refused ON instances`.execute(server.deps.db);
    await sql`DROP FUNCTION poison_refused()`.execute(server.deps.db);
    await sql`DROP SEQUENCE poison_rows`.execute(server.deps.db);
  }
});
