// The browser session on /api/v1: POST/GET/DELETE /api/v1/session, the cookie as an authentication
// scheme (shared with the /o/ pages), and its CSRF defences on unsafe methods.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { basic, createUser, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { TestBrowser } from '../oauth-client.ts';

const ORIGIN = 'http://testserver';

let server: TestServer;
let alice: TestUser;
let bob: TestUser;

/** A cookie jar over app.inject, as the web app's fetch calls are. */
class AppClient {
  readonly cookies = new Map<string, string>();
  csrf = '';

  constructor(private readonly server: TestServer) {}

  async request(method: string, url: string, options: { payload?: Record<string, unknown>; headers?: Record<string, string>; csrf?: boolean } = {}): Promise<LightMyRequestResponse> {
    const headers: Record<string, string> = { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '), ...options.headers };
    if (options.csrf !== false && method !== 'GET') headers['x-csrftoken'] = this.csrf;
    const response = await this.server.app.inject({ method: method as 'GET', url, headers, ...(options.payload ? { payload: options.payload } : {}) });
    for (const cookie of response.cookies) {
      if (cookie.maxAge === 0 || cookie.value === '') this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    return response;
  }

  async start(): Promise<void> {
    const answer = await this.request('GET', '/api/v1/session');
    assert.equal(answer.statusCode, 200, answer.body);
    this.csrf = answer.json<{ csrf_token: string }>().csrf_token;
  }

  async signIn(user: TestUser): Promise<LightMyRequestResponse> {
    await this.start();
    return this.request('POST', '/api/v1/session', { payload: { username: user.username, password: user.password }, headers: { origin: ORIGIN } });
  }
}

async function signedIn(user: TestUser): Promise<AppClient> {
  const client = new AppClient(server);
  const answer = await client.signIn(user);
  assert.equal(answer.statusCode, 201, answer.body);
  return client;
}

before(async () => {
  server = await startTestServer({ MAX_LOGIN_ATTEMPTS: '3', LOCKOUT_TIME: '600' });
  alice = await createUser(server.app, 'alice');
  bob = await createUser(server.app, 'bob');
});
after(() => server.close());

describe('GET /api/v1/session', () => {
  test('signed out: no user, a CSRF token matching its HttpOnly cookie, registration open', async () => {
    const client = new AppClient(server);
    const res = await client.request('GET', '/api/v1/session');
    assert.equal(res.statusCode, 200);
    const body = res.json<{ user: unknown; csrf_token: string; registration_open: boolean }>();
    assert.equal(body.user, null);
    assert.equal(body.registration_open, true);
    assert.match(body.csrf_token, /^[\w-]{43}$/);
    const cookie = res.cookies.find((c) => c.name === 'gather_csrf');
    assert.equal(cookie?.value, body.csrf_token);
    assert.equal(cookie?.httpOnly, true);
    assert.equal(cookie?.path, '/');
    assert.equal(res.headers['cache-control'], 'no-store');
  });
});

describe('signing in', () => {
  test('the right password sets an HttpOnly SameSite=Lax session cookie for the whole site and answers the user', async () => {
    const client = new AppClient(server);
    const res = await client.signIn(alice);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json<{ user: { username: string } }>().user.username, 'alice');
    const cookie = res.cookies.find((c) => c.name === 'gather_session' && c.value !== '');
    assert.ok(cookie);
    assert.equal(cookie.path, '/');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    const me = await client.request('GET', '/api/v1/session');
    assert.equal(me.json<{ user: { username: string } }>().user.username, 'alice');
  });

  test('without the CSRF header it is refused and no session is set', async () => {
    const client = new AppClient(server);
    await client.start();
    const res = await client.request('POST', '/api/v1/session', { payload: { username: alice.username, password: alice.password }, csrf: false });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { detail: 'CSRF Failed: CSRF token missing.' });
    assert.equal(client.cookies.has('gather_session'), false);
  });

  test('a wrong password is a 400, and it counts towards the lockout Basic shares', async () => {
    const carol = await createUser(server.app, 'carol');
    const client = new AppClient(server);
    await client.start();
    for (let i = 0; i < 2; i++) {
      const res = await client.request('POST', '/api/v1/session', { payload: { username: 'carol', password: 'wrong' } });
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), { detail: 'Invalid username/password.' });
    }
    // MAX_LOGIN_ATTEMPTS=3: the third failure locks the account at this address.
    const third = await client.request('POST', '/api/v1/session', { payload: { username: 'carol', password: 'wrong' } });
    assert.equal(third.statusCode, 429);
    const locked = await client.request('POST', '/api/v1/session', { payload: { username: 'carol', password: carol.password } });
    assert.equal(locked.statusCode, 429, locked.body);
    assert.ok(locked.headers['retry-after']);
    const viaBasic = await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { authorization: basic('carol', carol.password) } });
    assert.equal(viaBasic.statusCode, 429);
  });
});

