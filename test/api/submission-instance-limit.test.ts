// An instance (xml_submission_file) is parsed in memory, so it has its own limit, INSTANCE_LIMIT,
// far below a file's: over it the submission is refused with 413 and nothing is stored, whether
// the body is small enough to be read whole or streamed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createUser, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';

const LIMIT = 64 * 1024;
let server: TestServer;
let bob: TestUser;
let formId: number;

before(async () => {
  server = await startTestServer({ INSTANCE_LIMIT: String(LIMIT) });
  bob = await createUser(server.app, 'bob');
  formId = await publishForm(server.app, bob, formFile(HOUSEHOLD_CSV, 'household.csv'));
});
after(() => server.close());

/** A household instance padded with a long name to about `bytes`. */
const padded = (bytes: number) => householdXml({ uuid: randomUUID(), name: 'x'.repeat(bytes) });

async function count(): Promise<number> {
  return (await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}`, headers: bob.auth })).json().num_of_submissions;
}

for (const [label, size] of [['read whole', 100 * 1024], ['streamed', 2 * 1024 * 1024]] as const) {
  test(`an instance over INSTANCE_LIMIT is a 413 (${label}); one within it is stored`, async () => {
    const before = await count();
    const refused = await postSubmission(server.app, '/bob/submission', padded(size), bob.auth);
    assert.equal(refused.statusCode, 413, refused.body);
    assert.match(refused.body, /65536 bytes/);
    assert.equal(await count(), before);
    const stored = await postSubmission(server.app, '/bob/submission', padded(LIMIT / 2), bob.auth);
    assert.equal(stored.statusCode, 201, stored.body);
  });
}
