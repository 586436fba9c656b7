import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { basic, createUser, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { basicAuth, formBody, hiddenFields, pkcePair, redirectParams, TestBrowser, tokenRequest } from '../oauth-client.ts';

const REDIRECT = 'https://client.example.org/callback';

let server: TestServer;
let alice: TestUser;
let browser: TestBrowser;
/** A confidential client registered by alice. */
let client: { clientId: string; clientSecret: string };

before(async () => {
  server = await startTestServer({ MAX_LOGIN_ATTEMPTS: '3', LOCKOUT_TIME: '600' });
  alice = await createUser(server.app, 'alice');
  browser = new TestBrowser(server.app);
  const signed = await browser.signIn(alice.username, alice.password);
  assert.equal(signed.statusCode, 303);
  const registered = await browser.register({ name: 'Field reports', redirect_uris: `${REDIRECT} http://127.0.0.1:9/cb` });
  client = { clientId: registered.clientId, clientSecret: registered.clientSecret ?? '' };
});
after(() => server.close());

const authParams = (extra: Record<string, string> = {}) => ({
  client_id: client.clientId,
  response_type: 'code',
  state: 'st-123',
  redirect_uri: REDIRECT,
  ...extra,
});

/** Runs the authorization step as alice and answers the code. */
async function codeFor(params: Record<string, string> = authParams()): Promise<string> {
  const res = await browser.authorize(params);
  assert.equal(res.statusCode, 302, res.body);
  const code = redirectParams(res).get('code');
  assert.ok(code);
  return code;
}

async function exchange(code: string, extra: Record<string, string> = {}) {
  return tokenRequest(
    server.app,
    { grant_type: 'authorization_code', code, client_id: client.clientId, redirect_uri: REDIRECT, ...extra },
    basicAuth(client.clientId, client.clientSecret),
  );
}

const getUser = (token: string) => server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { authorization: `Bearer ${token}` } });

describe('the spec’s four steps', () => {
  test('register, authorize (login page, consent), token with Basic client credentials, then the API with Bearer', async () => {
    // 1. registration gave a client_id and a secret
    assert.match(client.clientId, /^[A-Za-z0-9_-]{40}$/);
    assert.ok(client.clientSecret.length >= 43);

    // 2. a fresh browser is sent to the login page, signs in, sees the consent page and approves
    const fresh = new TestBrowser(server.app);
    const query = formBody({ client_id: client.clientId, response_type: 'code', state: 'xyz987' });
    const first = await fresh.get(`/o/authorize?${query}`);
    assert.equal(first.statusCode, 302);
    const loginUrl = String(first.headers.location);
    assert.ok(loginUrl.startsWith('/o/login/?next='), loginUrl);
    const loginPage = await fresh.get(loginUrl);
    assert.equal(loginPage.statusCode, 200);
    assert.match(loginPage.body, /<label for="password">/);
    const next = new URL(loginUrl, 'http://x').searchParams.get('next') ?? '';
    const signIn = await fresh.post('/o/login/', { csrf_token: fresh.csrf, username: alice.username, password: alice.password, next });
    assert.equal(signIn.statusCode, 303);
    assert.equal(signIn.headers.location, `/o/authorize?${query}`);
    const consent = await fresh.get(String(signIn.headers.location));
    assert.equal(consent.statusCode, 200);
    assert.match(consent.body, /Field reports/);
    assert.match(consent.body, /<strong>read<\/strong>/);
    assert.match(consent.body, /<strong>write<\/strong>/);
    assert.match(consent.body, /<strong>groups<\/strong>/);
    const approved = await fresh.post('/o/authorize/', { ...hiddenFields(consent.body), decision: 'allow' });
    assert.equal(approved.statusCode, 302);
    const location = new URL(String(approved.headers.location));
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT, 'the first registered redirect_uri');
    assert.equal(location.searchParams.get('state'), 'xyz987');
    const code = location.searchParams.get('code') ?? '';
    assert.ok(code);

    // 3. the token request, authenticated with Basic client_id:client_secret
    const token = await exchange(code);
    assert.equal(token.statusCode, 200, token.body);
    const body = token.json();
    assert.deepEqual(Object.keys(body), ['access_token', 'expires_in', 'token_type', 'scope', 'refresh_token']);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 36000);
    assert.equal(body.scope, 'read write groups');
    assert.equal(token.headers['cache-control'], 'no-store');
    assert.equal(token.headers['pragma'], 'no-cache');

    // 4. the API with the Bearer token
    const me = await getUser(body.access_token);
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().username, 'alice');
  });

  test('/o/token/ with a trailing slash and client credentials in the body work too', async () => {
    const code = await codeFor();
    const res = await tokenRequest(
      server.app,
      { grant_type: 'authorization_code', code, client_id: client.clientId, client_secret: client.clientSecret, redirect_uri: REDIRECT },
      undefined,
      '/o/token/',
    );
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await getUser(res.json().access_token)).statusCode, 200);
  });

  test('a narrower scope is granted as asked', async () => {
    const res = await exchange(await codeFor(authParams({ scope: 'read' })));
    assert.equal(res.json().scope, 'read');
  });

  test('the client’s Basic credentials at /o/token are not counted as failed user logins', async () => {
    for (let i = 0; i < 4; i += 1) {
      const res = await tokenRequest(server.app, { grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT }, basicAuth(client.clientId, 'wrong'));
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().error, 'invalid_client');
    }
    const rows = await server.deps.db.selectFrom('login_failures').select('key').execute();
    assert.ok(!rows.some((r) => r.key.includes(client.clientId.toLowerCase())));
  });
});