describe('the session cookie as an authentication scheme', () => {
  test('authenticates GETs; the answer varies on Cookie and is revalidated, never kept by shared caches', async () => {
    const client = await signedIn(alice);
    const res = await client.request('GET', '/api/v1/user');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<{ username: string }>().username, 'alice');
    assert.match(String(res.headers['vary']), /\bCookie\b/);
    assert.equal(res.headers['cache-control'], 'private, no-cache');
  });

  test('a POST without the CSRF header, or with another token, is refused with 403', async () => {
    const client = await signedIn(alice);
    const missing = await client.request('POST', '/api/v1/projects', { payload: { name: 'No token' }, csrf: false });
    assert.equal(missing.statusCode, 403);
    assert.deepEqual(missing.json(), { detail: 'CSRF Failed: CSRF token missing.' });
    const wrong = await client.request('POST', '/api/v1/projects', { payload: { name: 'Wrong token' }, csrf: false, headers: { 'x-csrftoken': 'A'.repeat(43) } });
    assert.equal(wrong.statusCode, 403);
    assert.deepEqual(wrong.json(), { detail: 'CSRF Failed: CSRF token incorrect.' });
    const good = await client.request('POST', '/api/v1/projects', { payload: { name: 'With token' }, headers: { origin: ORIGIN } });
    assert.equal(good.statusCode, 201, good.body);
  });

  test('a request from another origin is refused even with the token', async () => {
    const client = await signedIn(alice);
    const foreign = await client.request('POST', '/api/v1/projects', { payload: { name: 'Evil' }, headers: { origin: 'https://evil.example' } });
    assert.equal(foreign.statusCode, 403);
    assert.deepEqual(foreign.json(), { detail: 'CSRF Failed: Origin checking failed - https://evil.example does not match any trusted origins.' });
    const lookalike = await client.request('POST', '/api/v1/projects', { payload: { name: 'Evil' }, headers: { origin: 'http://testserver.evil.example' } });
    assert.equal(lookalike.statusCode, 403);
    const crossSite = await client.request('DELETE', '/api/v1/session', { headers: { 'sec-fetch-site': 'cross-site' } });
    assert.equal(crossSite.statusCode, 403);
    assert.ok(client.cookies.has('gather_session'));
  });

  test('a page on the host the request was sent to is this site, though BASE_URL names another', async () => {
    const client = await signedIn(alice);
    const res = await client.request('POST', '/api/v1/projects', { payload: { name: 'By address' }, headers: { host: '10.1.2.3:8000', origin: 'http://10.1.2.3:8000' } });
    assert.equal(res.statusCode, 201, res.body);
  });

  test('signing out clears the cookie; the browser is then anonymous', async () => {
    const client = await signedIn(alice);
    const out = await client.request('DELETE', '/api/v1/session', { headers: { origin: ORIGIN } });
    assert.equal(out.statusCode, 204, out.body);
    assert.ok(out.cookies.some((c) => c.name === 'gather_session' && c.path === '/' && c.maxAge === 0));
    assert.equal(client.cookies.has('gather_session'), false);
    const me = await client.request('GET', '/api/v1/user');
    assert.equal(me.statusCode, 401);
    const session = await client.request('GET', '/api/v1/session');
    assert.equal(session.json<{ user: unknown }>().user, null);
  });

  test('signing out ends the session itself: a copy of the cookie taken before works no more', async () => {
    const client = await signedIn(alice);
    const copy = client.cookies.get('gather_session') ?? '';
    const replay = () => server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { cookie: `gather_session=${copy}` } });
    assert.equal((await replay()).statusCode, 200);
    const other = await signedIn(alice);
    assert.equal((await client.request('DELETE', '/api/v1/session', { headers: { origin: ORIGIN } })).statusCode, 204);
    assert.equal((await replay()).statusCode, 401);
    // Only that session ends: the same user's other browser stays signed in.
    assert.equal((await other.request('GET', '/api/v1/user')).statusCode, 200);
    // The database keeps no session key, only its hash.
    const rows = await server.deps.db.selectFrom('browser_sessions').select(['key_hash']).execute();
    assert.ok(rows.every((r) => r.key_hash.byteLength === 32));
  });

  test('a forged or expired cookie authenticates nobody', async () => {
    const client = await signedIn(alice);
    const sealed = client.cookies.get('gather_session') ?? '';
    const forged = await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { cookie: `gather_session=${sealed.slice(0, -4)}AAAA` } });
    assert.equal(forged.statusCode, 401);
    const junk = await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { cookie: 'gather_session=not-a-session' } });
    assert.equal(junk.statusCode, 401);
    server.clock.advance(12 * 3600 + 1);
    try {
      const expired = await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { cookie: `gather_session=${sealed}` } });
      assert.equal(expired.statusCode, 401);
    } finally {
      server.clock.advance(-(12 * 3600 + 1));
    }
  });

  test('an Authorization header wins over the cookie', async () => {
    const client = await signedIn(alice);
    const res = await client.request('GET', '/api/v1/user', { headers: bob.auth });
    assert.equal(res.json<{ username: string }>().username, 'bob');
  });

  test('the app’s own calls get a 401 challenge no browser answers with a password dialog', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { 'x-requested-with': 'XMLHttpRequest' } });
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['www-authenticate'], 'Session realm="Gather"');
    const plain = await server.app.inject({ method: 'GET', url: '/api/v1/user' });
    assert.match(String(plain.headers['www-authenticate']), /^Digest /);
  });

  test('the /o/login/ page’s sign-in is the same session', async () => {
    const browser = new TestBrowser(server.app);
    const signed = await browser.signIn(bob.username, bob.password);
    assert.equal(signed.statusCode, 303);
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { cookie: browser.cookieHeader() } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<{ username: string }>().username, 'bob');
  });

  test('outside /api/v1 the cookie authenticates nothing (the /o/ forms and devices check their own)', async () => {
    const client = await signedIn(alice);
    const list = await client.request('GET', '/formList');
    assert.equal(list.statusCode, 401);
  });
});

test('DISABLE_CREATING_USERS: the session says registration is closed', async () => {
  const closed = await startTestServer({ DISABLE_CREATING_USERS: 'true' });
  try {
    const res = await closed.app.inject({ method: 'GET', url: '/api/v1/session' });
    assert.equal(res.json<{ registration_open: boolean }>().registration_open, false);
  } finally {
    await closed.close();
  }
});
