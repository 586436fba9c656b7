// Submissions arriving together share one insert on the embedded database (insert-batch.ts): each
// is still answered for itself (201 once per instanceID, 202 for the others), counted once, and a
// decision that no longer holds refuses the whole batch's insert, after which each is decided
// again as if nothing had been remembered. On PostgreSQL the same requests take the single path.
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
  // One first, so that the device's decision is remembered and the rest take the batched insert.
  assert.equal((await postSubmission(server.app, '/bob/submission', householdXml({ uuid: randomUUID() }), bob.auth)).statusCode, 201);
  const repeated = randomUUID();
  const xmls = [...Array.from({ length: 10 }, () => householdXml({ uuid: randomUUID() })), householdXml({ uuid: repeated }), householdXml({ uuid: repeated })];
  const answers = await Promise.all(xmls.map((xml) => postSubmission(server.app, '/bob/submission', xml, bob.auth)));
  assert.deepEqual(answers.map((res) => res.statusCode).sort(), [...Array.from({ length: 11 }, () => 201), 202]);
  assert.deepEqual(await stored(), { count: 12, rows: 12 });

  // Sent again, together: all already stored.
  const again = await Promise.all(xmls.map((xml) => postSubmission(server.app, '/bob/submission', xml, bob.auth)));
  assert.deepEqual(again.map((res) => res.statusCode), xmls.map(() => 202));
  assert.deepEqual(await stored(), { count: 12, rows: 12 });
});

test('a remembered decision that no longer holds is decided again for each of a batch', async () => {
  await sql`UPDATE forms SET downloadable = false WHERE id = ${formId}`.execute(server.deps.db);
  const refused = await Promise.all(Array.from({ length: 4 }, () => postSubmission(server.app, '/bob/submission', householdXml({ uuid: randomUUID() }), bob.auth)));
  assert.deepEqual(refused.map((res) => res.statusCode), [405, 405, 405, 405]);
  await sql`UPDATE forms SET downloadable = true WHERE id = ${formId}`.execute(server.deps.db);
  const taken = await Promise.all(Array.from({ length: 4 }, () => postSubmission(server.app, '/bob/submission', householdXml({ uuid: randomUUID() }), bob.auth)));
  assert.deepEqual(taken.map((res) => res.statusCode), [201, 201, 201, 201]);
  assert.deepEqual(await stored(), { count: 16, rows: 16 });
});
