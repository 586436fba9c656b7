// GET /api/v1/stats/submissions/{pk}: a form's records counted per day, per submitter and per answer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createUser, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';

let server: TestServer;
let bob: TestUser;
let carol: TestUser;
let formId: number;

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  carol = await createUser(server.app, 'carol');
  formId = await publishForm(server.app, bob, formFile(HOUSEHOLD_CSV, 'household.csv'));
  for (const age of [30, 30, 41]) {
    const res = await postSubmission(server.app, '/bob/submission', householdXml({ uuid: randomUUID(), age }), bob.auth);
    assert.equal(res.statusCode, 201, res.body);
  }
});
after(() => server.close());

async function stats(query: string, user: TestUser | null = bob) {
  return server.app.inject({ method: 'GET', url: `/api/v1/stats/submissions/${formId}?${query}`, headers: user?.auth ?? {} });
}

test('records per day, per submitter and per answer, in value order', async () => {
  const today = new Date(server.clock.now()).toISOString().slice(0, 10);
  const days = await stats('group=_submission_time&name=day');
  assert.equal(days.statusCode, 200, days.body);
  assert.deepEqual(days.json(), [{ day: today, count: 3 }]);
  assert.deepEqual((await stats('group=_submitted_by')).json(), [{ _submitted_by: 'bob', count: 3 }]);
  assert.deepEqual((await stats('group=age')).json(), [{ age: '30', count: 2 }, { age: '41', count: 1 }]);
  assert.deepEqual((await stats('group=browsers')).json(), [{ browsers: 'firefox chrome', count: 3 }]);
  // A question nobody answered is one group of nulls.
  assert.deepEqual((await stats('group=nothing_here')).json(), [{ nothing_here: null, count: 3 }]);
});

test('no group is a 400; a form not shared with the caller is not found', async () => {
  assert.equal((await stats('')).statusCode, 400);
  assert.equal((await stats('group=age', carol)).statusCode, 404);
  // Anonymous callers are answered as the data API answers them.
  const data = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}` });
  assert.equal((await stats('group=age', null)).statusCode, data.statusCode);
  const badId = await server.app.inject({ method: 'GET', url: '/api/v1/stats/submissions/abc?group=age', headers: bob.auth });
  assert.equal(badId.statusCode, (await server.app.inject({ method: 'GET', url: '/api/v1/data/abc', headers: bob.auth })).statusCode);
  assert.ok(badId.statusCode >= 400 && badId.statusCode < 500, badId.body);
});
