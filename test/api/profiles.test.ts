import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { basic, createUser, startTestServer, type TestServer, type TestUser } from '../helpers.ts';

let server: TestServer;
let bob: TestUser;
let alice: TestUser;

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob', { city: 'Bobville', country: 'US', twitter: 'boberama' });
  alice = await createUser(server.app, 'alice');
});
after(() => server.close());

const register = (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  server.app.inject({ method: 'POST', url: '/api/v1/profiles', payload, headers });
const patch = (username: string, payload: Record<string, unknown> | string, headers: Record<string, string>, contentType?: string) =>
  server.app.inject({
    method: 'PATCH',
    url: `/api/v1/profiles/${username}`,
    payload,
    headers: contentType ? { ...headers, 'content-type': contentType } : headers,
  });

const deno = {
  username: 'Deno', first_name: 'Dennis', last_name: 'erama', email: 'deno@columbia.edu',
  password: 'Denodeno1443$x', city: 'Denoville', country: 'US', twitter: 'denoerama',
};

describe('POST /api/v1/profiles', () => {
  test('anonymous registration: 201, lower-cased username, no email key, metadata with last_password_edit', async () => {
    const res = await register(deno);
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.equal(body.username, 'deno');
    assert.equal(body.name, 'Dennis erama');
    assert.equal(body.url, 'http://testserver/api/v1/profiles/deno');
    assert.equal(body.is_org, false);
    assert.equal('email' in body, false);
    assert.match(body.metadata.last_password_edit, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    assert.equal('password' in body, false);
    assert.deepEqual(Object.keys(body), [
      'id', 'is_org', 'url', 'username', 'first_name', 'last_name', 'city', 'country', 'organization',
      'website', 'twitter', 'gravatar', 'require_auth', 'user', 'metadata', 'joined_on', 'name',
    ]);
    assert.match(body.joined_on, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    // The new account can authenticate with its password.
    const me = await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { authorization: basic('deno', deno.password) } });
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().email, 'deno@columbia.edu');
  });

  test('username rules give DRF field errors', async () => {
    // An account of this test's own to collide with: deno is the first test's.
    assert.equal((await register({ ...deno, username: 'Ursula', email: 'ursula@example.org' })).statusCode, 201);
    const cases: Array<[string, string]> = [
      ['de', 'Ensure this field has at least 3 characters.'],
      ['a'.repeat(31), 'Ensure this field has no more than 30 characters.'],
      ['admin', 'admin is a reserved name, please choose another'],
      ['12345', 'Username cannot be purely numeric.'],
      ['user/name', 'username may only contain alphanumeric characters, dots, hyphens, underscores, emails, or phone numbers, and cannot end with .json, .csv, .xls, .xlsx, or .kml'],
      ['someone.json', 'username may only contain alphanumeric characters, dots, hyphens, underscores, emails, or phone numbers, and cannot end with .json, .csv, .xls, .xlsx, or .kml'],
      ['URSULA', 'ursula already exists'],
    ];
    for (const [username, message] of cases) {
      const res = await register({ ...deno, username, email: `${username.length}x@example.org` });
      assert.equal(res.statusCode, 400, username);
      assert.deepEqual(res.json(), { username: [message] }, username);
    }
  });

  test('email-like and phone-like usernames are accepted', async () => {
    assert.equal((await register({ ...deno, username: 'Jo.Doe@Example.com', email: 'jo@example.org' })).json().username, 'jo.doe@example.com');
    assert.equal((await register({ ...deno, username: '+254700000001', email: 'ph@example.org' })).statusCode, 201);
  });

  test('missing fields, duplicate email, bad twitter and bad country give field errors', async () => {
    const noName = await register({ username: 'nameless', email: 'nameless@example.org', password: 'Sturdy-pass-77' });
    assert.equal(noName.statusCode, 400);
    assert.deepEqual(noName.json(), { name: ['Either name or first_name should be provided'] });

    const dupEmail = await register({ ...deno, username: 'deno2', email: bob.email });
    assert.deepEqual(dupEmail.json(), { email: ['This email address is already in use. '] });
    // In any case: sign-in by e-mail ignores case, so ALICE@ beside alice@ could never sign in.
    assert.deepEqual((await register({ ...deno, username: 'deno2', email: bob.email.toUpperCase() })).json(), { email: ['This email address is already in use. '] });

    const twitter = 'x'.repeat(40);
    assert.deepEqual((await register({ ...deno, username: 'deno3', email: 'd3@example.org', twitter })).json(), {
      twitter: [`Invalid twitter username ${twitter}`],
    });
    assert.deepEqual((await register({ ...deno, username: 'deno4', email: 'd4@example.org', country: 'XX' })).json(), {
      country: ['"XX" is not a valid choice.'],
    });
    const missing = await register({});
    assert.equal(missing.statusCode, 400);
    const body = missing.json();
    for (const field of ['username', 'email', 'password']) assert.deepEqual(body[field], ['This field is required.'], field);
    assert.deepEqual((await register({ ...deno, username: 'deno5', email: 'not-an-email' })).json(), {
      email: ['Enter a valid email address.'],
    });
  });

  test('weak passwords are refused and nothing is stored', async () => {
    const res = await register({ ...deno, username: 'weakling', email: 'weak@example.org', password: '12345' });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json().password, [
      'This password is too short. It must contain at least 9 characters.',
      'This password is entirely numeric.',
    ]);
    assert.deepEqual((await register({ ...deno, username: 'weakling2', email: 'weak2@example.org', password: 'password123' })).json(), {
      password: ['This password is too common.'],
    });
    const lookup = await server.app.inject({ method: 'GET', url: '/api/v1/profiles/weakling', headers: bob.auth });
    assert.equal(lookup.statusCode, 404);
  });

  test('`name` is split into first and last names and wins over them', async () => {
    const res = await register({ username: 'named', name: 'Ada Byron King', first_name: 'X', email: 'ada@example.org', password: 'Analytical-9' });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().first_name, 'Ada');
    assert.equal(res.json().last_name, 'Byron King');
  });

  test('registrations at once of one username or one e-mail: one account, the others the usual 400s', async () => {
    const base = { first_name: 'Race', password: 'a-long-Passphrase-7' };
    const byName = await Promise.all(Array.from({ length: 6 }, (_, i) => register({ ...base, username: 'racer', email: `racer${i}@example.org` })));
    assert.deepEqual(byName.map((r) => r.statusCode).sort(), [201, 400, 400, 400, 400, 400], byName.map((r) => r.body).join('\n'));
    for (const loser of byName.filter((r) => r.statusCode === 400)) {
      assert.ok(['["User account racer already exists"]', '{"username":["racer already exists"]}'].includes(loser.body), loser.body);
    }
    const byEmail = await Promise.all(Array.from({ length: 6 }, (_, i) => register({ ...base, username: `same${i}`, email: i % 2 ? 'SAME@example.org' : 'same@example.org' })));
    assert.deepEqual(byEmail.map((r) => r.statusCode).sort(), [201, 400, 400, 400, 400, 400], byEmail.map((r) => r.body).join('\n'));
    for (const loser of byEmail.filter((r) => r.statusCode === 400)) assert.deepEqual(loser.json(), { email: ['This email address is already in use. '] });
  });

  test('form-encoded registration works too', async () => {
    const res = await server.app.inject({
      method: 'POST',
      url: '/api/v1/profiles',
      payload: 'username=formy&first_name=Form&email=formy%40example.org&password=Form-pass-123&require_auth=true',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().require_auth, true);
  });

  test('an authenticated creator sees the new profile’s email and may change it', async () => {
    const res = await register({ ...deno, username: 'created', email: 'created@example.org' }, bob.auth);
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().email, 'created@example.org');
    const update = await patch('created', { city: 'Made' }, bob.auth);
    assert.equal(update.statusCode, 200);
    assert.equal(update.json().city, 'Made');
  });

  test('malformed JSON gets 400 "JSON parse error", other content types 415', async () => {
    const bad = await server.app.inject({ method: 'POST', url: '/api/v1/profiles', payload: '{"username":', headers: { 'content-type': 'application/json' } });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().detail, /^JSON parse error - /);
    const text = await server.app.inject({ method: 'POST', url: '/api/v1/profiles', payload: 'hello', headers: { 'content-type': 'text/plain' } });
    assert.equal(text.statusCode, 415);
    assert.deepEqual(text.json(), { detail: 'Unsupported media type "text/plain" in request.' });
  });
});