describe('signing in to the /o/ pages', () => {
  test('a form post without the CSRF token is refused with 403', async () => {
    const b = new TestBrowser(server.app);
    await b.get('/o/login/');
    const res = await b.post('/o/login/', { username: alice.username, password: alice.password });
    assert.equal(res.statusCode, 403);
    assert.equal(b.cookies.has('gather_session'), false);
  });

  test('a wrong password shows the form again with an error; failures share the Basic lockout', async () => {
    const bob = await createUser(server.app, 'bob');
    const b = new TestBrowser(server.app);
    const wrong = await b.signIn('bob', 'not-the-password');
    assert.equal(wrong.statusCode, 400);
    assert.match(wrong.body, /role="alert">Please enter a correct username and password/);
    await b.signIn('bob', 'not-the-password');
    const locked = await b.signIn('bob', 'not-the-password');
    assert.equal(locked.statusCode, 429);
    assert.equal((await b.signIn('bob', bob.password)).statusCode, 429, 'locked even with the right password');
    const viaBasic = await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { authorization: basic('bob', bob.password) } });
    assert.equal(viaBasic.statusCode, 429);
  });

  test('after signing in, next may only point into /o/ (no open redirect)', async () => {
    const b = new TestBrowser(server.app);
    await b.get('/o/login/');
    const res = await b.post('/o/login/', { csrf_token: b.csrf, username: alice.username, password: alice.password, next: '//evil.example/' });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/o/applications/');
  });

  test('a tampered session cookie counts as signed out', async () => {
    const b = new TestBrowser(server.app);
    b.cookies.set('gather_session', 'forged');
    const res = await b.get('/o/applications/');
    assert.equal(res.statusCode, 302);
    assert.match(String(res.headers.location), /^\/o\/login\//);
  });

  test('a password change ends the account’s sessions', async () => {
    const erin = await createUser(server.app, 'erin');
    const b = new TestBrowser(server.app);
    await b.signIn(erin.username, erin.password);
    assert.equal((await b.get('/o/applications/')).statusCode, 200);
    const changed = await server.app.inject({
      method: 'POST',
      url: '/api/v1/profiles/erin/change_password',
      headers: erin.auth,
      payload: { current_password: erin.password, new_password: 'An-entirely-new-Passphrase-9' },
    });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.equal((await b.get('/o/applications/')).statusCode, 302);
  });

  test('signing out ends the session', async () => {
    const b = new TestBrowser(server.app);
    await b.signIn(alice.username, alice.password);
    assert.equal((await b.get('/o/applications/')).statusCode, 200);
    const out = await b.post('/o/logout/', { csrf_token: b.csrf });
    assert.equal(out.statusCode, 303);
    assert.equal((await b.get('/o/applications/')).statusCode, 302);
  });

  test('pages are plain accessible HTML: lang, labelled fields, no external assets, not cached', async () => {
    const res = await new TestBrowser(server.app).get('/o/login/');
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
    assert.match(res.body, /<html lang="en">/);
    assert.match(res.body, /<label for="username">/);
    assert.doesNotMatch(res.body, /<(script|link)\b/);
  });
});

