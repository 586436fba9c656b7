import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { basic, createUser, startTestServer, type TestServer, type TestUser } from '../helpers.ts';

let server: TestServer;

before(async () => {
  server = await startTestServer({ MAX_LOGIN_ATTEMPTS: '3', LOCKOUT_TIME: '1800' });
});
after(() => server.close());

const md5 = (value: string): string => createHash('md5').update(value, 'utf8').digest('hex');

/** The parameters of a `Digest …` challenge. */
function parseChallenge(header: string | string[] | number | undefined): Record<string, string> {
  const text = String(header ?? '');
  assert.match(text, /^Digest /);
  const params: Record<string, string> = {};
  for (const m of text.slice(7).matchAll(/([a-z]+)=(?:"([^"]*)"|([^,\s]*))/g)) params[m[1] ?? ''] = m[2] ?? m[3] ?? '';
  return params;
}

interface DigestOptions {
  username: string;
  password: string;
  method?: string;
  uri?: string;
  nc?: number;
  cnonce?: string;
  realm?: string;
  nonce?: string;
  algorithm?: 'MD5' | 'MD5-sess';
  qop?: string | null;
}

/** What a client computes from a challenge (RFC 7616, qop=auth). */
function digestHeader(challenge: Record<string, string>, o: DigestOptions): string {
  const realm = o.realm ?? challenge['realm'] ?? '';
  const nonce = o.nonce ?? challenge['nonce'] ?? '';
  const method = o.method ?? 'GET';
  const uri = o.uri ?? '/api/v1/user';
  const nc = (o.nc ?? 1).toString(16).padStart(8, '0');
  const cnonce = o.cnonce ?? 'f2a3c4d5e6';
  const qop = o.qop === undefined ? 'auth' : o.qop;
  let ha1 = md5(`${o.username}:${realm}:${o.password}`);
  if (o.algorithm === 'MD5-sess') ha1 = md5(`${ha1}:${nonce}:${cnonce}`);
  const ha2 = md5(`${method}:${uri}`);
  const response = qop ? md5(`${ha1}:${nonce}:${nc}:${cnonce}:${qop}:${ha2}`) : md5(`${ha1}:${nonce}:${ha2}`);
  const parts = [
    `username="${o.username}"`, `realm="${realm}"`, `nonce="${nonce}"`, `uri="${uri}"`,
    `algorithm=${o.algorithm ?? 'MD5'}`, `response="${response}"`, `opaque="${challenge['opaque'] ?? ''}"`,
  ];
  if (qop) parts.push(`qop=${qop}`, `nc=${nc}`, `cnonce="${cnonce}"`);
  return `Digest ${parts.join(', ')}`;
}

const request = (method: 'GET' | 'POST' | 'HEAD', url: string, authorization?: string): Promise<LightMyRequestResponse> =>
  server.app.inject({ method, url, headers: authorization ? { authorization } : {} });

/** A fresh challenge, as an anonymous request gets it. */
async function challenge(url = '/api/v1/user'): Promise<Record<string, string>> {
  const res = await request('GET', url);
  assert.equal(res.statusCode, 401);
  return parseChallenge(res.headers['www-authenticate']);
}

async function digestGet(o: DigestOptions, url = '/api/v1/user'): Promise<LightMyRequestResponse> {
  return request('GET', url, digestHeader(await challenge(url), { ...o, uri: o.uri ?? url }));
}

const countdown = (n: number): string =>
  `Invalid username/password. For security reasons, after ${n} more failed login attempts you'll have to wait 30 minutes before trying again.`;

describe('the Digest challenge', () => {
  test('anonymous requests to protected routes get 401 with a Digest challenge (realm, nonce, qop, opaque, MD5)', async () => {
    const res = await request('GET', '/api/v1/user');
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { detail: 'Authentication credentials were not provided.' });
    assert.match(
      String(res.headers['www-authenticate']),
      /^Digest realm="Gather", nonce="[A-Za-z0-9_-]{43}", qop="auth", opaque="[0-9a-f]{32}", algorithm=MD5$/,
    );
    const again = parseChallenge((await request('GET', '/api/v1/user')).headers['www-authenticate']);
    assert.notEqual(again['nonce'], parseChallenge(res.headers['www-authenticate'])['nonce']);
  });

  test('Token, TempToken and Bearer requests keep their own challenges', async () => {
    assert.equal((await request('GET', '/api/v1/user', 'Token nope')).headers['www-authenticate'], 'Token');
    assert.equal((await request('GET', '/api/v1/user', 'TempToken nope')).headers['www-authenticate'], 'TempToken');
    assert.equal((await request('GET', '/api/v1/user', 'Bearer nope')).headers['www-authenticate'], 'Bearer realm="Gather"');
  });

  test('DIGEST_REALM sets the realm', async () => {
    const other = await startTestServer({ DIGEST_REALM: 'Field "Team"' });
    try {
      const res = await other.app.inject({ method: 'GET', url: '/api/v1/user' });
      assert.match(String(res.headers['www-authenticate']), /^Digest realm="Field \\"Team\\"", /);
      const kim = await createUser(other.app, 'kim');
      const params = parseChallenge(res.headers['www-authenticate']);
      const header = digestHeader({ ...params, realm: 'Field "Team"' }, { username: 'kim', password: kim.password })
        .replace('realm="Field "Team""', 'realm="Field \\"Team\\""');
      const ok = await other.app.inject({ method: 'GET', url: '/api/v1/user', headers: { authorization: header } });
      assert.equal(ok.statusCode, 200, ok.body);
    } finally {
      await other.close();
    }
  });
});

