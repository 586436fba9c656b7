import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { basic, createUser, startTestServer, type TestServer, type TestUser } from '../helpers.ts';

let server: TestServer;
let bob: TestUser;

before(async () => {
  server = await startTestServer({ MAX_LOGIN_ATTEMPTS: '3', LOCKOUT_TIME: '600' });
  bob = await createUser(server.app, 'bob');
});
after(() => server.close());

const get = (url: string, authorization?: string) =>
  server.app.inject({ method: 'GET', url, headers: authorization ? { authorization } : {} });

describe('GET /api/v1/user', () => {
  test('Token auth returns the current user with exactly onadata’s keys and both tokens', async () => {
    const res = await get('/api/v1/user', `Token ${bob.token}`);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body), [
      'url', 'username', 'name', 'email', 'city', 'country', 'organization', 'website', 'twitter',
      'gravatar', 'require_auth', 'user', 'api_token', 'temp_token',
    ]);
    assert.equal(body.api_token, bob.token);
    assert.match(body.temp_token, /^[0-9a-f]{40}$/);
    assert.equal(body.url, 'http://testserver/api/v1/profiles/bob');
    assert.equal(body.user, 'http://testserver/api/v1/users/bob');
    assert.equal(body.email, bob.email);
    // Tokens must not land in shared caches, so the max-age is private here.
    assert.equal(res.headers['cache-control'], 'private, max-age=30');
  });

  test('POST answers 201 with the same body', async () => {
    const res = await server.app.inject({ method: 'POST', url: '/api/v1/user', headers: bob.auth });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().api_token, bob.token);
    assert.equal(res.headers['cache-control'], undefined);
  });

  test('the keyword is case-insensitive', async () => {
    assert.equal((await get('/api/v1/user', `token ${bob.token}`)).statusCode, 200);
  });

  test('Basic auth works with username in any case and with the e-mail address', async () => {
    assert.equal((await get('/api/v1/user', basic('BOB', bob.password))).statusCode, 200);
    assert.equal((await get('/api/v1/user', basic(bob.email, bob.password))).statusCode, 200);
  });

  test('anonymous gets 401 "not provided" with a challenge', async () => {
    const res = await get('/api/v1/user');
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { detail: 'Authentication credentials were not provided.' });
    assert.ok(res.headers['www-authenticate']);
  });

  test('a wrong token gets 401 "Invalid token." with WWW-Authenticate: Token', async () => {
    const res = await get('/api/v1/user', 'Token invalidtoken');
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { detail: 'Invalid token.' });
    assert.equal(res.headers['www-authenticate'], 'Token');
  });

  test('malformed token headers get DRF’s messages', async () => {
    assert.deepEqual((await get('/api/v1/user', 'Token')).json(), { detail: 'Invalid token header. No credentials provided.' });
    assert.deepEqual((await get('/api/v1/user', 'Token a b')).json(), {
      detail: 'Invalid token header. Token string should not contain spaces.',
    });
  });

  test('an unknown scheme is ignored: the request is anonymous', async () => {
    const res = await get('/api/v1/user', 'Negotiate garbage');
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { detail: 'Authentication credentials were not provided.' });
  });
});

describe('TempToken', () => {
  test('a temp token authenticates and /user returns the same temp token', async () => {
    const first = (await get('/api/v1/user', `Token ${bob.token}`)).json().temp_token;
    const res = await get('/api/v1/user', `TempToken ${first}`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().temp_token, first);
  });

  test('an unknown temp token gets 401 "Invalid token" with WWW-Authenticate: TempToken', async () => {
    const res = await get('/api/v1/user', 'TempToken abcdefghijklmopqrstuvwxyz');
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { detail: 'Invalid token' });
    assert.equal(res.headers['www-authenticate'], 'TempToken');
  });

  test('an expired temp token gets 401 "Token expired" and /user then issues a fresh one', async () => {
    const old = (await get('/api/v1/user', `Token ${bob.token}`)).json().temp_token;
    server.clock.advance(21601);
    try {
      const res = await get('/api/v1/user', `TempToken ${old}`);
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), { detail: 'Token expired' });
      const fresh = (await get('/api/v1/user', `Token ${bob.token}`)).json().temp_token;
      assert.notEqual(fresh, old);
      assert.equal((await get('/api/v1/user', `TempToken ${fresh}`)).statusCode, 200);
    } finally {
      server.clock.advance(-21601);
    }
  });

  test('DELETE /user/expire expires it: 204, then 400 when none is left, then the old key is invalid', async () => {
    const temp = (await get('/api/v1/user', `Token ${bob.token}`)).json().temp_token;
    const first = await server.app.inject({ method: 'DELETE', url: '/api/v1/user/expire', headers: bob.auth });
    assert.equal(first.statusCode, 204);
    assert.equal(first.body, '');
    const second = await server.app.inject({ method: 'DELETE', url: '/api/v1/user/expire', headers: bob.auth });
    assert.equal(second.statusCode, 400);
    assert.deepEqual(second.json(), { detail: 'Temporary token not found!' });
    const res = await get('/api/v1/user', `TempToken ${temp}`);
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { detail: 'Invalid token' });
  });

  test('anonymous DELETE /user/expire gets 401', async () => {
    assert.equal((await server.app.inject({ method: 'DELETE', url: '/api/v1/user/expire' })).statusCode, 401);
  });
});