describe('client applications', () => {
  test('pages need a signed-in user', async () => {
    const res = await new TestBrowser(server.app).get('/o/applications/register/');
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, `/o/login/?next=${encodeURIComponent('/o/applications/register/')}`);
  });

  test('invalid registrations are shown back with field errors', async () => {
    const res = await browser.post('/o/applications/register/', {
      csrf_token: browser.csrf,
      name: '',
      client_type: 'secretive',
      authorization_grant_type: 'implicit',
      redirect_uris: 'ftp://files.example.org/x https://a.example/#frag',
    });
    assert.equal(res.statusCode, 400);
    assert.match(res.body, /id="name-error"/);
    assert.match(res.body, /id="client_type-error"/);
    assert.match(res.body, /id="authorization_grant_type-error"/);
    assert.match(res.body, /id="redirect_uris-error"[^>]*>[^<]*only http and https/);
  });

  test('the secret is shown once and stored only as a SHA-256 digest', async () => {
    const rows = await server.deps.db.selectFrom('oauth_applications').selectAll().where('client_id', '=', client.clientId).execute();
    assert.equal(rows.length, 1);
    const stored = JSON.stringify(rows[0]);
    assert.ok(!stored.includes(client.clientSecret));
    const list = await browser.get('/o/applications/');
    assert.match(list.body, new RegExp(client.clientId));
    assert.ok(!list.body.includes(client.clientSecret));
  });

  test('names are escaped on the list and the consent page', async () => {
    const evil = await browser.register({ name: '<script>alert(1)</script>', redirect_uris: REDIRECT });
    const list = await browser.get('/o/applications/');
    assert.ok(!list.body.includes('<script>alert(1)</script>'));
    assert.match(list.body, /&#60;script&#62;alert\(1\)&#60;\/script&#62;/);
    const consent = await browser.get(`/o/authorize/?${formBody({ client_id: evil.clientId, response_type: 'code' })}`);
    assert.equal(consent.statusCode, 200);
    assert.ok(!consent.body.includes('<script>'));
  });

  test('deleting an application revokes its tokens; another user cannot delete it', async () => {
    const app = await browser.register({ name: 'Short-lived', redirect_uris: REDIRECT });
    const id = (await server.deps.db.selectFrom('oauth_applications').select('id').where('client_id', '=', app.clientId).executeTakeFirstOrThrow()).id;
    const code = await codeFor({ client_id: app.clientId, response_type: 'code', redirect_uri: REDIRECT });
    const token = await tokenRequest(server.app, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, basicAuth(app.clientId, app.clientSecret ?? ''));
    const access = token.json().access_token;
    assert.equal((await getUser(access)).statusCode, 200);

    const carol = await createUser(server.app, 'carol');
    const other = new TestBrowser(server.app);
    await other.signIn(carol.username, carol.password);
    await other.get('/o/applications/');
    assert.equal((await other.post(`/o/applications/${id}/delete/`, { csrf_token: other.csrf })).statusCode, 404);

    const deleted = await browser.post(`/o/applications/${id}/delete/`, { csrf_token: browser.csrf });
    assert.equal(deleted.statusCode, 303);
    assert.ok(!(await browser.get('/o/applications/')).body.includes(app.clientId));
    assert.equal((await getUser(access)).statusCode, 401);
  });
});

