import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { csvForm, formFile } from '../fixtures/forms.ts';

let server: TestServer;
let bob: TestUser;
let alice: TestUser;
let tom: TestUser;

const H = 'http://testserver';
const TUTORIAL_XLS = fileURLToPath(new URL('../../../shared/xlsform-corpus/forms/pyxform__tests__example_xls__tutorial.xls', import.meta.url));

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  alice = await createUser(server.app, 'alice');
  tom = await createUser(server.app, 'tom');
});
after(() => server.close());

type Body = Record<string, unknown>;
type Who = TestUser | undefined;

const authOf = (who: Who): Record<string, string> => (who ? who.auth : {});

function call(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, who: Who, payload?: Body): Promise<LightMyRequestResponse> {
  return server.app.inject({ method, url, headers: authOf(who), ...(payload !== undefined ? { payload } : {}) });
}
const get = (url: string, who: Who, headers: Record<string, string> = {}) =>
  server.app.inject({ method: 'GET', url, headers: { ...authOf(who), ...headers } });
/** An application/x-www-form-urlencoded request, as most onadata clients send. */
function form(method: 'POST' | 'PUT' | 'PATCH', url: string, who: Who, fields: Record<string, string>): Promise<LightMyRequestResponse> {
  return server.app.inject({
    method,
    url,
    headers: { ...authOf(who), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  });
}

const body = (res: LightMyRequestResponse): Body => res.json<Body>();
const list = (res: LightMyRequestResponse): Body[] => res.json<Body[]>();
const names = (res: LightMyRequestResponse): unknown[] => list(res).map((p) => p['name']);

async function createProject(owner: TestUser, name: string, extra: Body = {}): Promise<Body & { projectid: number }> {
  const res = await call('POST', '/api/v1/projects', owner, { name, ...extra });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<Body & { projectid: number }>();
}

async function publishInto(who: TestUser, projectId: number, id: string, title = `Form ${id}`): Promise<LightMyRequestResponse> {
  const upload = multipart({}, [formFile(csvForm({ id, title }), `${id}.csv`)]);
  return server.app.inject({
    method: 'POST',
    url: `/api/v1/projects/${projectId}/forms`,
    headers: { ...who.auth, ...upload.headers },
    payload: upload.payload,
  });
}

async function publishedFormId(who: TestUser, projectId: number, id: string): Promise<number> {
  const res = await publishInto(who, projectId, id);
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ formid: number }>().formid;
}

const share = (projectId: number, who: Who, fields: Record<string, string>) => form('PUT', `/api/v1/projects/${projectId}/share`, who, fields);

function roleIn(users: unknown, username: string): unknown {
  assert.ok(Array.isArray(users));
  const entry = (users as Body[]).find((u) => u['user'] === username);
  return entry ? entry['role'] : undefined;
}

async function projectRoleOf(projectId: number, username: string): Promise<unknown> {
  return roleIn(body(await get(`/api/v1/projects/${projectId}`, bob))['users'], username);
}
async function formRoleOf(formId: number, username: string): Promise<unknown> {
  return roleIn(body(await get(`/api/v1/forms/${formId}`, bob))['users'], username);
}

async function deactivate(user: TestUser): Promise<void> {
  await server.deps.db.updateTable('users').set({ is_active: false }).where('id', '=', user.id).execute();
}

const DETAIL_KEYS = [
  'url', 'projectid', 'name', 'owner', 'created_by', 'metadata', 'starred', 'users', 'forms', 'public', 'tags',
  'num_datasets', 'last_submission_date', 'teams', 'data_views', 'date_created', 'date_modified',
];
const LIST_KEYS = [
  'url', 'projectid', 'owner', 'created_by', 'metadata', 'starred', 'users', 'forms', 'public', 'tags', 'num_datasets',
  'last_submission_date', 'teams', 'name', 'date_created', 'date_modified', 'deleted_at',
];
const HIDDEN_FROM_OUTSIDERS = new Set(['owner', 'created_by', 'users', 'teams', 'metadata']);
const PUBLIC_DETAIL_KEYS = DETAIL_KEYS.filter((k) => !HIDDEN_FROM_OUTSIDERS.has(k));
const PUBLIC_LIST_KEYS = LIST_KEYS.filter((k) => !HIDDEN_FROM_OUTSIDERS.has(k));
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const NOT_AUTHENTICATED = { detail: 'Authentication credentials were not provided.' };
const NO_PERMISSION = { detail: 'You do not have permission to perform this action.' };
const NO_MATCH = { detail: 'No Project matches the given query.' };

// ---------------------------------------------------------------------------------------------