describe('GET /api/v1/profiles', () => {
  test('anonymous gets an empty list (the spec decides; onadata answers 401)', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/profiles?users=bob' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), []);
  });

  test('without users, your own profile, with email and without metadata', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/profiles', headers: bob.auth });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.length, 1);
    assert.equal(body[0].username, 'bob');
    assert.equal(body[0].email, bob.email);
    assert.equal('metadata' in body[0], false);
  });

  test('?users=bob,deno returns both sorted by username; deno’s without email', async () => {
    // dina stands for deno, whom the first test of POST registers.
    await createUser(server.app, 'dina');
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/profiles?users=dina,bob', headers: bob.auth });
    const body = res.json();
    assert.deepEqual(body.map((p: { username: string }) => p.username), ['bob', 'dina']);
    assert.equal(body[0].email, bob.email);
    assert.equal('email' in body[1], false);
  });

  test('?ordering= sorts by a profile field, - for descending; an unknown field leaves the order', async () => {
    // Accounts of this test's own, in the cities bob and deno start with: the PATCH tests move bob.
    const bea = await createUser(server.app, 'bea', { city: 'Bobville' });
    await createUser(server.app, 'dex', { city: 'Denoville' });
    const order = async (ordering: string) =>
      (await server.app.inject({ method: 'GET', url: `/api/v1/profiles?users=dex,bea&ordering=${ordering}`, headers: bea.auth })).json().map((p: { username: string }) => p.username);
    assert.deepEqual(await order('-username'), ['dex', 'bea']);
    assert.deepEqual(await order('city'), ['bea', 'dex'], 'Bobville before Denoville');
    assert.deepEqual(await order('-city'), ['dex', 'bea']);
    assert.deepEqual(await order('nonsense'), ['bea', 'dex']);
  });
});