describe('authorization errors (RFC 6749 §4.1.2.1)', () => {
  test('a missing or unknown client_id is shown to the user, never redirected', async () => {
    for (const query of ['response_type=code', 'client_id=nope&response_type=code']) {
      const res = await browser.get(`/o/authorize/?${query}`);
      assert.equal(res.statusCode, 400);
      assert.equal(res.headers.location, undefined);
      assert.match(res.body, /invalid_(request|client)/);
    }
  });

  test('a redirect_uri that is not registered is shown to the user, never redirected', async () => {
    const res = await browser.get(`/o/authorize/?${formBody(authParams({ redirect_uri: 'https://evil.example/cb' }))}`);
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers.location, undefined);
  });

  const redirected = async (params: Record<string, string>) => {
    const res = await browser.get(`/o/authorize/?${formBody(params)}`);
    assert.equal(res.statusCode, 302, res.body);
    const location = new URL(String(res.headers.location));
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
    return location.searchParams;
  };

  test('a missing response_type redirects with invalid_request and the state', async () => {
    const { response_type: _omit, ...params } = authParams();
    const q = await redirected(params);
    assert.equal(q.get('error'), 'invalid_request');
    assert.equal(q.get('state'), 'st-123');
    assert.equal(q.get('code'), null);
  });

  test('response_type=token redirects with unsupported_response_type', async () => {
    assert.equal((await redirected(authParams({ response_type: 'token' }))).get('error'), 'unsupported_response_type');
  });

  test('an unknown scope redirects with invalid_scope', async () => {
    assert.equal((await redirected(authParams({ scope: 'read admin' }))).get('error'), 'invalid_scope');
  });

  test('a repeated parameter redirects with invalid_request', async () => {
    const res = await browser.get(`/o/authorize/?${formBody(authParams())}&state=again`);
    assert.equal(res.statusCode, 302);
    assert.equal(redirectParams(res).get('error'), 'invalid_request');
  });

  test('PKCE: the plain method is refused', async () => {
    const q = await redirected(authParams({ code_challenge: pkcePair().challenge, code_challenge_method: 'plain' }));
    assert.equal(q.get('error'), 'invalid_request');
    assert.equal(q.get('error_description'), 'PKCE code_challenge_method must be S256.');
  });

  test('denying access redirects with access_denied and the state', async () => {
    const res = await browser.authorize(authParams(), 'deny');
    assert.equal(res.statusCode, 302);
    const q = redirectParams(res);
    assert.equal(q.get('error'), 'access_denied');
    assert.equal(q.get('state'), 'st-123');
    assert.equal(q.get('code'), null);
  });

  test('the consent form is refused without its CSRF token, and a tampered redirect_uri is caught again', async () => {
    const consent = await browser.get(`/o/authorize/?${formBody(authParams())}`);
    const fields = hiddenFields(consent.body);
    const { csrf_token: _csrf, ...withoutCsrf } = fields;
    assert.equal((await browser.post('/o/authorize/', { ...withoutCsrf, decision: 'allow' })).statusCode, 403);
    const tampered = await browser.post('/o/authorize/', { ...fields, redirect_uri: 'https://evil.example/cb', decision: 'allow' });
    assert.equal(tampered.statusCode, 400);
    assert.equal(tampered.headers.location, undefined);
  });

  test('a registered redirect URI keeps its own query, with a code or with an error', async () => {
    const withQuery = 'https://client.example.org/cb?tenant=7';
    const app = await browser.register({ name: 'Tenant app', redirect_uris: withQuery });
    const params = { client_id: app.clientId, response_type: 'code', state: 's1' };
    const allowed = redirectParams(await browser.authorize(params));
    assert.equal(allowed.get('tenant'), '7');
    assert.ok(allowed.get('code'));
    const denied = redirectParams(await browser.authorize(params, 'deny'));
    assert.equal(denied.get('tenant'), '7');
    assert.equal(denied.get('error'), 'access_denied');
    assert.equal(denied.get('state'), 's1');
  });

  test('the authorize endpoint answers without the trailing slash too', async () => {
    const res = await browser.get(`/o/authorize?${formBody(authParams())}`);
    assert.equal(res.statusCode, 200);
  });
});