describe('Digest exchange', () => {
  let ann: TestUser;
  before(async () => {
    ann = await createUser(server.app, 'ann');
  });

  test('GET /api/v1/user via Digest returns the user', async () => {
    const res = await digestGet({ username: 'ann', password: ann.password });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().username, 'ann');
    assert.equal(res.json().api_token, ann.token);
  });

  test('the e-mail address works as the Digest username', async () => {
    const res = await digestGet({ username: ann.email, password: ann.password });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().username, 'ann');
  });

  test('MD5-sess and other methods (POST) work', async () => {
    assert.equal((await digestGet({ username: 'ann', password: ann.password, algorithm: 'MD5-sess' })).statusCode, 200);
    const params = await challenge();
    const post = await request('POST', '/api/v1/user', digestHeader(params, { username: 'ann', password: ann.password, method: 'POST' }));
    assert.equal(post.statusCode, 201, post.body);
  });

  test('a nonce is reused with increasing counts, in any order, but a count is accepted once', async () => {
    const params = await challenge();
    const send = (nc: number) => request('GET', '/api/v1/user', digestHeader(params, { username: 'ann', password: ann.password, nc }));
    assert.equal((await send(1)).statusCode, 200);
    assert.equal((await send(3)).statusCode, 200);
    assert.equal((await send(2)).statusCode, 200);
    const replay = await send(3);
    assert.equal(replay.statusCode, 401);
    assert.deepEqual(replay.json(), { detail: 'Nonce count already used.' });
    const fresh = parseChallenge(replay.headers['www-authenticate']);
    assert.equal(fresh['stale'], 'true');
    assert.notEqual(fresh['nonce'], params['nonce']);
    assert.equal((await request('GET', '/api/v1/user', digestHeader(fresh, { username: 'ann', password: ann.password }))).statusCode, 200);
  });

  test('a stale nonce gets 401 with stale=true and a fresh nonce that works', async () => {
    const params = await challenge();
    server.clock.advance(301);
    try {
      const res = await request('GET', '/api/v1/user', digestHeader(params, { username: 'ann', password: ann.password }));
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), { detail: 'Stale nonce.' });
      const fresh = parseChallenge(res.headers['www-authenticate']);
      assert.equal(fresh['stale'], 'true');
      assert.equal((await request('GET', '/api/v1/user', digestHeader(fresh, { username: 'ann', password: ann.password }))).statusCode, 200);
    } finally {
      server.clock.advance(-301);
    }
  });

  test('a tampered nonce, a wrong realm, a uri for another resource and a missing qop are refused', async () => {
    const params = await challenge();
    const nonce = params['nonce'] ?? '';
    const tampered = (nonce[0] === 'A' ? 'B' : 'A') + nonce.slice(1);
    const cases: Array<[DigestOptions, string]> = [
      [{ username: 'ann', password: ann.password, nonce: tampered }, 'Invalid digest header. Unknown nonce.'],
      [{ username: 'ann', password: ann.password, realm: 'Elsewhere' }, 'Invalid digest header. Wrong realm.'],
      [{ username: 'ann', password: ann.password, uri: '/api/v1/users' }, 'Invalid digest header. The uri does not match the request.'],
      [{ username: 'ann', password: ann.password, qop: null }, 'Invalid digest header. qop="auth" is required.'],
    ];
    for (const [options, detail] of cases) {
      const res = await request('GET', '/api/v1/user', digestHeader(params, options));
      assert.equal(res.statusCode, 401, detail);
      assert.deepEqual(res.json(), { detail });
      assert.equal(parseChallenge(res.headers['www-authenticate'])['stale'], undefined);
    }
    const garbage = await request('GET', '/api/v1/user', 'Digest this is not, "a header');
    assert.equal(garbage.statusCode, 401);
    assert.deepEqual(garbage.json(), { detail: 'Invalid digest header. Credentials are malformed.' });
    // None of those counted as a failed login.
    const wrong = await digestGet({ username: 'ann', password: 'not-her-password' });
    assert.deepEqual(wrong.json(), { detail: countdown(2) });
    assert.equal((await digestGet({ username: 'ann', password: ann.password })).statusCode, 200);
  });

  test('the uri may be given in absolute form and must include the query', async () => {
    const url = '/api/v1/user?format=json';
    const params = await challenge(url);
    const absolute = await request('GET', url, digestHeader(params, { username: 'ann', password: ann.password, uri: `http://testserver${url}` }));
    assert.equal(absolute.statusCode, 200, absolute.body);
    const noQuery = await request('GET', url, digestHeader(params, { username: 'ann', password: ann.password, uri: '/api/v1/user', nc: 2 }));
    assert.equal(noQuery.statusCode, 401);
  });

  test('HA1 is stored only sealed', async () => {
    const row = await server.deps.db.selectFrom('users').select('digest_ha1_sealed').where('id', '=', ann.id).executeTakeFirstOrThrow();
    assert.ok(row.digest_ha1_sealed);
    assert.ok(!row.digest_ha1_sealed.includes(md5(`ann:Gather:${ann.password}`)));
    assert.ok(!Buffer.from(row.digest_ha1_sealed, 'base64url').toString('latin1').includes(md5(`ann:Gather:${ann.password}`)));
  });
});

