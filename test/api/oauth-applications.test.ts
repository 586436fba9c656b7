// /api/v1/user/oauth_applications: a user's OAuth 2 client applications as JSON (the web app's
// account page uses it; the /o/applications/ pages show the same rows as HTML).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, startTestServer, type TestServer, type TestUser } from '../helpers.ts';

interface Application {
  id: number;
  name: string;
  client_id: string;
  client_type: string;
  authorization_grant_type: string;
  redirect_uris: string;
  created: string;
  client_secret?: string | null;
}

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

before(async () => {
  server = await startTestServer();
  alice = await createUser(server.app, 'alice');
  bob = await createUser(server.app, 'bob');
});
after(() => server.close());

const URL = '/api/v1/user/oauth_applications';

test('a user registers, lists and deletes OAuth applications; the secret is shown once', async () => {
  const created = await server.app.inject({
    method: 'POST',
    url: URL,
    headers: alice.auth,
    payload: { name: 'Field dashboard', redirect_uris: 'https://dash.example.org/callback http://127.0.0.1:9000/cb' },
  });
  assert.equal(created.statusCode, 201, created.body);
  const app = created.json<Application>();
  assert.equal(app.name, 'Field dashboard');
  assert.equal(app.client_type, 'confidential');
  assert.equal(app.authorization_grant_type, 'authorization-code');
  assert.equal(app.redirect_uris, 'https://dash.example.org/callback http://127.0.0.1:9000/cb');
  assert.match(app.client_id, /^[\w-]{40}$/);
  assert.match(app.client_secret ?? '', /^[\w-]{64}$/);

  const publicApp = await server.app.inject({ method: 'POST', url: URL, headers: alice.auth, payload: { name: 'Phone app', client_type: 'public', redirect_uris: 'https://app.example.org/cb' } });
  assert.equal(publicApp.statusCode, 201, publicApp.body);
  assert.equal(publicApp.json<Application>().client_secret, null);

  const listed = await server.app.inject({ method: 'GET', url: URL, headers: alice.auth });
  assert.equal(listed.statusCode, 200);
  const rows = listed.json<Application[]>();
  assert.deepEqual(rows.map((r) => r.name).sort(), ['Field dashboard', 'Phone app']);
  assert.ok(rows.every((r) => !('client_secret' in r)));

  // Someone else neither sees nor deletes them.
  assert.deepEqual((await server.app.inject({ method: 'GET', url: URL, headers: bob.auth })).json(), []);
  assert.equal((await server.app.inject({ method: 'DELETE', url: `${URL}/${app.id}`, headers: bob.auth })).statusCode, 404);

  const deleted = await server.app.inject({ method: 'DELETE', url: `${URL}/${app.id}`, headers: alice.auth });
  assert.equal(deleted.statusCode, 204);
  assert.equal((await server.app.inject({ method: 'DELETE', url: `${URL}/${app.id}`, headers: alice.auth })).statusCode, 404);
  assert.deepEqual((await server.app.inject({ method: 'GET', url: URL, headers: alice.auth })).json<Application[]>().map((r) => r.name), ['Phone app']);
});

test('bad fields are refused field by field; the anonymous are asked to authenticate', async () => {
  const refused = await server.app.inject({ method: 'POST', url: URL, headers: alice.auth, payload: { name: ' ', client_type: 'secret', redirect_uris: 'ftp://x.example.org/' } });
  assert.equal(refused.statusCode, 400);
  const body = refused.json<Record<string, string[]>>();
  assert.deepEqual(Object.keys(body).sort(), ['client_type', 'name', 'redirect_uris']);
  assert.equal(body['name']?.[0], 'This field is required.');
  assert.equal((await server.app.inject({ method: 'DELETE', url: `${URL}/abc`, headers: alice.auth })).statusCode, 404);
  assert.equal((await server.app.inject({ method: 'GET', url: URL })).statusCode, 401);
});