describe('GET /api/v1/profiles/{username|pk}', () => {
  test('own profile has email and metadata, by username and by id', async () => {
    const byName = await server.app.inject({ method: 'GET', url: '/api/v1/profiles/bob', headers: bob.auth });
    assert.equal(byName.statusCode, 200);
    assert.equal(byName.json().email, bob.email);
    assert.ok(byName.json().metadata);
    assert.equal(byName.headers['cache-control'], 'max-age=30');
    const byId = await server.app.inject({ method: 'GET', url: `/api/v1/profiles/${bob.id}`, headers: bob.auth });
    assert.deepEqual(byId.json(), byName.json());
    const upper = await server.app.inject({ method: 'GET', url: '/api/v1/profiles/BOB', headers: bob.auth });
    assert.equal(upper.json().username, 'bob');
  });

  test('another user’s profile has neither email nor metadata', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/profiles/bob', headers: alice.auth });
    assert.equal(res.statusCode, 200);
    assert.equal('email' in res.json(), false);
    assert.equal('metadata' in res.json(), false);
  });

  test('unknown users get 404 "No UserProfile matches the given query."; anonymous 401', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/profiles/nosuchuser', headers: bob.auth });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { detail: 'No UserProfile matches the given query.' });
    assert.equal((await server.app.inject({ method: 'GET', url: '/api/v1/profiles/bob' })).statusCode, 401);
  });
});