describe('token errors (RFC 6749 §5.2)', () => {
  const basicClient = () => basicAuth(client.clientId, client.clientSecret);

  test('a missing grant_type is invalid_request; an unknown one is unsupported_grant_type', async () => {
    const missing = await tokenRequest(server.app, { code: 'x' }, basicClient());
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error, 'invalid_request');
    assert.equal(missing.headers['cache-control'], 'no-store');
    const password = await tokenRequest(server.app, { grant_type: 'password', username: 'alice', password: alice.password }, basicClient());
    assert.equal(password.statusCode, 400);
    assert.equal(password.json().error, 'unsupported_grant_type');
    const madeUp = await tokenRequest(server.app, { grant_type: 'urn:example:nothing' }, basicClient());
    assert.equal(madeUp.json().error, 'unsupported_grant_type');
  });

  test('a wrong secret in Basic is 401 invalid_client with a challenge; in the body it is 400', async () => {
    const code = await codeFor();
    const viaBasic = await exchange(code, {});
    assert.equal(viaBasic.statusCode, 200, 'control: the right secret works');
    const wrong = await tokenRequest(server.app, { grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT }, basicAuth(client.clientId, 'wrong-secret'));
    assert.equal(wrong.statusCode, 401);
    assert.deepEqual(Object.keys(wrong.json()), ['error', 'error_description']);
    assert.equal(wrong.json().error, 'invalid_client');
    assert.equal(wrong.headers['www-authenticate'], 'Basic realm="Gather"');
    const inBody = await tokenRequest(server.app, { grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT, client_id: client.clientId, client_secret: 'wrong' });
    assert.equal(inBody.statusCode, 400);
    assert.equal(inBody.json().error, 'invalid_client');
  });

  test('a confidential client without its secret is invalid_client', async () => {
    const res = await tokenRequest(server.app, { grant_type: 'authorization_code', code: await codeFor(), redirect_uri: REDIRECT, client_id: client.clientId });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_client');
  });

  test('an unknown code is invalid_grant', async () => {
    const res = await exchange('not-a-code');
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_grant');
  });

  test('code replay: a code works once, the second exchange is invalid_grant', async () => {
    const code = await codeFor();
    assert.equal((await exchange(code)).statusCode, 200);
    const replay = await exchange(code);
    assert.equal(replay.statusCode, 400);
    assert.equal(replay.json().error, 'invalid_grant');
  });

  test('a code issued to another client is invalid_grant', async () => {
    const other = await browser.register({ name: 'Other', redirect_uris: REDIRECT });
    const code = await codeFor();
    const res = await tokenRequest(server.app, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, basicAuth(other.clientId, other.clientSecret ?? ''));
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_grant');
  });

  test('a redirect_uri other than the authorization request’s is refused and spends the code', async () => {
    const code = await codeFor();
    const wrong = await exchange(code, { redirect_uri: 'http://127.0.0.1:9/cb' });
    assert.equal(wrong.statusCode, 400);
    // django-oauth-toolkit (oauthlib) answers invalid_request "mismatching redirect URI"; RFC 6749
    // §5.2 makes a grant whose redirect_uri "does not match the redirection URI used in the
    // authorization request" invalid_grant, which is what a standard client library expects.
    assert.equal(wrong.json().error, 'invalid_grant');
    assert.match(wrong.json().error_description, /redirect_uri/);
    assert.equal((await exchange(code)).json().error, 'invalid_grant');
    // Leaving out a parameter the request needs stays invalid_request.
    const missing = await exchange(await codeFor(), { redirect_uri: '' });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error, 'invalid_request');
  });

  test('codes are short-lived: after 60 s the exchange is invalid_grant', async () => {
    const code = await codeFor();
    server.clock.advance(61);
    try {
      const res = await exchange(code);
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error, 'invalid_grant');
    } finally {
      server.clock.advance(-61);
    }
  });

  test('a JSON body or none is invalid_request: the endpoint takes form-encoded bodies', async () => {
    const empty = await server.app.inject({ method: 'POST', url: '/o/token', headers: { authorization: basicClient() } });
    assert.equal(empty.statusCode, 400);
    assert.equal(empty.json().error, 'invalid_request');
    const res = await server.app.inject({
      method: 'POST',
      url: '/o/token',
      headers: { authorization: basicClient() },
      payload: { grant_type: 'authorization_code', code: 'x' },
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_request');
  });

  test('a repeated parameter is invalid_request', async () => {
    const res = await server.app.inject({
      method: 'POST',
      url: '/o/token',
      headers: { authorization: basicClient(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=authorization_code&code=a&code=b',
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_request');
  });
});

describe('public clients and PKCE', () => {
  let publicClient: string;
  before(async () => {
    publicClient = (await browser.register({ name: 'Phone app', client_type: 'public', redirect_uris: REDIRECT })).clientId;
  });

  test('a public client has no secret and must send a code_challenge', async () => {
    const res = await browser.get(`/o/authorize/?${formBody({ client_id: publicClient, response_type: 'code', state: 's' })}`);
    assert.equal(res.statusCode, 302);
    const q = redirectParams(res);
    assert.equal(q.get('error'), 'invalid_request');
    assert.equal(q.get('error_description'), 'PKCE code_challenge is required for public clients.');
  });

  test('S256: the right verifier gets tokens without a secret; a wrong one is invalid_grant and spends the code', async () => {
    const { verifier, challenge } = pkcePair();
    const params = { client_id: publicClient, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' };
    const exchangeWith = async (code: string, codeVerifier: string) =>
      tokenRequest(server.app, { grant_type: 'authorization_code', code, client_id: publicClient, redirect_uri: REDIRECT, code_verifier: codeVerifier });

    const good = await exchangeWith(await codeFor(params), verifier);
    assert.equal(good.statusCode, 200, good.body);
    assert.equal((await getUser(good.json().access_token)).statusCode, 200);

    const code = await codeFor(params);
    const wrong = await exchangeWith(code, pkcePair().verifier);
    assert.equal(wrong.statusCode, 400);
    assert.equal(wrong.json().error, 'invalid_grant');
    assert.equal((await exchangeWith(code, verifier)).json().error, 'invalid_grant');

    const withoutVerifier = await tokenRequest(server.app, { grant_type: 'authorization_code', code: await codeFor(params), client_id: publicClient, redirect_uri: REDIRECT });
    assert.equal(withoutVerifier.statusCode, 400);
  });

  test('a confidential client may use PKCE too, and then must send the verifier', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await codeFor(authParams({ code_challenge: challenge, code_challenge_method: 'S256' }));
    const res = await exchange(code, { code_verifier: verifier });
    assert.equal(res.statusCode, 200, res.body);
  });
});

describe('refresh tokens', () => {
  test('refresh rotation: a new pair, the old refresh token and its access token are revoked', async () => {
    const first = (await exchange(await codeFor())).json();
    const refreshed = await tokenRequest(server.app, { grant_type: 'refresh_token', refresh_token: first.refresh_token }, basicAuth(client.clientId, client.clientSecret));
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    const second = refreshed.json();
    assert.notEqual(second.access_token, first.access_token);
    assert.notEqual(second.refresh_token, first.refresh_token);
    assert.equal(second.scope, 'read write groups');
    assert.equal(second.expires_in, 36000);

    const reuse = await tokenRequest(server.app, { grant_type: 'refresh_token', refresh_token: first.refresh_token }, basicAuth(client.clientId, client.clientSecret));
    assert.equal(reuse.statusCode, 400);
    assert.equal(reuse.json().error, 'invalid_grant');
    assert.equal((await getUser(first.access_token)).statusCode, 401);
    assert.equal((await getUser(second.access_token)).statusCode, 200);
  });

  test('a refresh may narrow the scope but not widen it', async () => {
    const first = (await exchange(await codeFor(authParams({ scope: 'read write' })))).json();
    const auth = basicAuth(client.clientId, client.clientSecret);
    const wider = await tokenRequest(server.app, { grant_type: 'refresh_token', refresh_token: first.refresh_token, scope: 'read write groups' }, auth);
    assert.equal(wider.statusCode, 400);
    assert.equal(wider.json().error, 'invalid_scope');
  });

  test('a refresh token belongs to its client', async () => {
    const other = await browser.register({ name: 'Another', redirect_uris: REDIRECT });
    const first = (await exchange(await codeFor())).json();
    const res = await tokenRequest(server.app, { grant_type: 'refresh_token', refresh_token: first.refresh_token }, basicAuth(other.clientId, other.clientSecret ?? ''));
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_grant');
  });
});

describe('Bearer authentication', () => {
  test('an expired access token gets 401, not anonymous access (a deliberate departure from onadata)', async () => {
    const token = (await exchange(await codeFor())).json().access_token;
    server.clock.advance(36001);
    try {
      const res = await getUser(token);
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), { detail: 'Invalid or expired access token.' });
      assert.equal(res.headers['www-authenticate'], 'Bearer realm="Gather"');
    } finally {
      server.clock.advance(-36001);
    }
  });

  test('an unknown token gets 401 even on a route open to anyone (onadata would answer as for anonymous)', async () => {
    const res = await server.app.inject({ method: 'POST', url: '/api/v1/profiles', headers: { authorization: 'Bearer nonsense' }, payload: {} });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { detail: 'Invalid or expired access token.' });
  });

  test('malformed Bearer headers get the token-header messages', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { authorization: 'Bearer' } });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { detail: 'Invalid token header. No credentials provided.' });
  });

  test('inactive users and organizations cannot use their tokens', async () => {
    const dave = await createUser(server.app, 'dave');
    const b = new TestBrowser(server.app);
    await b.signIn(dave.username, dave.password);
    const res = await b.authorize(authParams());
    const code = redirectParams(res).get('code') ?? '';
    const token = (await exchange(code)).json().access_token;
    assert.equal((await getUser(token)).statusCode, 200);
    await sql`UPDATE users SET is_org = true WHERE id = ${dave.id}`.execute(server.deps.db);
    assert.deepEqual((await getUser(token)).json(), { detail: 'User inactive or deleted.' });
    await sql`UPDATE users SET is_org = false, is_active = false WHERE id = ${dave.id}`.execute(server.deps.db);
    const inactive = await getUser(token);
    assert.equal(inactive.statusCode, 401);
    assert.deepEqual(inactive.json(), { detail: 'User inactive or deleted.' });
  });

  test('tokens and codes are stored only as SHA-256 digests', async () => {
    const code = await codeFor();
    const stored = await server.deps.db.selectFrom('oauth_authorization_codes').selectAll().execute();
    assert.ok(!JSON.stringify(stored).includes(code));
    const body = (await exchange(code)).json();
    const tables = await Promise.all([
      server.deps.db.selectFrom('oauth_access_tokens').selectAll().execute(),
      server.deps.db.selectFrom('oauth_refresh_tokens').selectAll().execute(),
    ]);
    const dump = JSON.stringify(tables);
    assert.ok(!dump.includes(body.access_token));
    assert.ok(!dump.includes(body.refresh_token));
  });
});

