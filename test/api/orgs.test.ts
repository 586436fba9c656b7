// Organisations: registering one, its members and their roles, and what owners and managers may do
// in its account (onadata-core §5.5 and the org cases of its black-box tests, with `denoinc`).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { csvForm, formFile } from '../fixtures/forms.ts';

let server: TestServer;
let bob: TestUser;
let alice: TestUser;
let tom: TestUser;

type Json = Record<string, unknown>;
const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, user?: TestUser, payload?: Json) =>
  server.app.inject({ method, url, headers: user ? user.auth : {}, ...(payload ? { payload } : {}) });

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  alice = await createUser(server.app, 'alice');
  tom = await createUser(server.app, 'tom');
});
after(() => server.close());

describe('organisations', () => {
  test('bob registers denoinc: 201, he is its owner, and it is an account in the users list', async () => {
    const res = await call('POST', '/api/v1/orgs', bob, { org: 'DenoInc', name: 'Dennis Inc', email: 'info@deno.example.org', city: 'Nairobi', country: 'KE' });
    assert.equal(res.statusCode, 201, res.body);
    const org = res.json<Json>();
    assert.equal(org['org'], 'denoinc');
    assert.equal(org['url'], 'http://testserver/api/v1/orgs/denoinc');
    assert.equal(org['user'], 'http://testserver/api/v1/users/denoinc');
    assert.equal(org['creator'], 'http://testserver/api/v1/users/bob');
    assert.equal(org['name'], 'Dennis Inc');
    assert.equal(org['email'], 'info@deno.example.org');
    assert.deepEqual((org['users'] as Json[]).map((u) => [u['user'], u['role']]), [['bob', 'owner']]);

    const users = (await call('GET', '/api/v1/users', bob)).json<Json[]>().map((u) => u['username']);
    assert.ok(users.includes('denoinc'));
    assert.ok(!(await call('GET', '/api/v1/users?orgs=false', bob)).json<Json[]>().some((u) => u['username'] === 'denoinc'));
    assert.deepEqual((await call('GET', '/api/v1/orgs', bob)).json<Json[]>().map((o) => o['org']), ['denoinc']);
  });

  test('bad registrations are 400s that say why', async () => {
    const cases: Array<[Json, Json]> = [
      [{ name: 'X' }, { org: ['This field is required.'] }],
      [{ org: 'denoinc', name: 'Again' }, { org: ['Organization denoinc already exists.'] }],
      [{ org: 'bob', name: 'Bob' }, { org: ['Organization bob already exists.'] }],
      [{ org: 'admin', name: 'Admin' }, { org: ['admin is a reserved name, please choose another'] }],
      [{ org: 'neworg' }, { name: ['This field is required.'] }],
    ];
    for (const [payload, expected] of cases) {
      const res = await call('POST', '/api/v1/orgs', bob, payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      assert.deepEqual(res.json(), expected, JSON.stringify(payload));
    }
    assert.equal((await call('POST', '/api/v1/orgs', undefined, { org: 'anon', name: 'Anon' })).statusCode, 401);
  });

  test('outsiders do not see it; members see it without the owner-only fields', async () => {
    assert.equal((await call('GET', '/api/v1/orgs/denoinc', alice)).statusCode, 404);
    assert.deepEqual((await call('GET', '/api/v1/orgs', alice)).json(), []);
    const added = await call('POST', '/api/v1/orgs/denoinc/members', bob, { username: 'alice' });
    assert.equal(added.statusCode, 201, added.body);
    assert.deepEqual(added.json(), ['bob', 'alice']);
    const seen = (await call('GET', '/api/v1/orgs/denoinc', alice)).json<Json>();
    assert.equal(seen['email'], undefined);
    assert.equal(seen['metadata'], undefined);
    assert.deepEqual((seen['users'] as Json[]).map((u) => [u['user'], u['role']]), [['bob', 'owner'], ['alice', 'member']]);
    assert.deepEqual((await call('GET', '/api/v1/orgs/denoinc/members', alice)).json(), ['bob', 'alice']);
    assert.equal((await call('POST', '/api/v1/orgs/denoinc/members', alice, { username: 'tom' })).statusCode, 403, 'members do not add members');
    assert.equal((await call('PATCH', '/api/v1/orgs/denoinc', alice, { name: 'Mine' })).statusCode, 403);
    const renamed = await call('PATCH', '/api/v1/orgs/denoinc', bob, { name: 'Deno Incorporated', metadata: { sector: 'health' } });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal(renamed.json<Json>()['name'], 'Deno Incorporated');
    assert.deepEqual(renamed.json<Json>()['metadata'], { sector: 'health' });
  });

  test('a plain member may not create projects in it; a manager may, and its owners own them', async () => {
    const project = { name: 'Clinics', owner: 'http://testserver/api/v1/users/denoinc' };
    const refused = await call('POST', '/api/v1/projects', alice, project);
    assert.equal(refused.statusCode, 400);
    assert.deepEqual(refused.json(), { owner: ['You do not have permission to create a project in the organization denoinc.'] });
    const promoted = await call('PUT', '/api/v1/orgs/denoinc/members', bob, { username: 'alice', role: 'manager' });
    assert.deepEqual(promoted.json(), ['bob', 'alice']);
    const made = await call('POST', '/api/v1/projects', alice, project);
    assert.equal(made.statusCode, 201, made.body);
    const users = (made.json<Json>()['users'] as Json[]).map((u) => [u['user'], u['role']]).sort();
    assert.deepEqual(users, [['alice', 'owner'], ['bob', 'owner'], ['denoinc', 'owner']]);
    assert.deepEqual(made.json<Json>()['teams'], [{ name: 'denoinc#Owners', role: 'owner', users: ['bob'] }]);
    const personal = (await call('POST', '/api/v1/projects', alice, { name: 'Mine' })).json<Json>();
    assert.deepEqual(personal['teams'], []);
  });

  test('cloning into the organisation lands in its default project, owned by it (black-box test 40)', async () => {
    const formId = await publishForm(server.app, bob, formFile(csvForm({ id: 'transportation_2011_07_25', title: 'Transportation' })));
    const clone = await call('POST', `/api/v1/forms/${formId}/clone`, bob, { username: 'denoinc' });
    assert.equal(clone.statusCode, 201, clone.body);
    assert.equal(clone.json<Json>()['owner'], 'http://testserver/api/v1/users/denoinc');
    const project = (await call('GET', String(clone.json<Json>()['project']).replace('http://testserver', ''), bob)).json<Json>();
    assert.equal(project['name'], "denoinc's Project");
    assert.deepEqual((await call('POST', `/api/v1/forms/${formId}/clone`, bob, { username: 'denoinc', project_id: 5000 })).json(), { project: ["Project with id '5000' does not exist."] });
    // Owners publish in its account too; strangers do not.
    const published = await server.app.inject({ method: 'POST', url: '/api/v1/forms', headers: bob.auth, payload: { text_xls_form: csvForm({ id: 'org_form' }), owner: 'denoinc' } });
    assert.equal(published.statusCode, 201, published.body);
    const stranger = await server.app.inject({ method: 'POST', url: '/api/v1/forms', headers: tom.auth, payload: { text_xls_form: csvForm({ id: 'org_form' }), owner: 'denoinc' } });
    assert.equal(stranger.statusCode, 403);
  });

  test('a new owner owns every project and form of the organisation; leaving takes those roles away; the last owner stays', async () => {
    assert.equal((await call('POST', '/api/v1/orgs/denoinc/members', bob, { username: 'tom', role: 'owner' })).statusCode, 201);
    const projects = (await call('GET', '/api/v1/projects?owner=denoinc', tom)).json<Json[]>();
    assert.deepEqual(projects.map((p) => p['name']).sort(), ['Clinics', "denoinc's Project"]);
    const forms = (await call('GET', '/api/v1/forms?owner=denoinc', tom)).json<Json[]>();
    assert.equal(forms.length, 2);
    for (const form of forms) {
      const detail = (await call('GET', `/api/v1/forms/${String(form['formid'])}`, tom)).json<{ users: Json[] }>();
      assert.equal(detail.users.find((u) => u['user'] === 'tom')?.['role'], 'owner');
    }
    const removed = await call('DELETE', '/api/v1/orgs/denoinc/members', bob, { username: 'tom' });
    assert.equal(removed.statusCode, 200);
    assert.deepEqual(removed.json(), ['bob', 'alice']);
    assert.deepEqual((await call('GET', '/api/v1/projects?owner=denoinc', tom)).json(), []);
    assert.equal((await call('GET', '/api/v1/orgs/denoinc', tom)).statusCode, 404);

    const last = await call('PUT', '/api/v1/orgs/denoinc/members', bob, { username: 'bob', role: 'manager' });
    assert.equal(last.statusCode, 400);
    assert.deepEqual(last.json(), { username: ["bob is the organization's last owner; make another owner first."] });
    assert.deepEqual((await call('PUT', '/api/v1/orgs/denoinc/members', bob, { username: 'alice', role: 'boss' })).json(), { role: ['"boss" is not a valid choice.'] });
    assert.deepEqual((await call('POST', '/api/v1/orgs/denoinc/members', bob, { username: 'ghost' })).json(), { username: ["User 'ghost' does not exist."] });
  });

  test('the organisation account itself cannot sign in', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { authorization: `Basic ${Buffer.from('denoinc:').toString('base64')}` } });
    assert.equal(res.statusCode, 401);
  });
});