describe('PATCH /api/v1/profiles/{username}', () => {
  test('partial update of ordinary fields', async () => {
    const res = await patch('bob', { city: 'Nairobi', organization: 'Bob Inc.', website: 'bob.com' }, bob.auth);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().city, 'Nairobi');
    assert.equal(res.json().website, 'bob.com');
    assert.equal(res.json().country, 'US');
  });

  test('changing the email needs the current password', async () => {
    const without = await patch('bob', { email: 'b2@x.org' }, bob.auth);
    assert.equal(without.statusCode, 400);
    assert.deepEqual(without.json(), ['Your password is required when updating your email address.']);
    const wrong = await patch('bob', { email: 'b2@x.org', password: 'wrong' }, bob.auth);
    assert.deepEqual(wrong.json(), ['Invalid password']);
    const right = await patch('bob', { email: 'b2@x.org', password: bob.password }, bob.auth);
    assert.equal(right.statusCode, 200);
    assert.equal(right.json().email, 'b2@x.org');
    assert.equal(right.json().metadata.is_email_verified, false);
    bob.email = 'b2@x.org';
  });

  test('the password check counts toward the change-password lockout: it is no guessing oracle', async () => {
    const guesser = await createUser(server.app, 'guesser');
    for (let i = 0; i < 10; i++) await patch('guesser', { city: 'X', password: `guess-${i}` }, guesser.auth);
    const locked = await patch('guesser', { city: 'X', password: guesser.password }, guesser.auth);
    assert.equal(locked.statusCode, 400);
    assert.match(String(locked.json()[0]), /^Too many password reset attempts\. Try again in \d+ minutes$/);
  });

  test('metadata with overwrite=false merges and answers only the metadata', async () => {
    await patch('bob', { metadata: { zebra: { key1: 'v1' } } }, bob.auth);
    const merged = await patch('bob', 'metadata=%7B%22zebra%22%3A%7B%22key3%22%3A%22v3%22%7D%7D&overwrite=false', bob.auth, 'application/x-www-form-urlencoded');
    assert.equal(merged.statusCode, 200);
    assert.deepEqual(merged.json(), { zebra: { key1: 'v1', key3: 'v3' } });
    const replaced = await patch('bob', { metadata: { b: 'c' } }, bob.auth);
    assert.equal(replaced.statusCode, 200);
    assert.deepEqual(replaced.json().metadata, { b: 'c' });
    assert.equal(replaced.json().username, 'bob');
  });

  test('overwrite=false without metadata is a 400, not a crash', async () => {
    const res = await patch('bob', { overwrite: 'false' }, bob.auth);
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { metadata: ['This field is required.'] });
  });

  test('another user gets 403, anonymous 401, unknown profile 404', async () => {
    const other = await patch('bob', { city: 'X' }, alice.auth);
    assert.equal(other.statusCode, 403);
    assert.deepEqual(other.json(), { detail: 'You do not have permission to perform this action.' });
    assert.equal((await patch('bob', { city: 'X' }, {})).statusCode, 401);
    assert.equal((await patch('ghost', { city: 'X' }, bob.auth)).statusCode, 404);
  });

  test('username changes are validated and unique', async () => {
    assert.deepEqual((await patch('alice', { username: 'a'.repeat(31) }, alice.auth)).json(), {
      username: ['Ensure this field has no more than 30 characters.'],
    });
    assert.deepEqual((await patch('alice', { username: 'BOB' }, alice.auth)).json(), { username: ['bob already exists'] });
    assert.deepEqual((await patch('alice', { require_auth: 'String' }, alice.auth)).json(), { require_auth: ['Must be a valid boolean.'] });
  });

  test('PUT needs username and email (and so the current password)', async () => {
    const missing = await server.app.inject({ method: 'PUT', url: '/api/v1/profiles/alice', payload: { city: 'Y' }, headers: alice.auth });
    assert.equal(missing.statusCode, 400);
    assert.deepEqual(missing.json(), { username: ['This field is required.'], email: ['This field is required.'] });
    const ok = await server.app.inject({
      method: 'PUT',
      url: '/api/v1/profiles/alice',
      payload: { username: 'alice', email: alice.email, password: alice.password, first_name: 'Alice', city: 'Y' },
      headers: alice.auth,
    });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.json().city, 'Y');
  });

  test('DELETE on a profile is not allowed', async () => {
    const res = await server.app.inject({ method: 'DELETE', url: '/api/v1/profiles/alice', headers: alice.auth });
    assert.equal(res.statusCode, 405);
    assert.deepEqual(res.json(), { detail: 'Method "DELETE" not allowed.' });
  });
});

