// /api/v1/metadata for form entries with text values: submission_review (review enabled) and the
// like; who may add, change and delete them; what the server refuses to store half-working.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { householdCsv } from '../fixtures/submissions.ts';

let server: TestServer;
let bob: TestUser;
let eddie: TestUser;
let sam: TestUser;

type Json = Record<string, unknown>;
const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, user?: TestUser, payload?: Json) =>
  server.app.inject({ method, url, headers: user ? user.auth : {}, ...(payload ? { payload } : {}) });

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  eddie = await createUser(server.app, 'eddie');
  sam = await createUser(server.app, 'sam');
});
after(() => server.close());

/** A form of bob's own to each test, with eddie as its editor. */
let forms = 0;
async function sharedForm(): Promise<number> {
  const id = await publishForm(server.app, bob, formFile(householdCsv(`household_${++forms}`), 'household.csv'));
  const shared = await call('POST', `/api/v1/forms/${id}/share`, bob, { username: eddie.username, role: 'editor' });
  assert.equal(shared.statusCode, 204, shared.body);
  return id;
}

/** Review enabled on the form: its metadata entry. */
async function enableReview(formId: number): Promise<Json> {
  const res = await call('POST', '/api/v1/metadata', bob, { xform: formId, data_type: 'submission_review', data_value: 'true' });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<Json>();
}

