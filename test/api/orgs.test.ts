// Organisations: registering one, its members and their roles, and what owners and managers may do
// in its account (onadata-core §5.5 and the org cases of its black-box tests, with `denoinc`).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { csvForm, formFile } from '../fixtures/forms.ts';

let server: TestServer;
let bob: TestUser;
let tom: TestUser;

type Json = Record<string, unknown>;
const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, user?: TestUser, payload?: Json) =>
  server.app.inject({ method, url, headers: user ? user.auth : {}, ...(payload ? { payload } : {}) });

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  tom = await createUser(server.app, 'tom');
});
after(() => server.close());

/**
 * An organisation of a test's own, registered by an owner of its own: the tests change its members,
 * projects and forms, and the first test asserts that denoinc is bob's only organisation.
 */
async function ownOrg(org: string, ownerName: string): Promise<TestUser> {
  const owner = await createUser(server.app, ownerName);
  const res = await call('POST', '/api/v1/orgs', owner, { org, name: `${org} Inc` });
  assert.equal(res.statusCode, 201, res.body);
  return owner;
}

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
    await ownOrg('deno2inc', 'bob2');
    const cases: Array<[Json, Json]> = [
      [{ name: 'X' }, { org: ['This field is required.'] }],
      [{ org: 'deno2inc', name: 'Again' }, { org: ['Organization deno2inc already exists.'] }],
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
    const bob3 = await ownOrg('deno3inc', 'bob3');
    const alice3 = await createUser(server.app, 'alice3');
    assert.equal((await call('GET', '/api/v1/orgs/deno3inc', alice3)).statusCode, 404);
    assert.deepEqual((await call('GET', '/api/v1/orgs', alice3)).json(), []);
    const added = await call('POST', '/api/v1/orgs/deno3inc/members', bob3, { username: 'alice3' });
    assert.equal(added.statusCode, 201, added.body);
    assert.deepEqual(added.json(), ['bob3', 'alice3']);
    const seen = (await call('GET', '/api/v1/orgs/deno3inc', alice3)).json<Json>();
    assert.equal(seen['email'], undefined);
    assert.equal(seen['metadata'], undefined);
    assert.deepEqual((seen['users'] as Json[]).map((u) => [u['user'], u['role']]), [['bob3', 'owner'], ['alice3', 'member']]);
    assert.deepEqual((await call('GET', '/api/v1/orgs/deno3inc/members', alice3)).json(), ['bob3', 'alice3']);
    assert.equal((await call('POST', '/api/v1/orgs/deno3inc/members', alice3, { username: 'tom' })).statusCode, 403, 'members do not add members');
    assert.equal((await call('PATCH', '/api/v1/orgs/deno3inc', alice3, { name: 'Mine' })).statusCode, 403);
    const renamed = await call('PATCH', '/api/v1/orgs/deno3inc', bob3, { name: 'Deno Incorporated', metadata: { sector: 'health' } });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal(renamed.json<Json>()['name'], 'Deno Incorporated');
    assert.deepEqual(renamed.json<Json>()['metadata'], { sector: 'health' });
  });

  test('a plain member may not create projects in it; a manager may, and its owners own them', async () => {
    const bob4 = await ownOrg('deno4inc', 'bob4');
    const alice4 = await createUser(server.app, 'alice4');
    assert.equal((await call('POST', '/api/v1/orgs/deno4inc/members', bob4, { username: 'alice4' })).statusCode, 201);
    const project = { name: 'Clinics', owner: 'http://testserver/api/v1/users/deno4inc' };
    const refused = await call('POST', '/api/v1/projects', alice4, project);
    assert.equal(refused.statusCode, 400);
    assert.deepEqual(refused.json(), { owner: ['You do not have permission to create a project in the organization deno4inc.'] });
    const promoted = await call('PUT', '/api/v1/orgs/deno4inc/members', bob4, { username: 'alice4', role: 'manager' });
    assert.deepEqual(promoted.json(), ['bob4', 'alice4']);
    const made = await call('POST', '/api/v1/projects', alice4, project);
    assert.equal(made.statusCode, 201, made.body);
    const users = (made.json<Json>()['users'] as Json[]).map((u) => [u['user'], u['role']]).sort();
    assert.deepEqual(users, [['alice4', 'owner'], ['bob4', 'owner'], ['deno4inc', 'owner']]);
    assert.deepEqual(made.json<Json>()['teams'], [{ name: 'deno4inc#Owners', role: 'owner', users: ['bob4'] }]);
    const personal = (await call('POST', '/api/v1/projects', alice4, { name: 'Mine' })).json<Json>();
    assert.deepEqual(personal['teams'], []);
  });

  test('cloning into the organisation lands in its default project, owned by it (black-box test 40)', async () => {
    const bob5 = await ownOrg('deno5inc', 'bob5');
    const formId = await publishForm(server.app, bob5, formFile(csvForm({ id: 'transportation_2011_07_25', title: 'Transportation' })));
    const clone = await call('POST', `/api/v1/forms/${formId}/clone`, bob5, { username: 'deno5inc' });
    assert.equal(clone.statusCode, 201, clone.body);
    assert.equal(clone.json<Json>()['owner'], 'http://testserver/api/v1/users/deno5inc');
    const project = (await call('GET', String(clone.json<Json>()['project']).replace('http://testserver', ''), bob5)).json<Json>();
    assert.equal(project['name'], "deno5inc's Project");
    assert.deepEqual((await call('POST', `/api/v1/forms/${formId}/clone`, bob5, { username: 'deno5inc', project_id: 5000 })).json(), { project: ["Project with id '5000' does not exist."] });
    // Owners publish in its account too; strangers do not.
    const published = await server.app.inject({ method: 'POST', url: '/api/v1/forms', headers: bob5.auth, payload: { text_xls_form: csvForm({ id: 'org_form' }), owner: 'deno5inc' } });
    assert.equal(published.statusCode, 201, published.body);
    const stranger = await server.app.inject({ method: 'POST', url: '/api/v1/forms', headers: tom.auth, payload: { text_xls_form: csvForm({ id: 'org_form' }), owner: 'deno5inc' } });
    assert.equal(stranger.statusCode, 403);
  });

  test('a new owner owns every project and form of the organisation; leaving takes those roles away; the last owner stays', async () => {
    // The organisation as the tests before this one leave denoinc: a member, a project of its
    // own, its default project holding a clone, and a form published in its account.
    const bob6 = await ownOrg('deno6inc', 'bob6');
    await createUser(server.app, 'alice6');
    assert.equal((await call('POST', '/api/v1/orgs/deno6inc/members', bob6, { username: 'alice6' })).statusCode, 201);
    assert.equal((await call('POST', '/api/v1/projects', bob6, { name: 'Clinics', owner: 'http://testserver/api/v1/users/deno6inc' })).statusCode, 201);
    const formId = await publishForm(server.app, bob6, formFile(csvForm({ id: 'transportation_2011_07_25', title: 'Transportation' })));
    assert.equal((await call('POST', `/api/v1/forms/${formId}/clone`, bob6, { username: 'deno6inc' })).statusCode, 201);
    const published = await server.app.inject({ method: 'POST', url: '/api/v1/forms', headers: bob6.auth, payload: { text_xls_form: csvForm({ id: 'org_form' }), owner: 'deno6inc' } });
    assert.equal(published.statusCode, 201, published.body);

    assert.equal((await call('POST', '/api/v1/orgs/deno6inc/members', bob6, { username: 'tom', role: 'owner' })).statusCode, 201);
    const projects = (await call('GET', '/api/v1/projects?owner=deno6inc', tom)).json<Json[]>();
    assert.deepEqual(projects.map((p) => p['name']).sort(), ['Clinics', "deno6inc's Project"]);
    const forms = (await call('GET', '/api/v1/forms?owner=deno6inc', tom)).json<Json[]>();
    assert.equal(forms.length, 2);
    for (const form of forms) {
      const detail = (await call('GET', `/api/v1/forms/${String(form['formid'])}`, tom)).json<{ users: Json[] }>();
      assert.equal(detail.users.find((u) => u['user'] === 'tom')?.['role'], 'owner');
    }
    const removed = await call('DELETE', '/api/v1/orgs/deno6inc/members', bob6, { username: 'tom' });
    assert.equal(removed.statusCode, 200);
    assert.deepEqual(removed.json(), ['bob6', 'alice6']);
    assert.deepEqual((await call('GET', '/api/v1/projects?owner=deno6inc', tom)).json(), []);
    assert.equal((await call('GET', '/api/v1/orgs/deno6inc', tom)).statusCode, 404);

    const last = await call('PUT', '/api/v1/orgs/deno6inc/members', bob6, { username: 'bob6', role: 'manager' });
    assert.equal(last.statusCode, 400);
    assert.deepEqual(last.json(), { username: ["bob6 is the organization's last owner; make another owner first."] });
    assert.deepEqual((await call('PUT', '/api/v1/orgs/deno6inc/members', bob6, { username: 'alice6', role: 'boss' })).json(), { role: ['"boss" is not a valid choice.'] });
    assert.deepEqual((await call('POST', '/api/v1/orgs/deno6inc/members', bob6, { username: 'ghost' })).json(), { username: ["User 'ghost' does not exist."] });
  });

  test('the organisation account itself cannot sign in', async () => {
    await ownOrg('deno7inc', 'bob7');
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { authorization: `Basic ${Buffer.from('deno7inc:').toString('base64')}` } });
    assert.equal(res.statusCode, 401);
  });
});