describe('POST /api/v1/projects', () => {
  test('creates a project: 201 with the detail keys in onadata order, user URLs and the owner in users', async () => {
    const res = await call('POST', '/api/v1/projects', bob, {
      name: 'demo',
      owner: `${H}/api/v1/users/bob`,
      metadata: { category: 'governance' },
      public: false,
    });
    assert.equal(res.statusCode, 201);
    assert.equal(res.headers['cache-control'], undefined);
    const project = body(res);
    assert.deepEqual(Object.keys(project), DETAIL_KEYS);
    const profile = body(await get('/api/v1/profiles/bob', bob));
    const id = project['projectid'];
    assert.equal(typeof id, 'number');
    assert.deepEqual(
      { ...project, date_created: 'T', date_modified: 'T' },
      {
        url: `${H}/api/v1/projects/${String(id)}`,
        projectid: id,
        name: 'demo',
        owner: `${H}/api/v1/users/bob`,
        created_by: `${H}/api/v1/users/bob`,
        metadata: { category: 'governance' },
        starred: false,
        users: [{ is_org: false, metadata: profile['metadata'], first_name: 'Bob', last_name: 'Tester', user: 'bob', role: 'owner' }],
        forms: [],
        public: false,
        tags: [],
        num_datasets: 0,
        last_submission_date: null,
        teams: [],
        data_views: [],
        date_created: 'T',
        date_modified: 'T',
      },
    );
    assert.match(String(project['date_created']), TIMESTAMP);
    assert.equal(project['date_modified'], project['date_created']);
  });

  test('owner defaults to the caller and public to false; form-encoded bodies work with JSON-text metadata', async () => {
    const plain = await createProject(bob, 'defaults');
    assert.equal(plain['owner'], `${H}/api/v1/users/bob`);
    assert.equal(plain['public'], false);
    assert.deepEqual(plain['metadata'], {});

    const res = await form('POST', '/api/v1/projects', bob, { name: 'form-encoded', public: 'True', metadata: '{"a": 1}' });
    assert.equal(res.statusCode, 201);
    assert.equal(body(res)['public'], true);
    assert.deepEqual(body(res)['metadata'], { a: 1 });
  });

  test('owner may be a bare username or a URL ending in .json; an unknown user is 400 Invalid hyperlink', async () => {
    assert.equal((await call('POST', '/api/v1/projects', bob, { name: 'bare owner', owner: 'bob' })).statusCode, 201);
    const suffixed = await call('POST', '/api/v1/projects', bob, { name: 'json owner', owner: `${H}/api/v1/users/bob.json` });
    assert.equal(suffixed.statusCode, 201);
    assert.equal(body(suffixed)['owner'], `${H}/api/v1/users/bob`);

    const ghost = await call('POST', '/api/v1/projects', bob, { name: 'ghostly', owner: `${H}/api/v1/users/ghost` });
    assert.equal(ghost.statusCode, 400);
    assert.deepEqual(ghost.json(), { owner: ['Invalid hyperlink - Object does not exist.'] });
    assert.deepEqual((await call('POST', '/api/v1/projects', bob, { name: 'ghostly', owner: 'ghost' })).json(), {
      owner: ['Invalid hyperlink - Object does not exist.'],
    });
    assert.deepEqual((await call('POST', '/api/v1/projects', bob, { name: 'ghostly', owner: `${H}/api/v1/forms/1` })).json(), {
      owner: ['Invalid hyperlink - No URL match.'],
    });
    assert.deepEqual((await call('POST', '/api/v1/projects', bob, { name: 'ghostly', owner: 7 })).json(), {
      owner: ['Incorrect type. Expected URL string, received int.'],
    });
  });

  test('a duplicate name is the unique-set error when exact and "Project X already exists." in another case', async () => {
    await createProject(bob, 'twin');
    const exact = await call('POST', '/api/v1/projects', bob, { name: 'twin', owner: `${H}/api/v1/users/bob`, public: false });
    assert.equal(exact.statusCode, 400);
    assert.deepEqual(exact.json(), { non_field_errors: ['The fields name, owner must make a unique set.'] });
    const cased = await call('POST', '/api/v1/projects', bob, { name: 'TWIN' });
    assert.equal(cased.statusCode, 400);
    assert.deepEqual(cased.json(), { name: ['Project TWIN already exists.'] });
    // Another account may use the name.
    assert.equal((await call('POST', '/api/v1/projects', alice, { name: 'twin' })).statusCode, 201);
  });

  test('concurrent creates of one name give one project and the unique-set error, never a 500', async () => {
    const results = await Promise.all([1, 2, 3].map(() => call('POST', '/api/v1/projects', bob, { name: 'racing' })));
    const statuses = results.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [201, 400, 400]);
    for (const res of results.filter((r) => r.statusCode === 400)) {
      assert.deepEqual(res.json(), { non_field_errors: ['The fields name, owner must make a unique set.'] });
    }
  });

  test('anonymous create is 401; creating in another user\'s account is 400', async () => {
    const anon = await call('POST', '/api/v1/projects', undefined, { name: 'anon', owner: `${H}/api/v1/users/bob` });
    assert.equal(anon.statusCode, 401);
    assert.deepEqual(anon.json(), NOT_AUTHENTICATED);
    const other = await call('POST', '/api/v1/projects', alice, { name: 'intrusion', owner: `${H}/api/v1/users/bob`, public: false });
    assert.equal(other.statusCode, 400);
    assert.deepEqual(other.json(), { owner: ['You do not have permission to create a project in the organization bob.'] });
    assert.deepEqual((await call('POST', '/api/v1/projects', alice, { name: 'intrusion', owner: 'bob' })).json(), {
      owner: ['You do not have permission to create a project in the organization bob.'],
    });
  });

  test('field errors: missing, blank and too long names, bad public, bad metadata', async () => {
    const missing = await call('POST', '/api/v1/projects', bob, {});
    assert.equal(missing.statusCode, 400);
    assert.deepEqual(missing.json(), { name: ['This field is required.'] });
    assert.deepEqual((await call('POST', '/api/v1/projects', bob, { name: '' })).json(), { name: ['This field may not be blank.'] });
    assert.deepEqual((await call('POST', '/api/v1/projects', bob, { name: 'x'.repeat(256) })).json(), {
      name: ['Ensure this field has no more than 255 characters.'],
    });
    assert.deepEqual((await call('POST', '/api/v1/projects', bob, { name: 'p', public: 'maybe' })).json(), { public: ['Must be a valid boolean.'] });
    assert.deepEqual((await form('POST', '/api/v1/projects', bob, { name: 'p', metadata: 'null' })).json(), {
      metadata: ['Invaid value for metadata'],
    });
    assert.deepEqual((await form('POST', '/api/v1/projects', bob, { name: 'p', metadata: '{not json' })).json(), {
      metadata: ['Invaid value for metadata'],
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('GET /api/v1/projects', () => {
  let owen: TestUser;
  let pia: TestUser;
  let p1: number;
  let p2: number;
  let p3: number;

  before(async () => {
    owen = await createUser(server.app, 'owen');
    pia = await createUser(server.app, 'pia');
    p1 = (await createProject(owen, 'owen one')).projectid;
    p2 = (await createProject(owen, 'owen two', { public: true })).projectid;
    p3 = (await createProject(owen, 'owen three')).projectid;
  });

  test('lists only the caller\'s projects, newest first, with the list keys and Cache-Control: max-age=30', async () => {
    const res = await get('/api/v1/projects', owen);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(names(res), ['owen three', 'owen two', 'owen one']);
    assert.deepEqual(Object.keys(list(res)[0] ?? {}), LIST_KEYS);
    assert.equal(list(res)[0]?.['deleted_at'], null);
    assert.equal(res.headers['cache-control'], 'max-age=30');
    assert.match(String(res.headers['etag']), /^"[0-9a-f]{32}"$/);
    assert.equal(res.headers['link'], undefined);
    // Nobody else's projects, not even public ones.
    assert.deepEqual(names(await get('/api/v1/projects', pia)), []);
    assert.equal(names(await get('/api/v1/projects', alice)).includes('owen two'), false);
  });

  test('owner= adds that account\'s public projects, in the reduced shape for outsiders; the name is case-insensitive', async () => {
    const res = await get('/api/v1/projects?owner=owen', pia);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(names(res), ['owen two']);
    assert.equal(list(res)[0]?.['projectid'], p2);
    assert.deepEqual(Object.keys(list(res)[0] ?? {}), PUBLIC_LIST_KEYS);
    assert.deepEqual(names(await get('/api/v1/projects?owner=OWEN', pia)), ['owen two']);
    assert.deepEqual(list(await get('/api/v1/projects?owner=nobody', pia)), []);
    // The owner's own view through owner= is complete and full.
    const own = await get('/api/v1/projects?owner=owen', owen);
    assert.deepEqual(names(own), ['owen three', 'owen two', 'owen one']);
    assert.deepEqual(Object.keys(list(own)[1] ?? {}), LIST_KEYS);
  });

  test('anonymous callers see every public project, in the reduced shape', async () => {
    const res = await get('/api/v1/projects', undefined);
    assert.equal(res.statusCode, 200);
    assert.ok(names(res).includes('owen two'));
    assert.equal(names(res).includes('owen one'), false);
    for (const item of list(res)) {
      assert.deepEqual(Object.keys(item), PUBLIC_LIST_KEYS);
      assert.equal(item['public'], true);
      assert.equal(item['starred'], false);
    }
  });

  test('users is narrowed to the caller and the owner in lists unless owner= is given; the detail lists everyone', async () => {
    // Accounts of this test's own: sharing owen's projects would change what the others list.
    const olga = await createUser(server.app, 'olga');
    const rex = await createUser(server.app, 'rex');
    const sue = await createUser(server.app, 'sue');
    const shared = (await createProject(olga, 'olga one')).projectid;
    assert.equal((await share(shared, olga, { username: 'rex,sue', role: 'readonly' })).statusCode, 204);
    const users = (res: LightMyRequestResponse, id: number): unknown[] =>
      ((list(res).find((p) => p['projectid'] === id)?.['users'] ?? []) as Body[]).map((u) => `${String(u['user'])}:${String(u['role'])}`);
    assert.deepEqual(users(await get('/api/v1/projects', rex), shared), ['olga:owner', 'rex:readonly']);
    assert.deepEqual(users(await get('/api/v1/projects?owner=olga', rex), shared), ['olga:owner', 'rex:readonly', 'sue:readonly']);
    assert.deepEqual(users(await get('/api/v1/projects', olga), shared), ['olga:owner', 'rex:readonly', 'sue:readonly']);
    const detail = body(await get(`/api/v1/projects/${shared}`, rex));
    assert.deepEqual(
      (detail['users'] as Body[]).map((u) => u['user']),
      ['olga', 'rex', 'sue'],
    );
    // A manager sees everyone in lists too.
    await share(shared, olga, { username: 'sue', role: 'manager' });
    assert.deepEqual(users(await get('/api/v1/projects', sue), shared), ['olga:owner', 'rex:readonly', 'sue:manager']);
  });

  test('tags= matches any of the listed tags, tag= works too, and a project is listed once', async () => {
    assert.equal((await call('POST', `/api/v1/projects/${p1}/labels`, owen, { tags: 'red,shared' })).statusCode, 201);
    assert.equal((await call('POST', `/api/v1/projects/${p3}/labels`, owen, { tags: 'blue,shared' })).statusCode, 201);
    assert.deepEqual(names(await get('/api/v1/projects?tags=red,blue', owen)), ['owen three', 'owen one']);
    assert.deepEqual(names(await get('/api/v1/projects?tags=red,shared', owen)), ['owen three', 'owen one']);
    assert.deepEqual(names(await get('/api/v1/projects?tag=blue', owen)), ['owen three']);
    assert.deepEqual(names(await get('/api/v1/projects?tags=green', owen)), []);
    assert.deepEqual(list(await get('/api/v1/projects?tags=red', owen))[0]?.['tags'], ['red', 'shared']);
  });

  test('soft-deleted projects and projects of inactive accounts are left out', async () => {
    const gone = await createUser(server.app, 'gone');
    const visible = await createProject(gone, 'soon gone', { public: true });
    assert.ok(names(await get('/api/v1/projects', undefined)).includes('soon gone'));
    await deactivate(gone);
    assert.equal(names(await get('/api/v1/projects', undefined)).includes('soon gone'), false);
    assert.equal((await get(`/api/v1/projects/${visible.projectid}`, bob)).statusCode, 404);
  });
});

// ---------------------------------------------------------------------------------------------

describe('pagination', () => {
  let paula: TestUser;

  before(async () => {
    paula = await createUser(server.app, 'paula');
    for (let i = 1; i <= 5; i++) {
      await createProject(paula, `page ${i}`);
      server.clock.advance(1);
    }
  });

  const link = (page: number, size = 2): string => `${H}/api/v1/projects?page=${page}&page_size=${size}`;

  test('page and page_size give a bare array, newest first, with Link rel prev/next/last/first in onadata\'s order', async () => {
    const first = await get('/api/v1/projects?page=1&page_size=2', paula);
    assert.equal(first.statusCode, 200);
    assert.deepEqual(names(first), ['page 5', 'page 4']);
    assert.equal(first.headers['link'], `<${link(2)}>; rel="next", <${link(3)}>; rel="last"`);

    const middle = await get('/api/v1/projects?page=2&page_size=2', paula);
    assert.deepEqual(names(middle), ['page 3', 'page 2']);
    assert.equal(middle.headers['link'], `<${link(1)}>; rel="prev", <${link(3)}>; rel="next", <${link(3)}>; rel="last", <${link(1)}>; rel="first"`);

    const last = await get('/api/v1/projects?page=3&page_size=2', paula);
    assert.deepEqual(names(last), ['page 1']);
    assert.equal(last.headers['link'], `<${link(2)}>; rel="prev", <${link(1)}>; rel="first"`);
    assert.deepEqual(names(await get('/api/v1/projects?page=last&page_size=2', paula)), ['page 1']);

    // Other query parameters are kept in the links.
    const tagged = await get('/api/v1/projects?owner=paula&page=1&page_size=4', paula);
    assert.equal(tagged.headers['link'], `<${H}/api/v1/projects?owner=paula&page=2&page_size=4>; rel="next", <${H}/api/v1/projects?owner=paula&page=2&page_size=4>; rel="last"`);
  });

  test('a page out of range or not a number is 404 {"detail":"Invalid page."} without Cache-Control', async () => {
    for (const page of ['4', '0', '-1', 'abc']) {
      const res = await get(`/api/v1/projects?page=${page}&page_size=2`, paula);
      assert.equal(res.statusCode, 404, page);
      assert.deepEqual(res.json(), { detail: 'Invalid page.' }, page);
      assert.equal(res.headers['cache-control'], undefined, page);
    }
  });

  test('page_size falls back to 1000 when zero, negative or not a number', async () => {
    for (const size of ['0', '-3', 'many', '']) {
      const res = await get(`/api/v1/projects?page_size=${size}`, paula);
      assert.equal(res.statusCode, 200, size);
      assert.equal(list(res).length, 5, size);
      assert.equal(res.headers['link'], undefined, size);
    }
  });

  test('without page the first 1000 come back; page_size is capped at 10000', async () => {
    const many = await createUser(server.app, 'many');
    const now = new Date();
    await sql`
      WITH made AS (
        INSERT INTO projects (name, owner_id, created_by, metadata, shared, date_created, date_modified)
        SELECT 'bulk ' || n, ${many.id}, ${many.id}, '{}'::jsonb, false, ${now}::timestamptz - n * interval '1 second', ${now}
        FROM generate_series(1, 10001) AS n
        RETURNING id)
      INSERT INTO project_roles (project_id, user_id, role) SELECT id, ${many.id}, 'owner' FROM made`.execute(server.deps.db);

    const plain = await get('/api/v1/projects', many);
    assert.equal(plain.statusCode, 200);
    assert.equal(list(plain).length, 1000);
    assert.equal(list(plain)[0]?.['name'], 'bulk 1');
    assert.equal(plain.headers['link'], `<${H}/api/v1/projects?page=2&page_size=1000>; rel="next", <${H}/api/v1/projects?page=11&page_size=1000>; rel="last"`);

    const capped = await get('/api/v1/projects?page=1&page_size=20000', many);
    assert.equal(capped.statusCode, 200);
    assert.equal(list(capped).length, 10000);
    assert.equal(capped.headers['link'], `<${H}/api/v1/projects?page=2&page_size=10000>; rel="next", <${H}/api/v1/projects?page=2&page_size=10000>; rel="last"`);
    const rest = await get('/api/v1/projects?page=2&page_size=20000', many);
    assert.deepEqual(names(rest), ['bulk 10001']);
  });
});

// ---------------------------------------------------------------------------------------------

describe('GET /api/v1/projects/{pk}', () => {
  let privateId: number;
  let publicId: number;

  before(async () => {
    privateId = (await createProject(bob, 'read private')).projectid;
    publicId = (await createProject(bob, 'read public', { public: true, metadata: { secret: 'x' } })).projectid;
  });

  test('1w is 400 for an authenticated caller and 404 for anonymous; an unknown id is 404 "Not found."', async () => {
    const bad = await get('/api/v1/projects/1w', bob);
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { detail: 'Invalid value for project_id. It must be a positive integer.' });
    assert.equal(bad.headers['cache-control'], undefined);
    const anon = await get('/api/v1/projects/1w', undefined);
    assert.equal(anon.statusCode, 404);
    const missing = await get('/api/v1/projects/999999', bob);
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { detail: 'Not found.' });
    assert.equal(missing.headers['cache-control'], undefined);
    assert.deepEqual((await get('/api/v1/projects/99999999999', bob)).json(), {
      detail: 'Invalid value for project_id. It must be a positive integer.',
    });
  });

  test('someone else\'s private project is 404 "No Project matches the given query."; anonymous gets 404 too', async () => {
    const res = await get(`/api/v1/projects/${privateId}`, alice);
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), NO_MATCH);
    assert.equal((await get(`/api/v1/projects/${privateId}`, undefined)).statusCode, 404);
  });

  test('a public project is 200 in the reduced shape for outsiders and anonymous callers, full for the owner', async () => {
    for (const who of [alice, undefined]) {
      const res = await get(`/api/v1/projects/${publicId}`, who);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(Object.keys(body(res)), PUBLIC_DETAIL_KEYS);
      assert.equal(body(res)['name'], 'read public');
      assert.equal(res.headers['cache-control'], 'max-age=30');
    }
    const own = body(await get(`/api/v1/projects/${publicId}`, bob));
    assert.deepEqual(Object.keys(own), DETAIL_KEYS);
    assert.deepEqual(own['metadata'], { secret: 'x' });
  });

  test('GET 200 has Cache-Control, a quoted ETag honoured by If-None-Match, and the detail Allow header; .json works', async () => {
    const res = await get(`/api/v1/projects/${privateId}`, bob);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'max-age=30');
    assert.equal(res.headers['allow'], 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS');
    const etag = String(res.headers['etag']);
    assert.match(etag, /^"[0-9a-f]{32}"$/);
    const again = await get(`/api/v1/projects/${privateId}`, bob, { 'if-none-match': etag });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    const suffixed = await get(`/api/v1/projects/${privateId}.json`, bob);
    assert.equal(suffixed.statusCode, 200);
    assert.deepEqual(suffixed.json(), res.json());
    const listRes = await get('/api/v1/projects', bob);
    assert.equal(listRes.headers['allow'], 'GET, HEAD, POST, OPTIONS');
  });
});

// ---------------------------------------------------------------------------------------------

describe('PUT and PATCH /api/v1/projects/{pk}', () => {
  test('PATCH merges metadata one level deep; PUT replaces it and needs a name', async () => {
    const project = await createProject(bob, 'meta', { metadata: { description: 'Some description', location: 'Naivasha, Kenya' } });
    const url = `/api/v1/projects/${project.projectid}`;
    const patched = await form('PATCH', url, bob, { metadata: '{"category": "governance", "location": "Nairobi"}' });
    assert.equal(patched.statusCode, 200);
    assert.equal(patched.headers['cache-control'], undefined);
    assert.deepEqual(Object.keys(body(patched)), DETAIL_KEYS);
    assert.deepEqual(body(patched)['metadata'], { description: 'Some description', location: 'Nairobi', category: 'governance' });

    const put = await call('PUT', url, bob, { name: 'meta', owner: `${H}/api/v1/users/bob`, public: false, metadata: { a: 1 } });
    assert.equal(put.statusCode, 200);
    assert.deepEqual(body(put)['metadata'], { a: 1 });
    assert.deepEqual(body(await get(url, bob))['metadata'], { a: 1 });

    const nameless = await call('PUT', url, bob, { metadata: { b: 2 } });
    assert.equal(nameless.statusCode, 400);
    assert.deepEqual(nameless.json(), { name: ['This field is required.'] });
    assert.deepEqual((await call('PATCH', url, bob, { metadata: 'null' })).json(), { metadata: ['Invaid value for metadata'] });

    const renamed = await call('PATCH', url, bob, { name: 'meta renamed' });
    assert.equal(body(renamed)['name'], 'meta renamed');
    assert.deepEqual(body(renamed)['metadata'], { a: 1 });
    assert.ok(String(body(renamed)['date_modified']) >= String(body(renamed)['date_created']));
  });

  test('PATCH public cascades to the public and public_data of the project\'s forms', async () => {
    const project = await createProject(bob, 'cascade');
    const formId = await publishedFormId(bob, project.projectid, 'cascade_form');
    const before = body(await get(`/api/v1/forms/${formId}`, bob));
    assert.deepEqual([before['public'], before['public_data']], [false, false]);

    const opened = await call('PATCH', `/api/v1/projects/${project.projectid}`, bob, { public: true });
    assert.equal(opened.statusCode, 200);
    assert.equal(body(opened)['public'], true);
    const shown = body(await get(`/api/v1/forms/${formId}`, bob));
    assert.deepEqual([shown['public'], shown['public_data']], [true, true]);
    assert.equal((await get(`/api/v1/forms/${formId}`, undefined)).statusCode, 200);

    await form('PATCH', `/api/v1/projects/${project.projectid}`, bob, { public: 'False' });
    const closed = body(await get(`/api/v1/forms/${formId}`, bob));
    assert.deepEqual([closed['public'], closed['public_data']], [false, false]);
    assert.equal((await get(`/api/v1/forms/${formId}`, undefined)).statusCode, 404);
  });

  test('project editors and managers may PATCH and PUT by their role (no account-level check); readonly gets 403', async () => {
    const project = await createProject(bob, 'team edit');
    const url = `/api/v1/projects/${project.projectid}`;
    const carl = await createUser(server.app, 'carl');
    await share(project.projectid, bob, { username: 'alice', role: 'editor' });
    await share(project.projectid, bob, { username: 'tom', role: 'manager' });
    await share(project.projectid, bob, { username: 'carl', role: 'readonly' });

    const byEditor = await call('PATCH', url, alice, { metadata: { by: 'alice' } });
    assert.equal(byEditor.statusCode, 200, byEditor.body);
    assert.deepEqual(body(byEditor)['metadata'], { by: 'alice' });
    assert.equal(body(byEditor)['owner'], `${H}/api/v1/users/bob`);
    const byManager = await call('PUT', url, tom, { name: 'team edit', owner: 'bob', metadata: { by: 'tom' } });
    assert.equal(byManager.statusCode, 200, byManager.body);
    assert.deepEqual(body(byManager)['metadata'], { by: 'tom' });

    const byReader = await call('PATCH', url, carl, { metadata: { by: 'carl' } });
    assert.equal(byReader.statusCode, 403);
    assert.deepEqual(byReader.json(), NO_PERMISSION);
    assert.equal(byReader.headers['cache-control'], undefined);
  });

  test('outsiders get 404 on a private project and 403 on a public one; anonymous callers get 401', async () => {
    const hidden = await createProject(bob, 'patch hidden');
    const open = await createProject(bob, 'patch open', { public: true });
    const hiddenRes = await call('PATCH', `/api/v1/projects/${hidden.projectid}`, alice, { name: 'mine' });
    assert.equal(hiddenRes.statusCode, 404);
    assert.deepEqual(hiddenRes.json(), NO_MATCH);
    const openRes = await call('PATCH', `/api/v1/projects/${open.projectid}`, alice, { name: 'mine' });
    assert.equal(openRes.statusCode, 403);
    assert.deepEqual(openRes.json(), NO_PERMISSION);
    const anon = await call('PATCH', `/api/v1/projects/${hidden.projectid}`, undefined, { name: 'mine' });
    assert.equal(anon.statusCode, 401);
    assert.deepEqual(anon.json(), NOT_AUTHENTICATED);
    assert.equal((await call('PUT', '/api/v1/projects/999999', bob, { name: 'x' })).statusCode, 404);
  });

  test('renaming to a name the account already uses, in any case, is 400 with the unique-set error', async () => {
    await createProject(bob, 'taken name');
    const project = await createProject(bob, 'free name');
    for (const name of ['taken name', 'TAKEN NAME']) {
      const res = await call('PATCH', `/api/v1/projects/${project.projectid}`, bob, { name });
      assert.equal(res.statusCode, 400, name);
      assert.deepEqual(res.json(), { non_field_errors: ['The fields name, owner must make a unique set.'] }, name);
    }
    // Changing only the case of its own name is fine.
    assert.equal(body(await call('PATCH', `/api/v1/projects/${project.projectid}`, bob, { name: 'Free Name' }))['name'], 'Free Name');
  });

  test('moving a project to another account needs the owner role and the right to add projects there', async () => {
    const project = await createProject(bob, 'movable');
    const formId = await publishedFormId(bob, project.projectid, 'movable_form');
    const url = `/api/v1/projects/${project.projectid}`;

    const toAlice = await call('PATCH', url, bob, { owner: `${H}/api/v1/users/alice` });
    assert.equal(toAlice.statusCode, 400);
    assert.deepEqual(toAlice.json(), { owner: ['You do not have permission to create a project in the organization alice.'] });

    // An editor may change the project, but not take it into their own account.
    await share(project.projectid, bob, { username: 'alice', role: 'editor' });
    const byEditor = await call('PATCH', url, alice, { owner: 'alice' });
    assert.equal(byEditor.statusCode, 403);
    assert.deepEqual(byEditor.json(), NO_PERMISSION);
    assert.equal(body(await get(url, bob))['owner'], `${H}/api/v1/users/bob`);

    // A co-owner may move it into their own account; its forms follow.
    await share(project.projectid, bob, { username: 'alice', role: 'owner' });
    const moved = await call('PATCH', url, alice, { owner: `${H}/api/v1/users/alice` });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(body(moved)['owner'], `${H}/api/v1/users/alice`);
    assert.equal(body(moved)['created_by'], `${H}/api/v1/users/bob`);
    const movedForm = body(await get(`/api/v1/forms/${formId}`, alice));
    assert.equal(movedForm['owner'], `${H}/api/v1/users/alice`);
    assert.equal(roleIn(movedForm['users'], 'alice'), 'owner');
  });

  test('moving a project refuses a name or a form id_string the target account already uses, instead of failing', async () => {
    await createProject(alice, 'clashing name');
    const named = await createProject(bob, 'clashing name');
    await share(named.projectid, bob, { username: 'alice', role: 'owner' });
    const nameClash = await call('PATCH', `/api/v1/projects/${named.projectid}`, alice, { owner: 'alice' });
    assert.equal(nameClash.statusCode, 400);
    assert.deepEqual(nameClash.json(), { non_field_errors: ['The fields name, owner must make a unique set.'] });

    const aliceProject = await createProject(alice, 'alice forms');
    await publishedFormId(alice, aliceProject.projectid, 'shared_id');
    const withForm = await createProject(bob, 'form clash');
    await publishedFormId(bob, withForm.projectid, 'shared_id');
    await share(withForm.projectid, bob, { username: 'alice', role: 'owner' });
    const formClash = await call('PATCH', `/api/v1/projects/${withForm.projectid}`, alice, { owner: 'alice' });
    assert.equal(formClash.statusCode, 400);
    assert.deepEqual(formClash.json(), { detail: 'Form with the same id_string already exists in this account' });
    assert.equal(body(await get(`/api/v1/projects/${withForm.projectid}`, bob))['owner'], `${H}/api/v1/users/bob`);
  });
});

// ---------------------------------------------------------------------------------------------

describe('DELETE /api/v1/projects/{pk}', () => {
  test('a manager gets 403; the owner gets 204 with no body; then the project and its forms are 404 and unlisted', async () => {
    const project = await createProject(bob, 'doomed');
    const url = `/api/v1/projects/${project.projectid}`;
    const formId = await publishedFormId(bob, project.projectid, 'doomed_form');
    await share(project.projectid, bob, { username: 'alice', role: 'manager' });

    const byManager = await call('DELETE', url, alice);
    assert.equal(byManager.statusCode, 403);
    assert.deepEqual(byManager.json(), NO_PERMISSION);
    assert.equal((await call('DELETE', url, undefined)).statusCode, 401);
    assert.deepEqual((await call('DELETE', url, tom)).json(), NO_MATCH);

    const res = await call('DELETE', url, bob);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert.equal(res.headers['cache-control'], undefined);

    assert.deepEqual((await get(url, bob)).json(), { detail: 'Not found.' });
    assert.equal((await get(`/api/v1/forms/${formId}`, bob)).statusCode, 404);
    assert.equal((await get(`${url}/forms`, bob)).statusCode, 404);
    assert.equal(names(await get('/api/v1/projects', bob)).includes('doomed'), false);
    assert.equal(names(await get('/api/v1/projects', alice)).includes('doomed'), false);
    assert.equal((await call('DELETE', url, bob)).statusCode, 404);
    // The name is free again.
    assert.equal((await call('POST', '/api/v1/projects', bob, { name: 'doomed' })).statusCode, 201);
  });
});

// ---------------------------------------------------------------------------------------------

describe('share', () => {
  test('PUT form-encoded username and role: 204, the role shows on the project and its forms, and it limits', async () => {
    const project = await createProject(bob, 'shared readonly');
    const formId = await publishedFormId(bob, project.projectid, 'shared_readonly_form');
    const res = await share(project.projectid, bob, { username: 'alice', role: 'readonly' });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert.equal(res.headers['cache-control'], undefined);

    const seen = await get(`/api/v1/projects/${project.projectid}`, alice);
    assert.equal(seen.statusCode, 200);
    assert.equal(roleIn(body(seen)['users'], 'alice'), 'readonly');
    const formSeen = await get(`/api/v1/forms/${formId}`, alice);
    assert.equal(formSeen.statusCode, 200);
    assert.equal(roleIn(body(formSeen)['users'], 'alice'), 'readonly');
    const formPatch = await call('PATCH', `/api/v1/forms/${formId}`, alice, { title: 'Mine now' });
    assert.equal(formPatch.statusCode, 403);
    assert.deepEqual(formPatch.json(), NO_PERMISSION);
  });

  test('each validation message: missing, blank, unknown and member roles; missing, unknown and inactive users; the owner', async () => {
    const project = await createProject(bob, 'share validation');
    const inactive = await createUser(server.app, 'sleeper');
    await deactivate(inactive);
    const cases: Array<[Record<string, string>, Body]> = [
      [{ username: 'alice' }, { role: ['This field is required.'] }],
      [{ username: 'alice', role: '' }, { role: ['This field may not be blank.'] }],
      [{ username: 'alice', role: 'boss' }, { role: ["Unknown role 'boss'."] }],
      [{ username: 'alice', role: 'member' }, { role: ["Unknown role 'member'."] }],
      [{ role: 'readonly' }, { username: ['This field is required.'] }],
      [{}, { username: ['This field is required.'], role: ['This field is required.'] }],
      [{ username: 'bob', role: 'manager' }, { username: ['Cannot share project with the owner (bob)'] }],
      [{ username: 'ghost', role: 'readonly' }, { username: ['The following user(s) does/do not exist: ghost'] }],
      [{ username: 'ghost,alice,phantom', role: 'readonly' }, { username: ['The following user(s) does/do not exist: ghost, phantom'] }],
      [{ username: 'sleeper', role: 'readonly' }, { username: ['The following user(s) is/are not active: sleeper'] }],
    ];
    for (const [fields, expected] of cases) {
      const res = await share(project.projectid, bob, fields);
      assert.equal(res.statusCode, 400, JSON.stringify(fields));
      assert.deepEqual(res.json(), expected, JSON.stringify(fields));
      assert.equal(res.headers['cache-control'], undefined);
    }
    assert.deepEqual((body(await get(`/api/v1/projects/${project.projectid}`, bob))['users'] as Body[]).length, 1);
  });

  test('POST works like PUT, and JSON bodies like form-encoded ones; usernames= is accepted', async () => {
    const project = await createProject(bob, 'share methods');
    const post = await call('POST', `/api/v1/projects/${project.projectid}/share`, bob, { username: 'tom', role: 'editor' });
    assert.equal(post.statusCode, 204);
    assert.equal(await projectRoleOf(project.projectid, 'tom'), 'editor');
    const putJson = await call('PUT', `/api/v1/projects/${project.projectid}/share`, bob, { usernames: 'alice', role: 'dataentry' });
    assert.equal(putJson.statusCode, 204);
    assert.equal(await projectRoleOf(project.projectid, 'alice'), 'dataentry');
    const postForm = await form('POST', `/api/v1/projects/${project.projectid}/share`, bob, { username: 'alice', role: 'readonly' });
    assert.equal(postForm.statusCode, 204);
    assert.equal(await projectRoleOf(project.projectid, 'alice'), 'readonly');
    const jsonRemove = await call('PUT', `/api/v1/projects/${project.projectid}/share`, bob, { username: 'tom', role: 'editor', remove: true });
    assert.equal(jsonRemove.statusCode, 204);
    assert.equal(await projectRoleOf(project.projectid, 'tom'), undefined);
    assert.equal((await get(`/api/v1/projects/${project.projectid}/share`, bob)).statusCode, 405);
  });

  test('comma-separated names are trimmed; email_msg sends one e-mail per user, and none without it', async () => {
    const project = await createProject(bob, 'share mail');
    const before = server.mailer.sent.length;
    assert.equal((await share(project.projectid, bob, { username: 'alice , tom', role: 'editor' })).statusCode, 204);
    assert.equal(server.mailer.sent.length, before);
    assert.equal(await projectRoleOf(project.projectid, 'alice'), 'editor');
    assert.equal(await projectRoleOf(project.projectid, 'tom'), 'editor');

    assert.equal((await share(project.projectid, bob, { username: 'alice,tom', role: 'readonly', email_msg: 'Have a look' })).statusCode, 204);
    assert.deepEqual(server.mailer.sent.slice(before), [
      { to: alice.email, subject: 'share mail project has been shared with you.', text: 'Have a look' },
      { to: tom.email, subject: 'share mail project has been shared with you.', text: 'Have a look' },
    ]);
    // Line breaks in the name cannot reach the subject (header injection).
    const evil = await createProject(bob, 'evil\r\nBcc: victim@example.org');
    await share(evil.projectid, bob, { username: 'alice', role: 'readonly', email_msg: 'x' });
    assert.equal(server.mailer.sent.at(-1)?.subject, 'evil Bcc: victim@example.org project has been shared with you.');
    server.mailer.sent.pop();
    // No mail for a removal.
    await share(project.projectid, bob, { username: 'tom', role: 'readonly', remove: 'True', email_msg: 'Bye' });
    assert.equal(server.mailer.sent.length, before + 2);
  });

  test('any member may remove themselves, which ends their access to the project and its forms', async () => {
    const project = await createProject(bob, 'leaving');
    const formId = await publishedFormId(bob, project.projectid, 'leaving_form');
    await share(project.projectid, bob, { username: 'alice', role: 'readonly' });
    // A readonly member may not remove others...
    const other = await share(project.projectid, alice, { username: 'tom', role: 'readonly', remove: 'True' });
    assert.equal(other.statusCode, 403);
    assert.deepEqual(other.json(), NO_PERMISSION);
    // ...but may remove themselves.
    const self = await share(project.projectid, alice, { username: 'alice', role: 'readonly', remove: 'True' });
    assert.equal(self.statusCode, 204);
    assert.deepEqual((await get(`/api/v1/projects/${project.projectid}`, alice)).json(), NO_MATCH);
    assert.equal((await get(`/api/v1/forms/${formId}`, alice)).statusCode, 404);
    assert.equal(await formRoleOf(formId, 'alice'), undefined);
  });

  test('the last owner cannot be removed, and the owning account is never removed', async () => {
    const project = await createProject(bob, 'ownership');
    const last = await share(project.projectid, bob, { username: 'bob', role: 'owner', remove: 'True' });
    assert.equal(last.statusCode, 400);
    assert.deepEqual(last.json(), { remove: ['Project requires at least one owner'] });

    await share(project.projectid, bob, { username: 'alice', role: 'owner' });
    const account = await share(project.projectid, alice, { username: 'bob', role: 'owner', remove: 'True' });
    assert.equal(account.statusCode, 400);
    assert.deepEqual(account.json(), { username: ['Cannot remove the owner (bob) from the project'] });
    assert.equal(await projectRoleOf(project.projectid, 'bob'), 'owner');
    // A co-owner may leave; then bob is the last owner again.
    assert.equal((await share(project.projectid, alice, { username: 'alice', role: 'owner', remove: 'True' })).statusCode, 204);
    assert.equal(await projectRoleOf(project.projectid, 'alice'), undefined);
  });

  test('outsiders get 404 on a private project and 403 on a public one; anonymous callers get 401', async () => {
    const hidden = await createProject(bob, 'share hidden');
    const open = await createProject(bob, 'share open', { public: true });
    assert.deepEqual((await share(hidden.projectid, alice, { username: 'alice', role: 'owner' })).json(), NO_MATCH);
    const openRes = await share(open.projectid, alice, { username: 'alice', role: 'owner' });
    assert.equal(openRes.statusCode, 403);
    assert.deepEqual(openRes.json(), NO_PERMISSION);
    const anon = await share(hidden.projectid, undefined, { username: 'alice', role: 'owner' });
    assert.equal(anon.statusCode, 401);
    assert.deepEqual(anon.json(), NOT_AUTHENTICATED);
  });

  test('sharers cannot give a role above their own, nor change or remove members above them', async () => {
    const project = await createProject(bob, 'escalation');
    const mona = await createUser(server.app, 'mona');
    await share(project.projectid, bob, { username: 'alice', role: 'editor' });
    await share(project.projectid, bob, { username: 'mona', role: 'manager' });

    const toOwner = await share(project.projectid, alice, { username: 'tom', role: 'owner' });
    assert.equal(toOwner.statusCode, 403);
    assert.deepEqual(toOwner.json(), { detail: 'You cannot give a role higher than your own.' });
    const selfPromotion = await share(project.projectid, alice, { username: 'alice', role: 'manager' });
    assert.equal(selfPromotion.statusCode, 403);
    const demote = await share(project.projectid, alice, { username: 'mona', role: 'readonly' });
    assert.equal(demote.statusCode, 403);
    assert.deepEqual(demote.json(), { detail: 'You cannot change the role of a user whose role is higher than your own.' });
    assert.equal((await share(project.projectid, alice, { username: 'mona', role: 'readonly', remove: 'True' })).statusCode, 403);
    assert.equal(await projectRoleOf(project.projectid, 'mona'), 'manager');

    // Up to their own role is fine.
    assert.equal((await share(project.projectid, alice, { username: 'tom', role: 'editor' })).statusCode, 204);
    assert.equal((await share(project.projectid, alice, { username: 'tom', role: 'readonly', remove: 'True' })).statusCode, 204);
    assert.equal((await share(project.projectid, mona, { username: 'alice', role: 'manager' })).statusCode, 204);
    assert.equal(await projectRoleOf(project.projectid, 'alice'), 'manager');
  });

  test('roles reach the project\'s forms and forms published later; project-level display collapses equal roles', async () => {
    const project = await createProject(bob, 'propagation');
    const early = await publishedFormId(bob, project.projectid, 'early_form');
    const dina = await createUser(server.app, 'dina');
    const eddy = await createUser(server.app, 'eddy');
    await share(project.projectid, bob, { username: dina.username, role: 'dataentry-only' });
    await share(project.projectid, bob, { username: eddy.username, role: 'editor-no-download' });
    await share(project.projectid, bob, { username: 'alice', role: 'editor-minor' });
    await share(project.projectid, bob, { username: 'tom', role: 'readonly-no-download' });

    assert.equal(await projectRoleOf(project.projectid, 'dina'), 'dataentry');
    assert.equal(await projectRoleOf(project.projectid, 'eddy'), 'editor-minor');
    assert.equal(await projectRoleOf(project.projectid, 'alice'), 'editor-minor');
    assert.equal(await projectRoleOf(project.projectid, 'tom'), 'readonly-no-download');

    const late = await publishedFormId(bob, project.projectid, 'late_form');
    for (const formId of [early, late]) {
      // As granted: the default meta-perms (editor|dataentry|readonly) narrow nothing. onadata
      // widens these to dataentry and editor; a client asking for a restricted role expects it.
      assert.equal(await formRoleOf(formId, 'dina'), 'dataentry-only', String(formId));
      assert.equal(await formRoleOf(formId, 'eddy'), 'editor-no-download', String(formId));
      assert.equal(await formRoleOf(formId, 'alice'), 'editor-minor', String(formId));
      assert.equal(await formRoleOf(formId, 'tom'), 'readonly-no-download', String(formId));
      assert.equal(await formRoleOf(formId, 'bob'), 'owner', String(formId));
    }
    const forms = list(await get(`/api/v1/projects/${project.projectid}/forms`, dina));
    assert.deepEqual(forms.map((f) => f['formid']).sort(), [early, late].sort());
  });
});

// ---------------------------------------------------------------------------------------------

describe('/api/v1/projects/{pk}/forms', () => {
  test('POST multipart xls_file publishes into the project (201); GET lists its forms with tags and users', async () => {
    const project = await createProject(bob, 'publishing');
    const upload = multipart({}, [{ name: 'xls_file', fileName: 'tutorial.xls', content: readFileSync(TUTORIAL_XLS), contentType: 'application/vnd.ms-excel' }]);
    const res = await server.app.inject({
      method: 'POST',
      url: `/api/v1/projects/${project.projectid}/forms`,
      headers: { ...bob.auth, ...upload.headers },
      payload: upload.payload,
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['cache-control'], undefined);
    const created = body(res);
    assert.equal(created['project'], `${H}/api/v1/projects/${project.projectid}`);
    assert.equal(created['owner'], `${H}/api/v1/users/bob`);
    assert.equal(created['has_id_string_changed'], false);
    assert.equal(created['id_string'], 'tutorial');
    assert.equal(roleIn(created['users'], 'bob'), 'owner');

    await call('POST', `/api/v1/forms/${String(created['formid'])}/labels`, bob, { tags: 'field' });
    const listed = await get(`/api/v1/projects/${project.projectid}/forms`, bob);
    assert.equal(listed.statusCode, 200);
    assert.equal(listed.headers['cache-control'], 'max-age=30');
    assert.equal(listed.headers['allow'], 'GET, HEAD, POST, OPTIONS');
    const [entry] = list(listed);
    assert.equal(list(listed).length, 1);
    assert.equal(entry?.['formid'], created['formid']);
    assert.deepEqual(entry?.['tags'], ['field']);
    assert.deepEqual((entry?.['users'] as Body[]).map((u) => [u['user'], u['role']]), [['bob', 'owner']]);

    const detail = body(await get(`/api/v1/projects/${project.projectid}`, bob));
    assert.equal(detail['num_datasets'], 1);
    assert.deepEqual(Object.keys((detail['forms'] as Body[])[0] ?? {}), [
      'name', 'formid', 'id_string', 'num_of_submissions', 'downloadable', 'encrypted', 'published_by_formbuilder',
      'last_submission_time', 'date_created', 'url', 'last_updated_at', 'is_merged_dataset', 'contributes_entities_to', 'consumes_entities_from',
    ]);
    const listItem = list(await get('/api/v1/projects', bob)).find((p) => p['projectid'] === project.projectid);
    assert.deepEqual(Object.keys((listItem?.['forms'] as Body[])[0] ?? {}), [
      'name', 'formid', 'id_string', 'encrypted', 'is_merged_dataset', 'contributes_entities_to', 'consumes_entities_from',
    ]);
  });

  test('a manager publishes into the owner\'s account; readonly members get 403; no file is 400 alert-error', async () => {
    const project = await createProject(bob, 'publish roles');
    await share(project.projectid, bob, { username: 'alice', role: 'manager' });
    await share(project.projectid, bob, { username: 'tom', role: 'readonly' });
    const byManager = await publishInto(alice, project.projectid, 'managed_form');
    assert.equal(byManager.statusCode, 201, byManager.body);
    assert.equal(body(byManager)['owner'], `${H}/api/v1/users/bob`);
    assert.equal(body(byManager)['created_by'], `${H}/api/v1/users/alice`);
    assert.equal(roleIn(body(byManager)['users'], 'alice'), 'owner');
    assert.equal(roleIn(body(byManager)['users'], 'tom'), 'readonly');

    const byReader = await publishInto(tom, project.projectid, 'read_form');
    assert.equal(byReader.statusCode, 403);
    assert.deepEqual(byReader.json(), NO_PERMISSION);
    const empty = await call('POST', `/api/v1/projects/${project.projectid}/forms`, bob, {});
    assert.equal(empty.statusCode, 400);
    assert.deepEqual(empty.json(), {
      type: 'alert-error',
      text: 'XLSForm not provided, expecting either of these params: xls_file, xls_url, dropbox_xls_url, floip_file, text_xls_form',
    });
    const anon = await call('POST', `/api/v1/projects/${project.projectid}/forms`, undefined, {});
    assert.equal(anon.statusCode, 401);
  });

  test('GET: anonymous callers get 404 on a private project and the list on a public one', async () => {
    const hidden = await createProject(bob, 'forms hidden');
    await publishedFormId(bob, hidden.projectid, 'hidden_list_form');
    assert.deepEqual((await get(`/api/v1/projects/${hidden.projectid}/forms`, undefined)).json(), NO_MATCH);
    assert.deepEqual((await get(`/api/v1/projects/${hidden.projectid}/forms`, alice)).json(), NO_MATCH);
    await call('PATCH', `/api/v1/projects/${hidden.projectid}`, bob, { public: true });
    const anon = await get(`/api/v1/projects/${hidden.projectid}/forms`, undefined);
    assert.equal(anon.statusCode, 200);
    assert.deepEqual(list(anon).map((f) => f['id_string']), ['hidden_list_form']);
  });

  test('outsiders of a public project see only its public forms, in the list and in the project', async () => {
    const project = await createProject(bob, 'mixed forms', { public: true });
    const open = await publishedFormId(bob, project.projectid, 'open_form');
    const closed = await publishedFormId(bob, project.projectid, 'closed_form');
    const made = await call('PATCH', `/api/v1/forms/${closed}`, bob, { public: false });
    assert.equal(made.statusCode, 200, made.body);
    assert.equal((await get(`/api/v1/forms/${closed}`, alice)).statusCode, 404);

    for (const who of [alice, undefined]) {
      assert.deepEqual(list(await get(`/api/v1/projects/${project.projectid}/forms`, who)).map((f) => f['formid']), [open]);
      const detail = body(await get(`/api/v1/projects/${project.projectid}`, who));
      assert.deepEqual((detail['forms'] as Body[]).map((f) => f['formid']), [open]);
      assert.equal(detail['num_datasets'], 1);
    }
    const listed = list(await get('/api/v1/projects?owner=bob', alice)).find((p) => p['projectid'] === project.projectid);
    assert.deepEqual((listed?.['forms'] as Body[]).map((f) => f['formid']), [open]);
    // Members see every form.
    await share(project.projectid, bob, { username: 'alice', role: 'readonly' });
    assert.deepEqual(list(await get(`/api/v1/projects/${project.projectid}/forms`, alice)).map((f) => f['formid']), [open, closed]);
    assert.equal(body(await get(`/api/v1/projects/${project.projectid}`, alice))['num_datasets'], 2);
  });

  test('POST {formid} moves a form in: 201 full form; the old project\'s roles are cleared and the new ones applied', async () => {
    const from = await createProject(bob, 'move from');
    const to = await createProject(bob, 'move to', { public: true });
    const formId = await publishedFormId(bob, from.projectid, 'moving_form');
    await share(from.projectid, bob, { username: 'alice', role: 'editor' });
    await share(to.projectid, bob, { username: 'tom', role: 'readonly' });
    assert.equal(await formRoleOf(formId, 'alice'), 'editor');

    const res = await call('POST', `/api/v1/projects/${to.projectid}/forms`, bob, { formid: formId });
    assert.equal(res.statusCode, 201, res.body);
    const moved = body(res);
    assert.equal(moved['formid'], formId);
    assert.equal(moved['project'], `${H}/api/v1/projects/${to.projectid}`);
    assert.equal(moved['public'], true);
    assert.equal(moved['public_data'], true);
    assert.deepEqual(
      (moved['users'] as Body[]).map((u) => [u['user'], u['role']]).sort(),
      [['bob', 'owner'], ['tom', 'readonly']],
    );
    assert.equal(body(await get(`/api/v1/projects/${from.projectid}`, bob))['num_datasets'], 0);
    assert.deepEqual(list(await get(`/api/v1/projects/${to.projectid}/forms`, bob)).map((f) => f['formid']), [formId]);
    // Form-encoded works too; an unknown form is 404.
    for (const formid of ['999999', '99999999999', '-1', '1.5', 'abc']) {
      const unknown = await form('POST', `/api/v1/projects/${to.projectid}/forms`, bob, { formid });
      assert.equal(unknown.statusCode, 404, formid);
      assert.deepEqual(unknown.json(), { detail: 'Not found.' }, formid);
    }
  });

  test('moving needs the manager role on the form (403 with onadata\'s message) and a free id_string in the target account', async () => {
    const bobs = await createProject(bob, 'bob source');
    const formId = await publishedFormId(bob, bobs.projectid, 'clash_form');
    await share(bobs.projectid, bob, { username: 'alice', role: 'readonly' });
    const alices = await createProject(alice, 'alice target');

    const denied = await call('POST', `/api/v1/projects/${alices.projectid}/forms`, alice, { formid: formId });
    assert.equal(denied.statusCode, 403);
    assert.deepEqual(denied.json(), { detail: 'alice has no manager/owner role to the form clash_form' });
    // A form she cannot see at all is not found, not named (onadata's 403 gives its id_string away).
    const hidden = await publishedFormId(bob, (await createProject(bob, 'bob hidden')).projectid, 'hidden_form');
    const unseen = await call('POST', `/api/v1/projects/${alices.projectid}/forms`, alice, { formid: hidden });
    assert.equal(unseen.statusCode, 404);
    assert.deepEqual(unseen.json(), { detail: 'Not found.' });

    await publishedFormId(alice, alices.projectid, 'clash_form');
    await share(alices.projectid, alice, { username: 'bob', role: 'manager' });
    const clash = await call('POST', `/api/v1/projects/${alices.projectid}/forms`, bob, { formid: formId });
    assert.equal(clash.statusCode, 400);
    assert.deepEqual(clash.json(), { detail: 'Form with the same id_string already exists in this account' });

    // Without the clash the move goes through, into alice's account.
    const other = await publishedFormId(bob, bobs.projectid, 'free_form');
    const moved = await call('POST', `/api/v1/projects/${alices.projectid}/forms`, bob, { formid: other });
    assert.equal(moved.statusCode, 201, moved.body);
    assert.equal(body(moved)['owner'], `${H}/api/v1/users/alice`);
    assert.equal(roleIn(body(moved)['users'], 'bob'), 'owner');
    assert.equal(roleIn(body(moved)['users'], 'alice'), 'owner');
  });
});

// ---------------------------------------------------------------------------------------------

describe('labels', () => {
  test('POST takes comma- or space-separated tags and quoted tags (201 with the full list); GET lists them on both paths', async () => {
    const project = await createProject(bob, 'labelled');
    const url = `/api/v1/projects/${project.projectid}/labels`;
    assert.deepEqual((await get(url, bob)).json(), []);

    const comma = await form('POST', url, bob, { tags: 'hello,world' });
    assert.equal(comma.statusCode, 201);
    assert.equal(comma.headers['cache-control'], undefined);
    assert.deepEqual(comma.json(), ['hello', 'world']);
    const spaced = await call('POST', url, bob, { tags: 'alpha beta' });
    assert.equal(spaced.statusCode, 201);
    assert.deepEqual(spaced.json(), ['alpha', 'beta', 'hello', 'world']);
    const quoted = await call('POST', url, bob, { tags: '"new york" rome' });
    assert.deepEqual(quoted.json(), ['alpha', 'beta', 'hello', 'new york', 'rome', 'world']);

    const listed = await get(url, bob);
    assert.equal(listed.statusCode, 200);
    assert.equal(listed.headers['cache-control'], 'max-age=30');
    assert.deepEqual(listed.json(), ['alpha', 'beta', 'hello', 'new york', 'rome', 'world']);
    assert.deepEqual((await get(`/api/v1/project/${project.projectid}/labels`, bob)).json(), listed.json());
    assert.deepEqual(body(await get(`/api/v1/projects/${project.projectid}`, bob))['tags'], listed.json());
    const tooLong = await call('POST', url, bob, { tags: `ok,${randomBytes(2000).toString('hex')}` });
    assert.equal(tooLong.statusCode, 400);
    assert.deepEqual(tooLong.json(), { tags: ['Ensure each tag has no more than 100 characters.'] });
    assert.equal((await call('POST', url, bob, { tags: 'x'.repeat(100) })).statusCode, 201);
    assert.equal((await get(url, bob)).json<string[]>().includes('ok'), false);
    const alias = await call('POST', `/api/v1/project/${project.projectid}/labels`, bob, { tags: 'zeta' });
    assert.equal(alias.statusCode, 201);
    assert.ok((alias.json<string[]>()).includes('zeta'));
  });

  test('DELETE /labels/{tag} with a URL-encoded name: 200 with the rest, 202 when absent; owner only', async () => {
    const project = await createProject(bob, 'unlabelled');
    const url = `/api/v1/projects/${project.projectid}/labels`;
    await call('POST', url, bob, { tags: '"new york",rome' });
    await share(project.projectid, bob, { username: 'alice', role: 'manager' });

    const byManager = await call('DELETE', `${url}/rome`, alice);
    assert.equal(byManager.statusCode, 403);
    assert.deepEqual(byManager.json(), NO_PERMISSION);

    const removed = await call('DELETE', `${url}/new%20york`, bob);
    assert.equal(removed.statusCode, 200);
    assert.deepEqual(removed.json(), ['rome']);
    const absent = await call('DELETE', `${url}/new%20york`, bob);
    assert.equal(absent.statusCode, 202);
    assert.deepEqual(absent.json(), ['rome']);
    const alias = await call('DELETE', `/api/v1/project/${project.projectid}/labels/rome`, bob);
    assert.equal(alias.statusCode, 200);
    assert.deepEqual(alias.json(), []);
    assert.equal((await call('DELETE', `${url}/rome`, undefined)).statusCode, 401);
  });

  test('a readonly member\'s POST is 403; outsiders get 404 on private projects; GET on a public project is open', async () => {
    const project = await createProject(bob, 'label access');
    const url = `/api/v1/projects/${project.projectid}/labels`;
    await share(project.projectid, bob, { username: 'alice', role: 'readonly' });
    const byReader = await call('POST', url, alice, { tags: 'mine' });
    assert.equal(byReader.statusCode, 403);
    assert.deepEqual(byReader.json(), NO_PERMISSION);
    assert.deepEqual((await call('POST', url, tom, { tags: 'mine' })).json(), NO_MATCH);
    assert.deepEqual((await get(url, tom)).json(), NO_MATCH);
    assert.equal((await call('POST', url, undefined, { tags: 'mine' })).statusCode, 401);
    assert.deepEqual((await get(url, alice)).json(), []);

    await call('PATCH', `/api/v1/projects/${project.projectid}`, bob, { public: true });
    await call('POST', url, bob, { tags: 'open' });
    assert.deepEqual((await get(url, undefined)).json(), ['open']);
    assert.equal((await call('POST', url, tom, { tags: 'mine' })).statusCode, 403);
  });
});

// ---------------------------------------------------------------------------------------------

describe('star', () => {
  test('anyone authenticated may star (204); GET lists the profiles without other users\' e-mails; DELETE unstars (204)', async () => {
    const project = await createProject(bob, 'starry');
    const url = `/api/v1/projects/${project.projectid}/star`;
    // alice cannot see the private project, but may star it (onadata).
    const starred = await call('POST', url, alice);
    assert.equal(starred.statusCode, 204);
    assert.equal(starred.body, '');
    assert.equal((await call('POST', url, alice)).statusCode, 204);
    assert.equal((await call('POST', url, bob)).statusCode, 204);

    const gazers = await get(url, bob);
    assert.equal(gazers.statusCode, 200);
    assert.equal(gazers.headers['cache-control'], 'max-age=30');
    const profiles = list(gazers);
    assert.deepEqual(profiles.map((p) => p['username']), ['bob', 'alice']);
    assert.equal(profiles[0]?.['email'], bob.email);
    assert.equal('email' in (profiles[1] ?? {}), false);
    assert.equal('metadata' in (profiles[1] ?? {}), false);
    assert.equal(profiles[1]?.['url'], `${H}/api/v1/profiles/alice`);

    assert.equal(body(await get(`/api/v1/projects/${project.projectid}`, bob))['starred'], true);
    assert.equal(list(await get('/api/v1/projects', bob)).find((p) => p['projectid'] === project.projectid)?.['starred'], true);

    // /user/{username}/starred: the user's starred projects, those the caller may see.
    assert.deepEqual(list(await get('/api/v1/user/alice/starred', bob)).map((p) => p['projectid']), [project.projectid]);
    assert.deepEqual(list(await get('/api/v1/user/bob/starred', alice)), [], 'alice cannot see bob’s private project');
    assert.equal((await get('/api/v1/user/Alice/starred', bob)).statusCode, 404, 'the username matches exactly');
    assert.equal((await get('/api/v1/user/alice/starred', undefined)).statusCode, 401);

    const unstarred = await call('DELETE', url, alice);
    assert.equal(unstarred.statusCode, 204);
    assert.deepEqual(list(await get(url, undefined)).map((p) => p['username']), ['bob']);
    await call('DELETE', url, bob);
    assert.equal(body(await get(`/api/v1/projects/${project.projectid}`, bob))['starred'], false);
  });

  test('anonymous POST and DELETE are 401; an unknown or deleted project is 404', async () => {
    const project = await createProject(bob, 'anon star');
    const url = `/api/v1/projects/${project.projectid}/star`;
    const anon = await call('POST', url, undefined);
    assert.equal(anon.statusCode, 401);
    assert.deepEqual(anon.json(), NOT_AUTHENTICATED);
    assert.equal((await call('DELETE', url, undefined)).statusCode, 401);
    assert.deepEqual((await get(url, undefined)).json(), []);
    assert.deepEqual((await call('POST', '/api/v1/projects/999999/star', alice)).json(), { detail: 'Not found.' });
    await call('DELETE', `/api/v1/projects/${project.projectid}`, bob);
    assert.equal((await call('POST', url, alice)).statusCode, 404);
    assert.equal((await get(url, alice)).statusCode, 404);
  });
});

// ---------------------------------------------------------------------------------------------

describe('hostile input', () => {
  test('NUL characters in bodies, queries and paths are 400 "Null characters are not allowed.", never a 500', async () => {
    const project = await createProject(bob, 'nul target');
    const id = project.projectid;
    const nul = (field: string): Body => ({ [field]: ['Null characters are not allowed.'] });
    const cases: Array<[LightMyRequestResponse, Body]> = [
      [await call('POST', '/api/v1/projects', bob, { name: 'a\u0000b' }), nul('name')],
      [await call('POST', '/api/v1/projects', bob, { name: 'fine', metadata: { deep: ['a\u0000b'] } }), nul('metadata')],
      [await call('PATCH', `/api/v1/projects/${id}`, bob, { owner: 'bo\u0000b' }), nul('owner')],
      [await call('POST', `/api/v1/projects/${id}/labels`, bob, { tags: 'a\u0000b' }), nul('tags')],
      [await form('PUT', `/api/v1/projects/${id}/share`, bob, { username: 'a\u0000b', role: 'readonly' }), nul('username')],
      [await get('/api/v1/projects?owner=a%00b', bob), nul('owner')],
      [await get('/api/v1/projects?tags=a%00b', bob), nul('tags')],
      [await call('DELETE', `/api/v1/projects/${id}/labels/a%00b`, bob), nul('tag')],
    ];
    for (const [res, expected] of cases) {
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(res.json(), expected);
    }
    assert.deepEqual(body(await get(`/api/v1/projects/${id}`, bob))['tags'], []);
  });

  test('metadata nested deeper than 100 levels is 400, not a stack overflow; 100 levels are stored', async () => {
    const project = await createProject(bob, 'deep target');
    const nested = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    for (const depth of [101, 5000, 50000]) {
      const res = await server.app.inject({
        method: 'PATCH',
        url: `/api/v1/projects/${project.projectid}`,
        headers: { ...bob.auth, 'content-type': 'application/json' },
        payload: `{"metadata":${nested(depth)}}`,
      });
      assert.equal(res.statusCode, 400, String(depth));
      assert.deepEqual(res.json(), { metadata: ['Nesting deeper than 100 levels is not allowed.'] });
    }
    const fine = await server.app.inject({
      method: 'PATCH',
      url: `/api/v1/projects/${project.projectid}`,
      headers: { ...bob.auth, 'content-type': 'application/json' },
      payload: `{"metadata":${nested(100)}}`,
    });
    assert.equal(fine.statusCode, 200, fine.body);
    assert.deepEqual(body(fine)['metadata'], JSON.parse(nested(100)));
  });
});

describe('headers and methods', () => {
  test('Allow lists each path\'s methods; other methods are 405 in DRF\'s words', async () => {
    const project = await createProject(bob, 'allowances');
    const id = project.projectid;
    const allow = async (url: string): Promise<unknown> => (await get(url, bob)).headers['allow'];
    assert.equal(await allow(`/api/v1/projects/${id}/labels`), 'GET, HEAD, POST, OPTIONS');
    assert.equal(await allow(`/api/v1/projects/${id}/star`), 'GET, HEAD, POST, DELETE, OPTIONS');
    const shareRes = await share(id, bob, { username: 'alice', role: 'readonly' });
    assert.equal(shareRes.headers['allow'], 'POST, PUT, OPTIONS');
    const notAllowed = await call('DELETE', '/api/v1/projects', bob);
    assert.equal(notAllowed.statusCode, 405);
    assert.deepEqual(notAllowed.json(), { detail: 'Method "DELETE" not allowed.' });
    assert.equal((await call('POST', `/api/v1/projects/${id}`, bob, {})).statusCode, 405);
  });
});
