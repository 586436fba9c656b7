import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { csvForm, formFile } from '../fixtures/forms.ts';
import { runOneJob } from '../../src/jobs/worker.ts';
import { buildJobRegistry } from '../../src/compose.ts';

let server: TestServer;
let bob: TestUser;
let alice: TestUser;
let tom: TestUser;

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  alice = await createUser(server.app, 'alice');
  tom = await createUser(server.app, 'tom');
});
after(() => server.close());

type Json = Record<string, unknown>;

async function publish(user: TestUser, csv = csvForm(), fields: Record<string, string> = {}, fileName?: string) {
  const body = multipart(fields, [formFile(csv, fileName)]);
  return server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: body.payload, headers: { ...user.auth, ...body.headers } });
}

async function publishOk(user: TestUser, id: string): Promise<Json> {
  const res = await publish(user, csvForm({ id, title: `Form ${id}` }));
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

const get = (url: string, user?: TestUser) => server.app.inject({ method: 'GET', url, headers: user ? user.auth : {} });
const send = (method: 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, user: TestUser | undefined, payload?: Json) =>
  server.app.inject({ method, url, headers: user ? user.auth : {}, ...(payload ? { payload } : {}) });

describe('POST /api/v1/forms', () => {
  test('publishing an XLSForm answers 201 with the full form, in the account’s default project', async () => {
    // An account of its own: its first form, whose id_string no other test has taken, makes its default project.
    const dora = await createUser(server.app, 'dora');
    const res = await publish(dora);
    assert.equal(res.statusCode, 201, res.body);
    const form = res.json();
    assert.equal(form.id_string, 'household_survey');
    assert.equal(form.title, 'Household survey');
    assert.equal(form.version, '2026010101');
    assert.equal(form.has_id_string_changed, false);
    assert.equal(form.owner, 'http://testserver/api/v1/users/dora');
    assert.match(form.hash, /^md5:[0-9a-f]{32}$/);
    assert.match(form.uuid, /^[0-9a-f]{32}$/);
    assert.deepEqual(form.users.map((u: Json) => [u['user'], u['role']]), [['dora', 'owner']]);
    assert.deepEqual(form.metadata.map((m: Json) => [m['data_type'], m['data_value']]), [['xform_meta_perms', 'editor|dataentry|readonly']]);
    const keys = Object.keys(form);
    assert.deepEqual(keys.slice(0, 6), ['url', 'project', 'formid', 'title', 'id_string', 'sms_id_string']);
    assert.deepEqual(keys.slice(-4), ['data_views', 'metadata', 'users', 'has_id_string_changed']);
    const project = (await get(String(form.project).replace('http://testserver', ''), dora)).json();
    assert.equal(project.name, "dora's Project");
    // The stored XForm carries the formhub uuid onadata adds.
    const xml = (await get(`/api/v1/forms/${form.formid}/form.xml`, dora)).body;
    assert.ok(xml.includes(`<formhub><uuid>${form.uuid}</uuid></formhub>`));
    assert.ok(xml.includes('version="2026010101"'));
  });

  test('the same id_string again gets a suffix and has_id_string_changed', async () => {
    // An account of its own that publishes the form twice.
    const evan = await createUser(server.app, 'evan');
    assert.equal((await publish(evan)).json().id_string, 'household_survey');
    const res = await publish(evan);
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().id_string, 'household_survey_1');
    assert.equal(res.json().has_id_string_changed, true);
    assert.equal(res.json().sms_id_string, 'household_survey');
  });

  test('a form without a version gets the publish time as YYYYMMDDHHMM', async () => {
    const csv = csvForm({ id: 'no_version' }).replace(',form_id,form_title,version', ',form_id,form_title').replace(',no_version,Household survey,2026010101', ',no_version,Household survey');
    const res = await publish(bob, csv);
    assert.equal(res.statusCode, 201, res.body);
    assert.match(res.json().version, /^\d{12}$/);
  });

  test('a refused publish leaves nothing behind: no default project for a new account', async () => {
    const carol = await createUser(server.app, 'carol');
    const garbage = multipart({}, [{ name: 'xls_file', fileName: 'broken.xlsx', content: 'this is not a spreadsheet' }]);
    const broken = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: garbage.payload, headers: { ...carol.auth, ...garbage.headers } });
    assert.equal(broken.statusCode, 400, broken.body);
    const projects = async () => (await server.app.inject({ method: 'GET', url: '/api/v1/projects', headers: carol.auth })).json() as Array<{ name: string }>;
    assert.deepEqual(await projects(), []);
    assert.equal((await publish(carol, csvForm({ id: 'carols' }))).statusCode, 201);
    assert.deepEqual((await projects()).map((p) => p.name), ["carol's Project"]);
  });

  test('errors: unknown owner, someone else’s account, no file, a broken file, a bad id, anonymous', async () => {
    const anon = await publish(bob, csvForm(), { owner: 'Anon' });
    assert.equal(anon.statusCode, 400);
    assert.deepEqual(anon.json(), { message: 'User with username Anon does not exist.' });

    const other = await publish(alice, csvForm(), { owner: 'bob' });
    assert.equal(other.statusCode, 403);
    assert.deepEqual(other.json(), { detail: 'User alice has no permission to add xforms to account bob' });

    const none = multipart({ owner: 'bob' });
    const missing = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: none.payload, headers: { ...bob.auth, ...none.headers } });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().type, 'alert-error');

    const garbage = multipart({}, [{ name: 'xls_file', fileName: 'broken.xlsx', content: 'this is not a spreadsheet' }]);
    const broken = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: garbage.payload, headers: { ...bob.auth, ...garbage.headers } });
    assert.equal(broken.statusCode, 400);
    assert.equal(broken.json().type, 'alert-error');
    assert.ok(String(broken.json().text).length > 0);

    const spaced = await publish(bob, csvForm().replace(',form_id,form_title,version', ',form_title,version').replace(',household_survey,Household survey,2026010101', ',Household survey,2026010101'), {}, 'my form.csv');
    assert.equal(spaced.statusCode, 400);
    assert.match(spaced.json().text, /^In strict mode, the XForm ID must be a valid slug and contain no spaces/);

    const title = await publish(bob, csvForm({ id: 'amp', title: 'Fish & chips' }));
    assert.equal(title.statusCode, 400);
    assert.equal(title.json().text, "Title shouldn't have any invalid xml characters ('>' '&' '<')");

    const nobody = multipart({}, [formFile(csvForm())]);
    const unauth = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: nobody.payload, headers: nobody.headers });
    assert.equal(unauth.statusCode, 401);
  });

  test('a failed publish writes nothing', async () => {
    const before = (await get('/api/v1/forms', bob)).json().length;
    await publish(bob, 'survey,,,\n,type,name,label\n,not_a_type,q,Q\n');
    assert.equal((await get('/api/v1/forms', bob)).json().length, before);
  });

  test('xls_url fetches the file; private addresses are refused unless allowed', async () => {
    const remote: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv', 'content-disposition': 'attachment; filename="remote_form.csv"' });
      res.end(csvForm({ id: 'remote_form', title: 'Remote' }));
    });
    await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(remote.address() as AddressInfo).port}/form.csv`;
    try {
      const refused = await send('POST', '/api/v1/forms', bob, { xls_url: url });
      assert.equal(refused.statusCode, 400);
      assert.match(refused.json().text, /private address/);
      const permissive = await startTestServer({ ALLOW_PRIVATE_URLS: 'true' });
      try {
        const carol = await createUser(permissive.app, 'carol');
        const res = await permissive.app.inject({ method: 'POST', url: '/api/v1/forms', headers: carol.auth, payload: { xls_url: url } });
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(res.json().id_string, 'remote_form');
      } finally {
        await permissive.close();
      }
    } finally {
      remote.close();
    }
  });
});

describe('listing and reading forms', () => {
  let formId: number;
  before(async () => {
    formId = Number((await publishOk(bob, 'listing_form')).formid);
  });

  test('anonymous and other users see no private forms; the owner sees the short shape', async () => {
    const anon = (await get('/api/v1/forms')).json();
    assert.ok(!anon.some((f: Json) => f['formid'] === formId));
    assert.ok(!(await get('/api/v1/forms', alice)).json().some((f: Json) => f['formid'] === formId));
    const mine = (await get('/api/v1/forms', bob)).json();
    const entry = mine.find((f: Json) => f['formid'] === formId);
    assert.ok(entry);
    for (const key of ['metadata', 'form_versions', 'submission_count_for_today']) assert.equal(key in entry, false, key);
    assert.ok((await get('/api/v1/forms?owner=BoB', bob)).json().some((f: Json) => f['formid'] === formId));
    assert.deepEqual((await get('/api/v1/forms?owner=noone', bob)).json(), []);
  });

  test('each list entry is the form’s full representation without metadata, form_versions and submission_count_for_today', async () => {
    const extra = Number((await publishOk(bob, 'list_shape_form'))['formid']);
    await send('POST', `/api/v1/forms/${extra}/labels`, bob, { tags: 'b,a' });
    await send('POST', `/api/v1/forms/${extra}/share`, bob, { username: 'tom', role: 'readonly' });
    const list = (await get('/api/v1/forms', bob)).json() as Json[];
    assert.ok(list.length >= 2);
    for (const entry of list) {
      const full = (await get(`/api/v1/forms/${entry['formid']}`, bob)).json() as Json;
      delete full['metadata'];
      delete full['form_versions'];
      delete full['submission_count_for_today'];
      assert.deepEqual(Object.keys(entry), Object.keys(full));
      assert.deepEqual(entry, full);
    }
  });

  test('a public form is listed for anonymous callers and /forms/public, but not in other users’ lists', async () => {
    const patch = await send('PATCH', `/api/v1/forms/${formId}`, bob, { public: true });
    assert.equal(patch.statusCode, 200);
    assert.ok((await get('/api/v1/forms')).json().some((f: Json) => f['formid'] === formId));
    assert.ok(!(await get('/api/v1/forms', alice)).json().some((f: Json) => f['formid'] === formId));
    const pub = (await get('/api/v1/forms/public')).json();
    assert.ok(pub.find((f: Json) => f['formid'] === formId)?.['metadata']);
    assert.equal((await get(`/api/v1/forms/${formId}`, alice)).statusCode, 200);
    await send('PATCH', `/api/v1/forms/${formId}`, bob, { public: false });
  });

  test('read errors: private 404 "No XForm matches…", bad id 400, unknown 404', async () => {
    const hidden = await get(`/api/v1/forms/${formId}`, alice);
    assert.equal(hidden.statusCode, 404);
    assert.deepEqual(hidden.json(), { detail: 'No XForm matches the given query.' });
    assert.equal((await get(`/api/v1/forms/${formId}`)).statusCode, 404);
    const bad = await get('/api/v1/forms/abc', bob);
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { detail: 'Invalid form ID. It must be a positive integer' });
    assert.equal((await get('/api/v1/forms/abc')).statusCode, 404);
    assert.deepEqual((await get('/api/v1/forms/999999', bob)).json(), { detail: 'Not found.' });
  });

  test('tags filter the list (any match; `tag` too)', async () => {
    const add = await send('POST', `/api/v1/forms/${formId}/labels`, bob, { tags: 'hello,world' });
    assert.equal(add.statusCode, 201);
    assert.deepEqual(add.json().sort(), ['hello', 'world']);
    assert.ok((await get('/api/v1/forms?tags=hello,nothing', bob)).json().some((f: Json) => f['formid'] === formId));
    assert.ok((await get('/api/v1/forms?tag=world', bob)).json().some((f: Json) => f['formid'] === formId));
    assert.ok(!(await get('/api/v1/forms?tags=nothing', bob)).json().some((f: Json) => f['formid'] === formId));
  });

  test('pagination: page_size and the Link header', async () => {
    const res = await get('/api/v1/forms?page=1&page_size=1', bob);
    assert.equal(res.json().length, 1);
    assert.match(String(res.headers['link']), /rel="next"/);
    assert.equal((await get('/api/v1/forms?page=999&page_size=1', bob)).statusCode, 404);
  });

  test('form.json, form.xml and form.xls give the definition and the uploaded file', async () => {
    const json = await get(`/api/v1/forms/${formId}/form.json`, bob);
    assert.equal(json.statusCode, 200);
    assert.equal(json.json().id_string, 'listing_form');
    assert.equal(json.json().type, 'survey');
    assert.equal(json.headers['content-disposition'], `attachment; filename="listing_form.json"; filename*=UTF-8''listing_form.json`);
    const xml = await get(`/api/v1/forms/${formId}/form.xml`, bob);
    assert.match(String(xml.headers['content-type']), /^application\/xml/);
    assert.ok(xml.body.includes('<h:title>Form listing_form</h:title>'));
    const xls = await get(`/api/v1/forms/${formId}/form.xls`, bob);
    assert.equal(xls.statusCode, 200);
    // The stored file keeps its own extension.
    assert.equal(xls.headers['content-disposition'], `attachment; filename="listing_form.csv"; filename*=UTF-8''listing_form.csv`);
    assert.ok(xls.body.includes('listing_form'));
    // A name beyond ASCII reaches clients percent-encoded, with a plain fallback.
    const accented = await publishOk(bob, 'fórm_ü');
    const named = await get(`/api/v1/forms/${String(accented['formid'])}/form.xml`, bob);
    assert.equal(named.headers['content-disposition'], `attachment; filename="f_rm__.xml"; filename*=UTF-8''f%C3%B3rm_%C3%BC.xml`);
    assert.equal((await get(`/api/v1/forms/${formId}/form.csvzip`, bob)).statusCode, 400);
    assert.equal((await get(`/api/v1/forms/${formId}/form.xml`, alice)).statusCode, 404);
  });
});

describe('updating, replacing and deleting forms', () => {
  test('PATCH title and description; the hash follows the title; bad values are 400', async () => {
    const form = await publishOk(bob, 'patch_form');
    const url = `/api/v1/forms/${form['formid']}`;
    const amp = await send('PATCH', url, bob, { title: 'Hello & World!' });
    assert.equal(amp.statusCode, 400);
    assert.deepEqual(amp.json(), { detail: "Title shouldn't have any invalid xml characters ('>' '&' '<')" });
    const bool = await send('PATCH', url, bob, { public: 'String' });
    assert.deepEqual(bool.json(), { public: ['Must be a valid boolean.'] });
    const ok = await send('PATCH', url, bob, { title: 'Hello and World!', description: '<h1>D</h1>', public: true, unknown_key: 1 });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.json().title, 'Hello and World!');
    assert.equal(ok.json().description, '&lt;h1&gt;D&lt;/h1&gt;');
    assert.equal(ok.json().public, true);
    assert.notEqual(ok.json().hash, form['hash']);
    assert.ok((await get(`${url}/form.xml`, bob)).body.includes('<h:title>Hello and World!</h:title>'));
  });

  test('PUT needs the spec’s fields', async () => {
    const form = await publishOk(bob, 'put_form');
    const res = await send('PUT', `/api/v1/forms/${form['formid']}`, bob, { title: 'X' });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(Object.keys(res.json()).sort(), ['description', 'downloadable', 'owner', 'public', 'public_data', 'uuid']);
    const full = await send('PUT', `/api/v1/forms/${form['formid']}`, bob, {
      uuid: String(form['uuid']), description: 'd', downloadable: false, owner: 'http://testserver/api/v1/users/bob', public: false, public_data: false, title: 'Put title',
    });
    assert.equal(full.statusCode, 200, full.body);
    assert.equal(full.json().downloadable, false);
  });

  test('replacing the XLSForm: same id_string only, new version, manager role needed', async () => {
    const form = await publishOk(bob, 'replace_me');
    const url = `/api/v1/forms/${form['formid']}`;
    const other = multipart({}, [formFile(csvForm({ id: 'something_else' }))]);
    const mismatch = await server.app.inject({ method: 'PATCH', url, payload: other.payload, headers: { ...bob.auth, ...other.headers } });
    assert.equal(mismatch.statusCode, 400);
    assert.deepEqual(mismatch.json(), {
      type: 'alert-error',
      text: "Your updated form's id_string 'something_else' must match the existing forms' id_string 'replace_me'.",
    });
    const same = multipart({}, [formFile(csvForm({ id: 'replace_me', title: 'Replaced', version: '2026020202', extra: ',text,notes,Notes' }))]);
    const replaced = await server.app.inject({ method: 'PATCH', url, payload: same.payload, headers: { ...bob.auth, ...same.headers } });
    assert.equal(replaced.statusCode, 200, replaced.body);
    assert.equal(replaced.json().formid, form['formid']);
    assert.equal(replaced.json().version, '2026020202');
    assert.equal(replaced.json().title, 'Replaced');
    assert.notEqual(replaced.json().hash, form['hash']);
    assert.equal(replaced.json().uuid, form['uuid']);

    // A second replacement with the same version gets a suffix.
    const again = await server.app.inject({ method: 'PATCH', url, payload: same.payload, headers: { ...bob.auth, ...same.headers } });
    assert.equal(again.json().version, '2026020202-2');

    await send('POST', `${url}/share`, bob, { username: 'alice', role: 'editor' });
    const editor = await server.app.inject({ method: 'PATCH', url, payload: same.payload, headers: { ...alice.auth, ...same.headers } });
    assert.equal(editor.statusCode, 403);
    assert.deepEqual(editor.json(), { detail: 'alice has no manager/owner role to the form replace_me' });
  });

  test('a form with submissions cannot be replaced (the spec’s rule)', async () => {
    const form = await publishOk(bob, 'has_data');
    await server.deps.db.insertInto('form_stats').values({ form_id: Number(form['formid']), shard: 0, submissions: 3 }).execute();
    const same = multipart({}, [formFile(csvForm({ id: 'has_data' }))]);
    const res = await server.app.inject({ method: 'PATCH', url: `/api/v1/forms/${form['formid']}`, payload: same.payload, headers: { ...bob.auth, ...same.headers } });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().type, 'alert-error');
    assert.match(res.json().text, /has submissions/);
  });

  test('DELETE: readonly 403, editor 204, then 404 and gone from lists; anonymous 401', async () => {
    const form = await publishOk(bob, 'delete_me');
    const url = `/api/v1/forms/${form['formid']}`;
    assert.equal((await send('DELETE', url, undefined)).statusCode, 401);
    assert.equal((await send('DELETE', url, alice)).statusCode, 404);
    await send('POST', `${url}/share`, bob, { username: 'alice', role: 'readonly' });
    assert.equal((await send('DELETE', url, alice)).statusCode, 403);
    await send('POST', `${url}/share`, bob, { username: 'alice', role: 'editor' });
    const gone = await send('DELETE', url, alice);
    assert.equal(gone.statusCode, 204);
    assert.equal(gone.body, '');
    assert.equal((await get(url, bob)).statusCode, 404);
    assert.ok(!(await get('/api/v1/forms', bob)).json().some((f: Json) => f['formid'] === form['formid']));
    // The id_string is free again.
    assert.equal((await publish(bob, csvForm({ id: 'delete_me' }))).json().id_string, 'delete_me');
  });
});

describe('labels, sharing and cloning', () => {
  test('labels: add by comma or space, remove with 200 or 202, readonly may not add', async () => {
    const form = await publishOk(bob, 'label_form');
    const url = `/api/v1/forms/${form['formid']}/labels`;
    assert.deepEqual((await get(url, bob)).json(), []);
    assert.deepEqual((await send('POST', url, bob, { tags: 'one two' })).json().sort(), ['one', 'two']);
    const removed = await send('DELETE', `${url}/one`, bob);
    assert.equal(removed.statusCode, 200);
    assert.deepEqual(removed.json(), ['two']);
    assert.equal((await send('DELETE', `${url}/absent`, bob)).statusCode, 202);
    await send('POST', `/api/v1/forms/${form['formid']}/share`, bob, { username: 'alice', role: 'readonly' });
    assert.equal((await send('POST', url, alice, { tags: 'x' })).statusCode, 403);
    const spaced = await send('POST', url, bob, { tags: 'with space,other' });
    assert.ok(spaced.json().includes('with space'));
    assert.equal((await send('DELETE', `${url}/with%20space`, bob)).statusCode, 200);
    // Tags are case-insensitive: HELLO beside hello is the same tag.
    await send('POST', url, bob, { tags: 'hello' });
    assert.deepEqual((await send('POST', url, bob, { tags: 'HELLO,Hello' })).json(), ['hello', 'other', 'two']);
    assert.deepEqual((await send('DELETE', `${url}/Hello`, bob)).json(), ['other', 'two']);
  });

  test('a title has at most 255 characters', async () => {
    const form = await publishOk(bob, 'long_title');
    const res = await send('PATCH', `/api/v1/forms/${form['formid']}`, bob, { title: 'x'.repeat(256) });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { title: ['Ensure this field has no more than 255 characters.'] });
    assert.equal((await send('PATCH', `/api/v1/forms/${form['formid']}`, bob, { title: 'x'.repeat(255) })).statusCode, 200);
  });

  test('share: usernames, per-user errors, and the role is applied as asked, never widened by meta-perms', async () => {
    const form = await publishOk(bob, 'share_form');
    const url = `/api/v1/forms/${form['formid']}/share`;
    const ok = await send('POST', url, bob, { usernames: 'alice,tom', role: 'readonly' });
    assert.equal(ok.statusCode, 204);
    const users = (await get(`/api/v1/forms/${form['formid']}`, bob)).json().users.map((u: Json) => [u['user'], u['role']]);
    assert.deepEqual(users, [['bob', 'owner'], ['alice', 'readonly'], ['tom', 'readonly']]);
    const none = await send('POST', url, bob, { role: 'readonly' });
    assert.equal(none.statusCode, 400);
    const boss = await send('POST', url, bob, { username: 'alice', role: 'boss' });
    assert.deepEqual(boss.json(), [{ role: ["Unknown role 'boss'."] }]);
    const ghost = await send('POST', url, bob, { usernames: 'alice,ghost', role: 'editor' });
    assert.deepEqual(ghost.json(), [{}, { username: ["User 'ghost' does not exist."] }]);
    assert.equal((await send('POST', url, alice, { username: 'tom', role: 'manager' })).statusCode, 403);
    // onadata maps editor-minor to editor through the default meta-perms; a client asking for
    // editor-minor expects it (see roles-restricted.test.ts).
    await send('POST', url, bob, { username: 'tom', role: 'editor-minor' });
    const tomRole = (await get(`/api/v1/forms/${form['formid']}`, bob)).json().users.find((u: Json) => u['user'] === 'tom');
    assert.equal(tomRole.role, 'editor-minor');
  });

  test('publishes at once into one account each get their own id_string (and one default project)', async () => {
    const newcomer = await createUser(server.app, 'newcomer');
    const results = await Promise.all(Array.from({ length: 5 }, () => publish(newcomer, csvForm({ id: 'racing' }))));
    assert.deepEqual(results.map((r) => r.statusCode), [201, 201, 201, 201, 201], results.map((r) => r.body).join('\n'));
    assert.deepEqual(results.map((r) => r.json().id_string).sort(), ['racing', 'racing_1', 'racing_2', 'racing_3', 'racing_4']);
    const projects = (await get('/api/v1/projects', newcomer)).json();
    assert.deepEqual(projects.map((p: Json) => p['name']), ["newcomer's Project"]);
  });

  test('publishing into a project needs the right to add forms to it (onadata lets anyone)', async () => {
    const project = (await send('POST', '/api/v1/projects', bob, { name: 'bob private', owner: 'http://testserver/api/v1/users/bob' })).json();
    const publicProject = (await send('POST', '/api/v1/projects', bob, { name: 'bob public', owner: 'http://testserver/api/v1/users/bob', public: true })).json();
    const hidden = await publish(tom, csvForm({ id: 'intruder' }), { project: String(project['projectid']) });
    assert.equal(hidden.statusCode, 400);
    assert.deepEqual(hidden.json(), { project: [`Project with id '${String(project['projectid'])}' does not exist.`] });
    const visible = await publish(tom, csvForm({ id: 'intruder' }), { project: String(publicProject['projectid']) });
    assert.equal(visible.statusCode, 403);
    const asynchronous = await server.app.inject({
      method: 'POST',
      url: '/api/v1/forms/create_async',
      ...(() => {
        const body = multipart({ project: String(project['projectid']) }, [formFile(csvForm({ id: 'intruder' }))]);
        return { payload: body.payload, headers: { ...tom.auth, ...body.headers } };
      })(),
    });
    assert.equal(asynchronous.statusCode, 400);
    assert.equal((await get(`/api/v1/projects/${String(project['projectid'])}/forms`, bob)).json().length, 0);
    const odd = await send('POST', '/api/v1/forms', bob, { text_xls_form: csvForm({ id: 'odd' }), project: { a: 1 } });
    assert.deepEqual(odd.json(), { project: ['Project with id \'{"a":1}\' does not exist.'] });

    await send('PUT', `/api/v1/projects/${String(project['projectid'])}/share`, bob, { username: 'tom', role: 'manager' });
    const allowed = await publish(tom, csvForm({ id: 'welcome' }), { project: String(project['projectid']) });
    assert.equal(allowed.statusCode, 201, allowed.body);
  });

  test('share: a manager cannot take the form over or lock its owner out (onadata allows both)', async () => {
    const form = await publishOk(bob, 'share_guarded');
    const url = `/api/v1/forms/${form['formid']}/share`;
    assert.equal((await send('POST', url, bob, { username: 'alice', role: 'manager' })).statusCode, 204);
    const roles = async () => (await get(`/api/v1/forms/${form['formid']}`, bob)).json().users.map((u: Json) => [u['user'], u['role']]);

    const grabbed = await send('POST', url, alice, { username: 'alice', role: 'owner' });
    assert.equal(grabbed.statusCode, 403);
    assert.deepEqual(grabbed.json(), { detail: 'You cannot give a role higher than your own.' });
    assert.equal((await send('POST', url, alice, { username: 'tom', role: 'owner' })).statusCode, 403);
    const demoted = await send('POST', url, alice, { username: 'bob', role: 'readonly' });
    assert.equal(demoted.statusCode, 400);
    assert.deepEqual(demoted.json(), { username: ["Cannot change the role of the form's owner (bob)."] });
    assert.equal((await send('POST', url, bob, { username: 'bob', role: 'readonly' })).statusCode, 400, 'nor by mistake, by the owner');
    assert.deepEqual(await roles(), [['bob', 'owner'], ['alice', 'manager']]);

    // Up to their own role, a manager shares as before.
    assert.equal((await send('POST', url, alice, { username: 'tom', role: 'manager' })).statusCode, 204);
    assert.deepEqual(await roles(), [['bob', 'owner'], ['alice', 'manager'], ['tom', 'manager']]);
  });

  test('clone: a form whose settings name nothing is cloned as <id_string>_cloned, title and all', async () => {
    const res = await publish(bob, 'survey,,,\n,type,name,label\n,text,bird,Bird\n', {}, 'birds.csv');
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().id_string, 'birds');
    const clone = await send('POST', `/api/v1/forms/${String(res.json().formid)}/clone`, bob, { username: 'bob' });
    assert.equal(clone.statusCode, 201, clone.body);
    assert.equal(clone.json().id_string, 'birds_cloned');
    assert.equal(clone.json().title, 'birds_cloned');
  });

  test('clone: errors in onadata’s order, then a new form in the target’s account', async () => {
    const form = await publishOk(bob, 'clone_me');
    const url = `/api/v1/forms/${form['formid']}/clone`;
    assert.deepEqual((await send('POST', url, bob, {})).json(), { username: ['This field may not be null.'] });
    assert.deepEqual((await send('POST', url, bob, { username: 'mjomba' })).json(), { username: ["User 'mjomba' does not exist."] });
    const denied = await send('POST', url, bob, { username: 'alice' });
    assert.equal(denied.statusCode, 403);
    assert.deepEqual(denied.json(), { detail: 'User bob has no permission to add xforms to account alice' });
    assert.deepEqual((await send('POST', url, bob, { username: 'bob', project_id: 5000 })).json(), { project: ["Project with id '5000' does not exist."] });
    const clone = await send('POST', url, bob, { username: 'bob' });
    assert.equal(clone.statusCode, 201, clone.body);
    assert.notEqual(clone.json().formid, form['formid']);
    assert.notEqual(clone.json().uuid, form['uuid']);
    assert.equal(clone.json().id_string, 'clone_me_1');
  });
});

describe('survey_preview', () => {
  test('POST compiles CSV text; GET returns the XForm as XML or as a JSON string', async () => {
    assert.deepEqual((await send('POST', '/api/v1/forms/survey_preview', bob, {})).json(), { detail: 'Missing body' });
    const bad = await send('POST', '/api/v1/forms/survey_preview', bob, { body: 'survey,,,\n,type,name,label\n,nope,q,Q\n' });
    assert.equal(bad.statusCode, 400);
    const res = await send('POST', '/api/v1/forms/survey_preview', bob, { body: csvForm({ id: 'preview_me' }) });
    assert.equal(res.statusCode, 200);
    const { unique_string: name, username } = res.json();
    assert.match(name, /^survey_draft_[0-9a-f]{6}\.csv$/);
    assert.equal(username, 'bob');
    const xml = await get(`/api/v1/forms/survey_preview.xml?filename=${name}&username=bob`);
    assert.equal(xml.statusCode, 200);
    assert.ok(xml.body.startsWith('<?xml'));
    assert.ok(xml.body.includes('preview_me'));
    const asJson = await get(`/api/v1/forms/survey_preview?filename=${name}&username=bob`);
    assert.equal(JSON.parse(asJson.body), xml.body);
    assert.deepEqual((await get('/api/v1/forms/survey_preview.xml?filename=x')).json(), { detail: 'Username not provided' });
    assert.deepEqual((await get('/api/v1/forms/survey_preview.xml?username=bob')).json(), { detail: 'Filename MUST be provided' });
    assert.equal((await get('/api/v1/forms/survey_preview.xml?username=bob&filename=nope.csv')).statusCode, 400);
    assert.equal((await send('POST', '/api/v1/forms/survey_preview', undefined, { body: 'x' })).statusCode, 401);
  });
});

describe('create_async and delete_async', () => {
  const registry = buildJobRegistry();

  test('create_async: 202 job_uuid, PENDING until a worker runs it, then 201 with the form', async () => {
    const body = multipart({}, [formFile(csvForm({ id: 'async_form' }))]);
    const start = await server.app.inject({ method: 'POST', url: '/api/v1/forms/create_async', payload: body.payload, headers: { ...bob.auth, ...body.headers } });
    assert.equal(start.statusCode, 202);
    const jobUuid = start.json().job_uuid;
    assert.match(jobUuid, /^[0-9a-f-]{36}$/);
    const pending = await get(`/api/v1/forms/create_async?job_uuid=${jobUuid}`, bob);
    assert.equal(pending.statusCode, 202);
    assert.equal(pending.json().job_status, 'PENDING');
    assert.equal(await runOneJob(server.deps, registry), true);
    const done = await get(`/api/v1/forms/create_async?job_uuid=${jobUuid}`, bob);
    assert.equal(done.statusCode, 201);
    assert.equal(done.json().id_string, 'async_form');
    // The spec's spelling of the poll, with a trailing slash, answers the same.
    assert.deepEqual((await get(`/api/v1/forms/create_async/?job_uuid=${jobUuid}`, bob)).json(), done.json());
    // Another user cannot read the job; an unknown id is a 400; an empty one onadata's 202.
    assert.equal((await get(`/api/v1/forms/create_async?job_uuid=${jobUuid}`, alice)).statusCode, 400);
    assert.equal((await get('/api/v1/forms/create_async?job_uuid=00000000-0000-0000-0000-000000000000', bob)).statusCode, 400);
    const empty = await get('/api/v1/forms/create_async?job_uuid=', bob);
    assert.equal(empty.statusCode, 202);
    assert.deepEqual(empty.json(), { error: 'Empty job uuid' });
  });

  test('create_async with a broken XLSForm ends in FAILURE with the converter’s message', async () => {
    const body = multipart({}, [formFile('survey,,,\n,type,name,label\n,nope,q,Q\n', 'broken.csv')]);
    const start = await server.app.inject({ method: 'POST', url: '/api/v1/forms/create_async', payload: body.payload, headers: { ...bob.auth, ...body.headers } });
    await runOneJob(server.deps, registry);
    const failed = await get(`/api/v1/forms/create_async?job_uuid=${start.json().job_uuid}`, bob);
    assert.equal(failed.statusCode, 202);
    assert.equal(failed.json().job_status, 'FAILURE');
    assert.ok(String(failed.json().error).length > 0);
    const empty = multipart({});
    assert.deepEqual(
      (await server.app.inject({ method: 'POST', url: '/api/v1/forms/create_async', payload: empty.payload, headers: { ...bob.auth, ...empty.headers } })).json(),
      { message: 'xls_file field empty' },
    );
  });

  test('delete_async: managers only, 202 job_uuid, SUCCESS once run, then the form is gone', async () => {
    const form = await publishOk(bob, 'async_delete');
    const url = `/api/v1/forms/${form['formid']}/delete_async`;
    await send('POST', `/api/v1/forms/${form['formid']}/share`, bob, { username: 'tom', role: 'editor' });
    assert.equal((await send('DELETE', url, tom)).statusCode, 403);
    const start = await send('DELETE', url, bob);
    assert.equal(start.statusCode, 202);
    assert.ok(start.json().time_async_triggered);
    const jobUuid = start.json().job_uuid;
    assert.equal((await get(`${url}?job_uuid=${jobUuid}`, bob)).json().job_status, 'PENDING');
    await runOneJob(server.deps, registry);
    const done = await get(`${url}?job_uuid=${jobUuid}`, bob);
    assert.equal(done.statusCode, 202);
    assert.equal(done.json().job_status, 'SUCCESS');
    assert.equal((await get(`/api/v1/forms/${form['formid']}`, bob)).statusCode, 404);
  });
});

describe('real spreadsheets', () => {
  test('an .xls XLSForm from the corpus publishes and its file downloads unchanged', async () => {
    const bytes = readFileSync(new URL('../../../shared/xlsform-corpus/forms/pyxform__tests__example_xls__tutorial.xls', import.meta.url));
    const body = multipart({}, [{ name: 'xls_file', fileName: 'tutorial.xls', content: bytes, contentType: 'application/vnd.ms-excel' }]);
    const res = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: body.payload, headers: { ...bob.auth, ...body.headers } });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().id_string, 'tutorial');
    const file = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${res.json().formid}/form.xls`, headers: bob.auth });
    assert.equal(file.headers['content-type'], 'application/vnd.ms-excel');
    assert.deepEqual(Buffer.from(file.rawPayload), Buffer.from(bytes));
  });
});