describe('failed Digest logins and the lockout', () => {
  test('a wrong password gets 401 with the countdown and a fresh challenge, then the same 429 as Basic', async () => {
    const bea = await createUser(server.app, 'bea');
    const first = await digestGet({ username: 'bea', password: 'wrong-password' });
    assert.equal(first.statusCode, 401);
    assert.deepEqual(first.json(), { detail: countdown(2) });
    assert.equal(parseChallenge(first.headers['www-authenticate'])['stale'], undefined);
    const second = await digestGet({ username: 'bea@example.org', password: 'wrong-password' });
    assert.deepEqual(second.json(), { detail: countdown(1) });
    const third = await digestGet({ username: 'bea', password: 'wrong-password' });
    assert.equal(third.statusCode, 429);
    assert.match(third.json().detail, /^Request was throttled\. Expected available in \d+ seconds\.$/);
    // Locked even for the right password, by Digest and by Basic; other accounts are unaffected.
    assert.equal((await digestGet({ username: 'bea', password: bea.password })).statusCode, 429);
    assert.equal((await request('GET', '/api/v1/user', basic('bea', bea.password))).statusCode, 429);
    assert.equal((await request('GET', '/api/v1/user', bea.auth.authorization)).statusCode, 200);
    server.clock.advance(1801);
    try {
      assert.equal((await digestGet({ username: 'bea', password: bea.password })).statusCode, 200);
    } finally {
      server.clock.advance(-1801);
    }
  });

  test('Basic and Digest failures share one counter, and a success clears it', async () => {
    const cal = await createUser(server.app, 'cal');
    assert.equal((await request('GET', '/api/v1/user', basic('cal', 'nope'))).statusCode, 401);
    assert.deepEqual((await digestGet({ username: 'cal', password: 'nope' })).json(), { detail: countdown(1) });
    assert.equal((await digestGet({ username: 'cal', password: cal.password })).statusCode, 200);
    assert.deepEqual((await digestGet({ username: 'cal', password: 'nope' })).json(), { detail: countdown(2) });
  });

  test('an unknown user gets the same answer as a wrong password', async () => {
    const res = await digestGet({ username: 'nobody-here', password: 'whatever' });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { detail: countdown(2) });
  });

  test('a stale nonce with the wrong password counts as a failure, not as stale', async () => {
    await createUser(server.app, 'dot');
    const params = await challenge();
    server.clock.advance(301);
    try {
      const res = await request('GET', '/api/v1/user', digestHeader(params, { username: 'dot', password: 'wrong' }));
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), { detail: countdown(2) });
      assert.equal(parseChallenge(res.headers['www-authenticate'])['stale'], undefined);
    } finally {
      server.clock.advance(-301);
    }
  });
});

