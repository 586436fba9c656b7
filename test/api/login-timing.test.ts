// A wrong password costs the same whether or not the account exists: every password check runs
// exactly one password-hash verification (the slow part), against a fixed stand-in hash when there
// is no usable account. Counted through the verifier's diagnostics channel, not timed. Digest uses
// no password hash; it opens one sealed set of HA1 values whether or not the account exists.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { basic, createUser, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { TestBrowser } from '../oauth-client.ts';
import { PASSWORD_VERIFY_CHANNEL } from '../../src/platform/secrets.ts';

let server: TestServer;
let alice: TestUser;
let dave: TestUser;

before(async () => {
  server = await startTestServer({ MAX_LOGIN_ATTEMPTS: '1000' });
  alice = await createUser(server.app, 'alice');
  dave = await createUser(server.app, 'dave');
  await server.deps.db.updateTable('users').set({ is_active: false }).where('id', '=', dave.id).execute();
  const org = await server.app.inject({ method: 'POST', url: '/api/v1/orgs', headers: alice.auth, payload: { org: 'fieldteam', name: 'Field team' } });
  assert.equal(org.statusCode, 201, org.body);
});
after(() => server.close());

/** How many password-hash verifications `action` ran. */
async function verifications(action: () => Promise<unknown>): Promise<number> {
  let count = 0;
  const onVerify = (): void => {
    count += 1;
  };
  subscribe(PASSWORD_VERIFY_CHANNEL, onVerify);
  try {
    await action();
  } finally {
    unsubscribe(PASSWORD_VERIFY_CHANNEL, onVerify);
  }
  return count;
}

async function basicAttempt(login: string, password: string): Promise<number> {
  const res = await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { authorization: basic(login, password) } });
  return res.statusCode;
}

describe('Basic', () => {
  const cases: Array<[string, () => string]> = [
    ['an existing account with a wrong password', () => alice.username],
    ['an unknown username', () => 'nobody-here'],
    ['an existing e-mail with a wrong password', () => alice.email],
    ['an unknown e-mail', () => 'nobody@example.org'],
    ['an inactive account', () => dave.username],
    ['an organisation (which never signs in)', () => 'fieldteam'],
  ];
  for (const [name, login] of cases) {
    test(`${name}: 401 after one password-hash verification`, async () => {
      let status = 0;
      const count = await verifications(async () => (status = await basicAttempt(login(), 'Wrong-password-1!')));
      assert.equal(status, 401);
      assert.equal(count, 1);
    });
  }

  test('the right password: one verification too', async () => {
    // A fresh spelling of the login, so no cached check is reused.
    let status = 0;
    const count = await verifications(async () => (status = await basicAttempt(alice.email.toUpperCase(), alice.password)));
    assert.equal(status, 200);
    assert.equal(count, 1);
  });
});

describe('the OAuth sign-in page', () => {
  for (const [name, login] of [
    ['an existing account with a wrong password', 'alice'],
    ['an unknown username', 'nobody-here'],
  ] as const) {
    test(`${name}: refused after one password-hash verification`, async () => {
      const browser = new TestBrowser(server.app);
      let status = 0;
      const count = await verifications(async () => (status = (await browser.signIn(login, 'Wrong-password-1!')).statusCode));
      assert.equal(status, 400);
      assert.equal(count, 1);
    });
  }
});

describe('Digest', () => {
  const md5 = (value: string): string => createHash('md5').update(value, 'utf8').digest('hex');

  /** A Digest header answering a fresh challenge for GET /api/v1/user (RFC 7616, qop=auth). */
  async function digestHeader(username: string, password: string): Promise<string> {
    const anonymous = await server.app.inject({ method: 'GET', url: '/api/v1/user' });
    const params = new Map([...String(anonymous.headers['www-authenticate']).matchAll(/([a-z]+)="([^"]*)"/g)].map((m) => [m[1], m[2] ?? '']));
    const [realm, nonce, opaque] = [params.get('realm') ?? '', params.get('nonce') ?? '', params.get('opaque') ?? ''];
    const ha1 = md5(`${username}:${realm}:${password}`);
    const response = md5(`${ha1}:${nonce}:00000001:c0ffee:auth:${md5('GET:/api/v1/user')}`);
    return `Digest username="${username}", realm="${realm}", nonce="${nonce}", uri="/api/v1/user", algorithm=MD5, response="${response}", opaque="${opaque}", qop=auth, nc=00000001, cnonce="c0ffee"`;
  }

  /** How many sealed values the request opened (the HA1 values are sealed). */
  async function opens(authorization: string): Promise<{ status: number; opened: number }> {
    const sealer = server.deps.sealer;
    const open = sealer.open;
    let opened = 0;
    sealer.open = (sealed) => {
      opened += 1;
      return open(sealed);
    };
    try {
      const res = await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { authorization } });
      return { status: res.statusCode, opened };
    } finally {
      sealer.open = open;
    }
  }

  test('a wrong password and an unknown account do the same work: one sealed value opened, no password hash', async () => {
    const known = await digestHeader(alice.username, 'Wrong-password-1!');
    const unknown = await digestHeader('nobody-here', 'Wrong-password-1!');
    let results: Array<{ status: number; opened: number }> = [];
    const count = await verifications(async () => (results = [await opens(known), await opens(unknown)]));
    assert.deepEqual(results, [
      { status: 401, opened: 1 },
      { status: 401, opened: 1 },
    ]);
    assert.equal(count, 0);
  });
});
