import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, startTestServer, type TestServer, type TestUser } from '../helpers.ts';

let server: TestServer;
let bob: TestUser;
let alice: TestUser;

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  alice = await createUser(server.app, 'alice');
  await createUser(server.app, 'denoinc');
  // Organisations are accounts too; until the organisations module exists, mark one by hand.
  await server.deps.db.updateTable('users').set({ is_org: true }).where('username', '=', 'denoinc').execute();
});
after(() => server.close());

const get = (url: string, headers: Record<string, string> = bob.auth) => server.app.inject({ method: 'GET', url, headers });

describe('GET /api/v1/users', () => {
  test('anonymous gets 401', async () => {
    const res = await get('/api/v1/users', {});
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { detail: 'Authentication credentials were not provided.' });
  });

  test('lists active users with exactly id, username, first_name, last_name, and onadata’s headers', async () => {
    const res = await get('/api/v1/users');
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(body.map((u: { username: string }) => u.username).sort(), ['alice', 'bob', 'denoinc']);
    for (const user of body) assert.deepEqual(Object.keys(user), ['id', 'username', 'first_name', 'last_name']);
    assert.equal(res.headers['cache-control'], 'max-age=30');
    assert.equal(res.headers['allow'], 'GET, HEAD, OPTIONS');
    assert.equal(res.headers['vary'], 'Accept');
    assert.match(String(res.headers['content-type']), /^application\/json/);
  });

  test('orgs=false leaves out organisations (any case)', async () => {
    const names = (await get('/api/v1/users?orgs=FALSE')).json().map((u: { username: string }) => u.username);
    assert.ok(!names.includes('denoinc'));
    assert.ok(names.includes('bob'));
  });

  test('search matches part of a username or the exact e-mail, case-insensitively', async () => {
    const byPart = (await get('/api/v1/users?search=lic')).json().map((u: { username: string }) => u.username);
    assert.deepEqual(byPart, ['alice']);
    const byEmail = (await get(`/api/v1/users?search=${encodeURIComponent(alice.email.toUpperCase())}`)).json();
    assert.deepEqual(byEmail.map((u: { username: string }) => u.username), ['alice']);
    assert.deepEqual((await get('/api/v1/users?search=nobody@nowhere.org')).json(), []);
    // LIKE wildcards in the term are taken literally.
    assert.deepEqual((await get('/api/v1/users?search=%25')).json(), []);
  });

  test('deactivated users are not listed', async () => {
    const gone = await createUser(server.app, 'gone');
    await server.deps.db.updateTable('users').set({ is_active: false }).where('id', '=', gone.id).execute();
    const names = (await get('/api/v1/users')).json().map((u: { username: string }) => u.username);
    assert.ok(!names.includes('gone'));
    assert.equal((await get('/api/v1/users/gone')).statusCode, 404);
  });
});

describe('GET /api/v1/users/{username}', () => {
  test('by username in any case and by id', async () => {
    const byName = await get('/api/v1/users/BoB', alice.auth);
    assert.equal(byName.statusCode, 200);
    assert.deepEqual(byName.json(), { id: bob.id, username: 'bob', first_name: 'Bob', last_name: 'Tester' });
    assert.deepEqual((await get(`/api/v1/users/${bob.id}`, alice.auth)).json(), byName.json());
  });

  test('unknown gets 404 "No User matches the given query."; anonymous 401', async () => {
    const res = await get('/api/v1/users/nobody');
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { detail: 'No User matches the given query.' });
    assert.equal((await get(`/api/v1/users/${bob.id}`, {})).statusCode, 401);
  });
});