describe('HA1 follows the password and the login names', () => {
  test('after a password change the old password fails and the new one works', async () => {
    const eve = await createUser(server.app, 'eve');
    const next = 'A-brand-new-pass-77!';
    const res = await server.app.inject({
      method: 'POST',
      url: '/api/v1/profiles/eve/change_password',
      payload: { current_password: eve.password, new_password: next },
      headers: eve.auth,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual((await digestGet({ username: 'eve', password: eve.password })).json(), { detail: countdown(2) });
    assert.equal((await digestGet({ username: 'eve', password: next })).statusCode, 200);
    assert.equal((await digestGet({ username: 'eve@example.org', password: next })).statusCode, 200);
  });

  test('a user created before HA1 existed gets Digest after a Basic login', async () => {
    const fay = await createUser(server.app, 'fay');
    await server.deps.db.updateTable('users').set({ digest_ha1_sealed: null }).where('id', '=', fay.id).execute();
    assert.equal((await digestGet({ username: 'fay', password: fay.password })).statusCode, 401);
    assert.equal((await request('GET', '/api/v1/user', basic('fay', fay.password))).statusCode, 200);
    assert.equal((await digestGet({ username: 'fay', password: fay.password })).statusCode, 200);
    assert.equal((await digestGet({ username: 'fay@example.org', password: fay.password })).statusCode, 200);
  });

  test('a new e-mail (which needs the password) works at once; a new username after the next password use', async () => {
    const gil = await createUser(server.app, 'gil');
    const email = await server.app.inject({
      method: 'PATCH',
      url: '/api/v1/profiles/gil',
      payload: { email: 'Gil.New@example.org', password: gil.password },
      headers: gil.auth,
    });
    assert.equal(email.statusCode, 200, email.body);
    assert.equal((await digestGet({ username: 'Gil.New@example.org', password: gil.password })).statusCode, 200);
    assert.equal((await digestGet({ username: 'gil.new@example.org', password: gil.password })).statusCode, 200);
    assert.equal((await digestGet({ username: 'gil@example.org', password: gil.password })).statusCode, 401);

    const renamed = await server.app.inject({ method: 'PATCH', url: '/api/v1/profiles/gil', payload: { username: 'gilbert' }, headers: gil.auth });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal((await digestGet({ username: 'gilbert', password: gil.password })).statusCode, 401);
    assert.equal((await digestGet({ username: 'gil.new@example.org', password: gil.password })).statusCode, 200, 'the e-mail spelling is kept');
    assert.equal((await request('GET', '/api/v1/user', basic('gilbert', gil.password))).statusCode, 200);
    assert.equal((await digestGet({ username: 'gilbert', password: gil.password })).statusCode, 200);
  });
});
