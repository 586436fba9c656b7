// A device's stream of submissions reuses the decision that it may submit (target-cache.ts);
// these tests change the facts behind that decision, in this process and behind its back (as
// another server process on the same PostgreSQL would), and expect the very next submission to
// be answered as if nothing had been remembered.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createUser, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';

let server: TestServer;
let bob: TestUser;
let alice: TestUser;
let formId: number;

async function submit(url: string, headers: Record<string, string> = {}, xml = householdXml({ uuid: randomUUID() })) {
  return postSubmission(server.app, url, xml, headers);
}

/** A write this process does not see being made: what another server process would do. */
async function behindTheBack(statement: ReturnType<typeof sql>): Promise<void> {
  await statement.execute(server.deps.db);
}

async function storedCount(): Promise<number> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}`, headers: bob.auth });
  return Number(res.json().num_of_submissions);
}

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  alice = await createUser(server.app, 'alice');
  formId = await publishForm(server.app, bob, formFile(HOUSEHOLD_CSV, 'household.csv'));
});
after(() => server.close());

describe('remembered submit decisions', () => {
  test('a form made inactive behind the process’s back refuses the next submission with 405', async () => {
    assert.equal((await submit('/bob/submission')).statusCode, 201);
    assert.equal((await submit('/bob/submission')).statusCode, 201);
    await behindTheBack(sql`UPDATE forms SET downloadable = false WHERE id = ${formId}`);
    try {
      const before = await storedCount();
      const res = await submit('/bob/submission');
      assert.equal(res.statusCode, 405);
      assert.match(res.body, /Form is inactive/);
      assert.equal(await storedCount(), before);
    } finally {
      await behindTheBack(sql`UPDATE forms SET downloadable = true WHERE id = ${formId}`);
    }
    assert.equal((await submit('/bob/submission')).statusCode, 201);
  });

  test('an account that starts requiring auth behind the process’s back refuses anonymous devices at once', async () => {
    assert.equal((await submit('/bob/submission')).statusCode, 201);
    await behindTheBack(sql`UPDATE users SET require_auth = true WHERE username = 'bob'`);
    try {
      assert.equal((await submit('/bob/submission')).statusCode, 401);
    } finally {
      await behindTheBack(sql`UPDATE users SET require_auth = false WHERE username = 'bob'`);
    }
  });

  test('a data-entry role revoked behind the process’s back is refused at the next submission', async () => {
    await server.app.inject({ method: 'PATCH', url: '/api/v1/profiles/bob', payload: { require_auth: true }, headers: bob.auth });
    try {
      await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/share`, payload: { username: 'alice', role: 'dataentry' }, headers: bob.auth });
      assert.equal((await submit('/bob/submission', alice.auth)).statusCode, 201);
      assert.equal((await submit('/bob/submission', alice.auth)).statusCode, 201);
      await behindTheBack(sql`UPDATE form_roles SET role = 'readonly' WHERE form_id = ${formId} AND user_id = ${alice.id}`);
      const refused = await submit('/bob/submission', alice.auth);
      assert.equal(refused.statusCode, 403);
      assert.match(refused.body, /alice is not allowed to make submissions/);
      // Shared again through the API: allowed again.
      await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/share`, payload: { username: 'alice', role: 'dataentry' }, headers: bob.auth });
      assert.equal((await submit('/bob/submission', alice.auth)).statusCode, 201);
    } finally {
      await server.app.inject({ method: 'PATCH', url: '/api/v1/profiles/bob', payload: { require_auth: false }, headers: bob.auth });
    }
  });

  test('a form deleted behind the process’s back is not found, and a duplicate of a remembered form is still a 202', async () => {
    const xml = householdXml({ uuid: randomUUID() });
    assert.equal((await submit('/bob/submission', {}, xml)).statusCode, 201);
    const again = await submit('/bob/submission', {}, xml);
    assert.equal(again.statusCode, 202);
    assert.match(again.body, /Duplicate submission/);
    await behindTheBack(sql`UPDATE forms SET deleted_at = now() WHERE id = ${formId}`);
    try {
      assert.equal((await submit('/bob/submission')).statusCode, 404);
    } finally {
      await behindTheBack(sql`UPDATE forms SET deleted_at = NULL WHERE id = ${formId}`);
    }
  });

  test('a bad submission after good ones gets its 400 and stores nothing', async () => {
    assert.equal((await submit('/bob/submission')).statusCode, 201);
    const before = await storedCount();
    const bad = await submit('/bob/submission', {}, '<household id="household"><name>x</household>');
    assert.equal(bad.statusCode, 400);
    assert.equal(await storedCount(), before);
  });
});