describe('token revocation (RFC 7009)', () => {
  const revoke = (fields: Record<string, string>, authorization?: string) =>
    server.app.inject({
      method: 'POST',
      url: '/o/revoke_token/',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
      payload: formBody(fields),
    });

  test('revoking an access token ends it; the refresh token still works', async () => {
    const body = (await exchange(await codeFor())).json();
    const res = await revoke({ token: body.access_token, token_type_hint: 'access_token' }, basicAuth(client.clientId, client.clientSecret));
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '');
    assert.equal((await getUser(body.access_token)).statusCode, 401);
    const refreshed = await tokenRequest(server.app, { grant_type: 'refresh_token', refresh_token: body.refresh_token }, basicAuth(client.clientId, client.clientSecret));
    assert.equal(refreshed.statusCode, 200);
  });

  test('revoking a refresh token ends it and its access token', async () => {
    const body = (await exchange(await codeFor())).json();
    const res = await revoke({ token: body.refresh_token, client_id: client.clientId, client_secret: client.clientSecret });
    assert.equal(res.statusCode, 200);
    assert.equal((await getUser(body.access_token)).statusCode, 401);
    const refreshed = await tokenRequest(server.app, { grant_type: 'refresh_token', refresh_token: body.refresh_token }, basicAuth(client.clientId, client.clientSecret));
    assert.equal(refreshed.json().error, 'invalid_grant');
  });

  test('an unknown token answers 200; bad client credentials 401; another client’s token is refused', async () => {
    assert.equal((await revoke({ token: 'unknown' }, basicAuth(client.clientId, client.clientSecret))).statusCode, 200);
    const bad = await revoke({ token: 'unknown' }, basicAuth(client.clientId, 'wrong'));
    assert.equal(bad.statusCode, 401);
    assert.equal(bad.json().error, 'invalid_client');
    const other = await browser.register({ name: 'Revoker', redirect_uris: REDIRECT });
    const body = (await exchange(await codeFor())).json();
    const foreign = await revoke({ token: body.access_token }, basicAuth(other.clientId, other.clientSecret ?? ''));
    assert.equal(foreign.statusCode, 400);
    assert.equal((await getUser(body.access_token)).statusCode, 200);
    const missing = await revoke({}, basicAuth(client.clientId, client.clientSecret));
    assert.equal(missing.json().error, 'invalid_request');
  });
});