describe('token storage', () => {
  test('the database holds no usable token: only hashes and sealed copies', async () => {
    const rows = await sql<{ key_hash: Uint8Array; key_sealed: string }>`SELECT key_hash, key_sealed FROM api_tokens`.execute(server.deps.db);
    for (const row of rows.rows) {
      assert.ok(!row.key_sealed.includes(bob.token));
      assert.notEqual(Buffer.from(row.key_hash).toString('hex'), bob.token);
      assert.equal((await get('/api/v1/user', `Token ${Buffer.from(row.key_hash).toString('hex')}`)).statusCode, 401);
    }
    const users = await sql<{ password_hash: string }>`SELECT password_hash FROM users`.execute(server.deps.db);
    for (const row of users.rows) assert.match(row.password_hash, /^\$argon2id\$/);
  });

  test('regenerate_auth_token answers 201 with the new key as a JSON string; the old key stops working', async () => {
    const carol = await createUser(server.app, 'carol');
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/user/regenerate_auth_token', headers: carol.auth });
    assert.equal(res.statusCode, 201);
    const key = JSON.parse(res.body) as string;
    assert.match(key, /^[0-9a-f]{40}$/);
    assert.equal((await get('/api/v1/user', `Token ${carol.token}`)).statusCode, 401);
    assert.equal((await get('/api/v1/user', `Token ${key}`)).statusCode, 200);
  });

  test('a deactivated user’s token gets 401 "User inactive or deleted."', async () => {
    const dave = await createUser(server.app, 'dave');
    await server.deps.db.updateTable('users').set({ is_active: false }).where('id', '=', dave.id).execute();
    const res = await get('/api/v1/user', `Token ${dave.token}`);
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { detail: 'User inactive or deleted.' });
  });
});

describe('login throttling', () => {
  test('wrong Basic credentials get 401 "Invalid username/password."', async () => {
    const res = await get('/api/v1/user', basic('bob', 'wrong-password'));
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { detail: 'Invalid username/password.' });
    assert.match(String(res.headers['www-authenticate']), /^Basic/);
  });

  test('after MAX_LOGIN_ATTEMPTS failures the account is locked for that address with a 429, even for the right password', async () => {
    const erin = await createUser(server.app, 'erin');
    for (let i = 0; i < 2; i++) assert.equal((await get('/api/v1/user', basic('erin', 'nope-nope'))).statusCode, 401);
    const locked = await get('/api/v1/user', basic('erin', 'nope-nope'));
    assert.equal(locked.statusCode, 429);
    assert.match(locked.json().detail, /^Request was throttled\. Expected available in \d+ seconds\.$/);
    assert.ok(Number(locked.headers['retry-after']) > 0);
    assert.equal((await get('/api/v1/user', basic('erin', erin.password))).statusCode, 429);
    // Other accounts from the same address, and token auth, are unaffected.
    assert.equal((await get('/api/v1/user', basic('bob', bob.password))).statusCode, 200);
    assert.equal((await get('/api/v1/user', erin.auth.authorization)).statusCode, 200);
    // The lock ends after LOCKOUT_TIME.
    server.clock.advance(601);
    try {
      assert.equal((await get('/api/v1/user', basic('erin', erin.password))).statusCode, 200);
    } finally {
      server.clock.advance(-601);
    }
  });
});

describe('authentication cache', () => {
  test('a profile change is visible at once through the same token', async () => {
    const hana = await createUser(server.app, 'hana');
    assert.equal((await get('/api/v1/user', hana.auth.authorization)).json().city, '');
    await server.app.inject({ method: 'PATCH', url: '/api/v1/profiles/hana', payload: { city: 'Mombasa' }, headers: hana.auth });
    assert.equal((await get('/api/v1/user', hana.auth.authorization)).json().city, 'Mombasa');
  });

  test('another process’s revocation is honoured once the cache entry ages out', async () => {
    const ivan = await createUser(server.app, 'ivan');
    assert.equal((await get('/api/v1/user', ivan.auth.authorization)).statusCode, 200);
    // Simulate another process deleting the token directly in the database.
    await server.deps.db.deleteFrom('api_tokens').where('user_id', '=', ivan.id).execute();
    server.clock.advance(server.deps.config.authCacheMs / 1000 + 1);
    try {
      assert.equal((await get('/api/v1/user', ivan.auth.authorization)).statusCode, 401);
    } finally {
      server.clock.advance(-(server.deps.config.authCacheMs / 1000 + 1));
    }
  });
});