describe('/api/v1/metadata', () => {
  test('an owner enables review on a form: 201 in onadata’s shape, shown in the form’s metadata', async () => {
    const formId = await sharedForm();
    const reviewEntry = await enableReview(formId);
    assert.deepEqual(Object.keys(reviewEntry), ['id', 'xform', 'data_value', 'data_type', 'data_file', 'extra_data', 'data_file_type', 'media_url', 'file_hash', 'url', 'date_created']);
    assert.equal(reviewEntry['xform'], formId);
    assert.equal(reviewEntry['url'], `http://testserver/api/v1/metadata/${String(reviewEntry['id'])}`);
    const form = (await call('GET', `/api/v1/forms/${formId}`, bob)).json<{ metadata: Json[] }>();
    assert.ok(form.metadata.some((m) => m['data_type'] === 'submission_review' && m['data_value'] === 'true'));

    const again = await call('POST', '/api/v1/metadata', bob, { xform: formId, data_type: 'submission_review', data_value: 'false' });
    assert.equal(again.statusCode, 400);
    assert.deepEqual(again.json(), ['Object already exists']);
  });

  test('list by form, retrieve; strangers see nothing', async () => {
    // A user of their own: the list without ?xform= holds everything eddie may read.
    const erin = await createUser(server.app, 'erin');
    const formId = await publishForm(server.app, bob, formFile(householdCsv('household_listed'), 'household.csv'));
    assert.equal((await call('POST', `/api/v1/forms/${formId}/share`, bob, { username: erin.username, role: 'editor' })).statusCode, 204);
    const reviewEntry = await enableReview(formId);
    const list = await call('GET', `/api/v1/metadata?xform=${formId}`, bob);
    assert.deepEqual(list.json<Json[]>().map((m) => m['data_type']), ['xform_meta_perms', 'submission_review']);
    assert.deepEqual((await call('GET', '/api/v1/metadata', erin)).json<Json[]>().map((m) => m['data_type']), ['xform_meta_perms', 'submission_review']);
    assert.deepEqual((await call('GET', '/api/v1/metadata', sam)).json(), []);
    assert.equal((await call('GET', `/api/v1/metadata?xform=${formId}`, sam)).statusCode, 404);
    assert.deepEqual((await call('GET', `/api/v1/metadata/${String(reviewEntry['id'])}`, erin)).json(), reviewEntry);
    assert.equal((await call('GET', `/api/v1/metadata/${String(reviewEntry['id'])}`, sam)).statusCode, 404);
  });

  test('bad input and unsupported entries get 400s that say why', async () => {
    const formId = await sharedForm();
    const cases: Array<[Json, unknown]> = [
      [{ xform: formId, data_type: 'nonsense', data_value: 'x' }, { data_type: ['"nonsense" is not a valid choice.'] }],
      [{ xform: formId, data_type: 'source' }, { data_value: ['This field is required.'] }],
      [{ data_type: 'source', data_value: 'x' }, { missing_field: ['`xform` or `project` or `instance` field is required.'] }],
      [{ xform: 99999, data_type: 'source', data_value: 'x' }, { xform: ['Invalid pk "99999" - object does not exist.'] }],
      [{ xform: formId, data_type: 'enketo_url', data_value: 'https://example.org/x' }, { data_type: ['"enketo_url" entries cannot be set through this server\'s API yet.'] }],
      [{ xform: formId, data_type: 'source', data_value: 'x'.repeat(256) }, { data_value: ['Ensure this field has no more than 255 characters.'] }],
    ];
    for (const [payload, expected] of cases) {
      const res = await call('POST', '/api/v1/metadata', bob, payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      assert.deepEqual(res.json(), expected, JSON.stringify(payload));
    }
  });

  test('meta permissions re-map the roles of the form’s members; one set per form, owners and managers only', async () => {
    const formId = await sharedForm();
    const roleOf = async (username: string) =>
      (await call('GET', `/api/v1/forms/${formId}`, bob)).json<{ users: Json[] }>().users.find((u) => u['user'] === username)?.['role'];
    const perms = (await call('GET', `/api/v1/metadata?xform=${formId}`, bob)).json<Json[]>().find((m) => m['data_type'] === 'xform_meta_perms');
    const permsUrl = `/api/v1/metadata/${String(perms?.['id'])}`;
    assert.equal(await roleOf('eddie'), 'editor');

    assert.equal((await call('PATCH', permsUrl, eddie, { data_value: 'editor|dataentry|readonly' })).statusCode, 403, 'an editor cannot change them');
    const bad = await call('PATCH', permsUrl, bob, { data_value: 'editor|dataentry' });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { non_field_errors: ["Format must be: 'editor role' | 'dataentry role' | 'readonly role', or an invalid role was provided."] });

    const changed = await call('PATCH', permsUrl, bob, { data_value: 'editor-minor|dataentry-only|readonly-no-download' });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.equal(await roleOf('eddie'), 'editor-minor');
    assert.equal(await roleOf('bob'), 'owner');

    // Adding another replaces the set rather than adding a second one.
    const added = await call('POST', '/api/v1/metadata', bob, { xform: formId, data_type: 'xform_meta_perms', data_value: 'editor|dataentry|readonly' });
    assert.equal(added.statusCode, 201, added.body);
    assert.equal(added.json<Json>()['id'], perms?.['id']);
    assert.equal(await roleOf('eddie'), 'editor');
    const entries = (await call('GET', `/api/v1/metadata?xform=${formId}`, bob)).json<Json[]>().filter((m) => m['data_type'] === 'xform_meta_perms');
    assert.deepEqual(entries.map((m) => m['data_value']), ['editor|dataentry|readonly']);
    assert.equal((await call('DELETE', permsUrl, bob)).statusCode, 400, 'a form keeps its meta permissions');
  });

  test('editors may change an entry’s value but not add or delete entries; anonymous gets 401', async () => {
    const formId = await sharedForm();
    const reviewEntry = await enableReview(formId);
    assert.equal((await call('POST', '/api/v1/metadata', eddie, { xform: formId, data_type: 'source', data_value: 'x' })).statusCode, 403);
    assert.equal((await call('POST', '/api/v1/metadata', sam, { xform: formId, data_type: 'source', data_value: 'x' })).statusCode, 400);
    assert.equal((await call('POST', '/api/v1/metadata', undefined, { xform: formId, data_type: 'source', data_value: 'x' })).statusCode, 401);
    const id = String(reviewEntry['id']);
    const changed = await call('PATCH', `/api/v1/metadata/${id}`, eddie, { data_value: 'false' });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.equal(changed.json<Json>()['data_value'], 'false');
    assert.equal((await call('DELETE', `/api/v1/metadata/${id}`, eddie)).statusCode, 403);
    assert.equal((await call('DELETE', `/api/v1/metadata/${id}`, bob)).statusCode, 204);
    assert.equal((await call('GET', `/api/v1/metadata/${id}`, bob)).statusCode, 404);
    // With the old entry gone, review can be enabled again.
    assert.equal((await call('POST', '/api/v1/metadata', bob, { xform: formId, data_type: 'submission_review', data_value: 'true' })).statusCode, 201);
  });
});