describe('change_password', () => {
  test('wrong, blank, weak, reused, then a good password; old token stops working; others get 403', async () => {
    const frank = await createUser(server.app, 'frank');
    const url = '/api/v1/profiles/frank/change_password';
    const post = (payload: Record<string, unknown>, headers = frank.auth, path = url) =>
      server.app.inject({ method: 'POST', url: path, payload, headers });

    const wrong = await post({ current_password: 'nope', new_password: 'Another-pass-42' });
    assert.equal(wrong.statusCode, 400);
    assert.deepEqual(wrong.json(), { error: 'Invalid password. You have 9 attempts left.' });
    assert.deepEqual((await post({ current_password: frank.password, new_password: '' })).json(), {
      error: 'current_password and new_password fields cannot be blank',
    });
    assert.deepEqual((await post({ current_password: frank.password, new_password: frank.password })).json(), {
      errors: ['You cannot use a previously used password.'],
    });
    assert.deepEqual((await post({ current_password: frank.password, new_password: 'short' })).json(), {
      errors: ['This password is too short. It must contain at least 9 characters.'],
    });
    assert.equal((await post({ current_password: frank.password, new_password: 'New-pass-42x' }, alice.auth)).statusCode, 403);

    const ok = await post({ current_password: frank.password, new_password: 'New-pass-42x' }, frank.auth, '/api/v1/profile/frank/change_password');
    assert.equal(ok.statusCode, 200);
    const body = ok.json();
    assert.equal(body.username, 'frank');
    assert.match(body.access_token, /^[0-9a-f]{40}$/);
    assert.match(body.temp_token, /^[0-9a-f]{40}$/);
    assert.notEqual(body.access_token, frank.token);
    assert.equal((await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: frank.auth })).statusCode, 401);
    assert.equal((await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { authorization: `Token ${body.access_token}` } })).statusCode, 200);
    assert.equal((await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { authorization: basic('frank', frank.password) } })).statusCode, 401);
    assert.equal((await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { authorization: basic('frank', 'New-pass-42x') } })).statusCode, 200);
  });

  test('ten wrong current passwords lock the change for 30 minutes', async () => {
    const gina = await createUser(server.app, 'gina');
    let last;
    for (let i = 0; i < 10; i++) {
      last = await server.app.inject({ method: 'POST', url: '/api/v1/profiles/gina/change_password', payload: { current_password: 'bad', new_password: 'Whatever-123' }, headers: gina.auth });
    }
    assert.match(last?.json().error, /^Too many password reset attempts\. Try again in \d+ minutes$/);
    const right = await server.app.inject({ method: 'POST', url: '/api/v1/profiles/gina/change_password', payload: { current_password: gina.password, new_password: 'Whatever-123' }, headers: gina.auth });
    assert.match(right.json().error, /^Too many password reset attempts/);
  });
});

describe('monthly_submissions', () => {
  test('answers {} until there are submissions; bad month or year gets 400', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/profiles/bob/monthly_submissions', headers: bob.auth });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {});
    assert.deepEqual((await server.app.inject({ method: 'GET', url: '/api/v1/profiles/bob/monthly_submissions?month=2&year=2013', headers: alice.auth })).json(), {});
    const bad = await server.app.inject({ method: 'GET', url: '/api/v1/profiles/bob/monthly_submissions?month=13', headers: bob.auth });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { detail: 'Invalid month provided as parameter' });
    assert.equal((await server.app.inject({ method: 'GET', url: '/api/v1/profiles/bob/monthly_submissions?year=abc', headers: bob.auth })).statusCode, 400);
    assert.equal((await server.app.inject({ method: 'GET', url: '/api/v1/profiles/bob/monthly_submissions' })).statusCode, 401);
  });
});
