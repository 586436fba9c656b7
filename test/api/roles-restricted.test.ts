// The restricted roles (dataentry-only, dataentry-minor, editor-minor, editor-no-download,
// readonly-no-download), however they are granted, give exactly what the spec's role table says:
// no records, attachments or exports beyond the role, whatever the form's xform_meta_perms say.
//
// onadata stores a share of dataentry-only or dataentry-minor as dataentry, and one of
// editor-minor or editor-no-download as editor, through the form's default meta permissions
// (`editor|dataentry|readonly`): the user then reads and exports everyone's records. A client who
// asks for a restricted role expects it, so Gather keeps the role asked for; the meta permissions
// may only narrow it.
//
// Writes follow the same scope: a role that reads only its own records (editor-minor,
// editor-no-download, dataentry-minor) or none (dataentry-only) deletes, tags and edits only its
// own, even on an account that does not require auth, where onadata lets anyone edit any record.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { basic, createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { unzip } from '../zip.ts';
import { runOneJob } from '../../src/jobs/worker.ts';
import { buildJobRegistry } from '../../src/compose.ts';
import type { Role } from '../../src/access/roles.ts';

const registry = buildJobRegistry();
const RESTRICTED = ['dataentry-only', 'dataentry-minor', 'editor-minor', 'editor-no-download', 'readonly-no-download'] as const;
type Restricted = (typeof RESTRICTED)[number];
const GRANTS = ['form share', 'project share', 'project share, form published later', 'project share, form moved in'] as const;
type Grant = (typeof GRANTS)[number];

/** What each role reads and exports, from the spec's role table (onadata's permissions, §5.1). */
const READS: Record<Restricted, 'none' | 'own' | 'all'> = {
  'dataentry-only': 'none', // submit data only
  'dataentry-minor': 'own', // submit, and view only own submissions
  'editor-minor': 'own', // view and edit own submissions
  'editor-no-download': 'own', // onadata: view_xform_data without view_xform_all, no export
  'readonly-no-download': 'all', // view data but not export it
};
const EXPORTS: ReadonlySet<Restricted> = new Set(['dataentry-minor', 'editor-minor']);
const SUBMITS: ReadonlySet<Restricted> = new Set(['dataentry-only', 'dataentry-minor', 'editor-minor', 'editor-no-download']);

const formCsv = (id: string) =>
  ['survey,,,', ',type,name,label', ',text,name,Name', ',image,photo,Photo', 'settings,,,', ',form_title,form_id,version', `,Stalls ${id},${id},2026010101`, ''].join('\n');
const xml = (id: string, name: string) =>
  `<?xml version="1.0"?><${id} id="${id}" version="2026010101"><name>${name}</name><photo>${name}.jpg</photo><meta><instanceID>uuid:${randomUUID()}</instanceID></meta></${id}>`;
const JPEG = (seed: number) => Buffer.from([0xff, 0xd8, 0xff, 0xe0, seed, 1, 2, 3]);

interface Target {
  user: TestUser;
  role: Restricted;
  grant: Grant;
  form: number;
  idString: string;
  /** Bob's record, its attachment and an export of every record made by bob. */
  others: { record: number; file: number; exportId: number };
  /** The user's own record and attachment, when the role may submit. */
  own?: { record: number; file: number };
}

let server: TestServer;
let dataDir: string;
let bob: TestUser;
const targets: Target[] = [];

const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, user?: TestUser, payload?: Record<string, unknown>) =>
  server.app.inject({ method, url, headers: user ? user.auth : {}, ...(payload ? { payload } : {}) });

async function runJobs(): Promise<void> {
  while (await runOneJob(server.deps, registry, { log: () => {} })) {
    // until the queue is empty
  }
}

async function newProject(name: string): Promise<number> {
  const res = await call('POST', '/api/v1/projects', bob, { name });
  assert.equal(res.statusCode, 201, res.body);
  return Number(res.json().projectid);
}

async function publishInto(projectId: number, idString: string): Promise<number> {
  const body = multipart({}, [formFile(formCsv(idString), `${idString}.csv`)]);
  const res = await server.app.inject({ method: 'POST', url: `/api/v1/projects/${projectId}/forms`, payload: body.payload, headers: { ...bob.auth, ...body.headers } });
  assert.equal(res.statusCode, 201, res.body);
  return Number(res.json().formid);
}

async function share(kind: 'forms' | 'projects', id: number, user: TestUser, role: Role): Promise<void> {
  const res = await call(kind === 'forms' ? 'POST' : 'PUT', `/api/v1/${kind}/${id}/share`, bob, { username: user.username, role });
  assert.equal(res.statusCode, 204, res.body);
}

/** Submits as `user` a record with a photo; returns the record's id and its attachment's. */
async function submit(user: TestUser, formId: number, idString: string, name: string, seed: number): Promise<{ record: number; file: number }> {
  const body = multipart({}, [
    { name: 'xml_submission_file', fileName: 's.xml', content: xml(idString, name), contentType: 'text/xml' },
    { name: `${name}.jpg`, fileName: `${name}.jpg`, content: JPEG(seed), contentType: 'image/jpeg' },
  ]);
  const res = await server.app.inject({ method: 'POST', url: '/bob/submission', payload: body.payload, headers: { authorization: basic(user.username, user.password), ...body.headers } });
  assert.equal(res.statusCode, 201, res.body);
  const records = (await call('GET', `/api/v1/data/${formId}`, bob)).json<Array<{ _id: number; name: string; _attachments: Array<{ id: number }> }>>();
  const record = records.find((r) => r.name === name);
  assert.ok(record?._attachments[0]);
  return { record: record._id, file: record._attachments[0].id };
}

/** A form granted to a new user with `role` by `grant`. */
async function grantForm(n: number, role: Restricted, grant: Grant): Promise<Omit<Target, 'others' | 'own'>> {
  const user = await createUser(server.app, `user${n}`);
  const idString = `stalls_${n}`;
  const projectId = await newProject(`project ${n}`);
  let form: number;
  if (grant === 'form share') {
    form = await publishInto(projectId, idString);
    await share('forms', form, user, role);
  } else if (grant === 'project share') {
    form = await publishInto(projectId, idString);
    await share('projects', projectId, user, role);
  } else if (grant === 'project share, form published later') {
    await share('projects', projectId, user, role);
    form = await publishInto(projectId, idString);
  } else {
    await share('projects', projectId, user, role);
    form = await publishInto(await newProject(`elsewhere ${n}`), idString);
    const body = multipart({ formid: String(form) });
    const moved = await server.app.inject({ method: 'POST', url: `/api/v1/projects/${projectId}/forms`, payload: body.payload, headers: { ...bob.auth, ...body.headers } });
    assert.equal(moved.statusCode, 201, moved.body);
  }
  return { user, role, grant, form, idString };
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gather-roles-restricted-'));
  server = await startTestServer({ DATA_DIR: dataDir });
  bob = await createUser(server.app, 'bob');
  let n = 0;
  for (const role of RESTRICTED) {
    for (const grant of GRANTS) {
      n += 1;
      const target = await grantForm(n, role, grant);
      const bobs = await submit(bob, target.form, target.idString, `Bob${n}`, n);
      const own = SUBMITS.has(role) ? await submit(target.user, target.form, target.idString, `Own${n}`, 100 + n) : undefined;
      const started = await call('GET', `/api/v1/forms/${target.form}/export_async?format=csv`, bob);
      assert.equal(started.statusCode, 202, started.body);
      await runJobs();
      const done = (await call('GET', `/api/v1/forms/${target.form}/export_async?format=csv&job_uuid=${String(started.json().job_uuid)}`, bob)).json<{ export_url: string }>();
      const exportId = Number(/(\d+)$/.exec(done.export_url)?.[1]);
      targets.push({ ...target, others: { ...bobs, exportId }, ...(own ? { own } : {}) });
    }
  }
});
after(async () => {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** What the user may do on the form, as status codes (and the records they see), to compare whole. */
async function observe(t: Target): Promise<Record<string, unknown>> {
  const { user, form, others, own } = t;
  const status = async (url: string) => (await call('GET', url, user)).statusCode;
  const listing = await call('GET', `/api/v1/data/${form}`, user);
  const csv = await call('GET', `/api/v1/forms/${form}.csv`, user);
  const zip = await call('GET', `/api/v1/data/${form}.zip`, user);
  const asyncExport = await call('GET', `/api/v1/forms/${form}/export_async?format=csv`, user);
  const formUsers = (await call('GET', `/api/v1/forms/${form}`, bob)).json<{ users: Array<{ user: string; role: string }> }>().users;
  return {
    'role on the form': formUsers.find((u) => u.user === user.username)?.role,
    'records listed': listing.statusCode === 200 ? listing.json<Array<{ _id: number }>>().map((r) => r._id) : listing.statusCode,
    'another’s record': await status(`/api/v1/data/${form}/${others.record}`),
    'another’s record as XML': await status(`/api/v1/data/${form}/${others.record}.xml`),
    'another’s attachment': await status(`/api/v1/files/${others.file}`),
    'own record': own ? await status(`/api/v1/data/${form}/${own.record}`) : 'none',
    'own attachment': own ? await status(`/api/v1/files/${own.file}`) : 'none',
    'CSV download': csv.statusCode === 200 ? `200 with ${csv.body.trim().split(/\r?\n/).length - 1} record(s)` : csv.statusCode,
    'attachments zip': zip.statusCode === 200 ? `200 with ${(await unzip(zip.rawPayload)).size} file(s)` : zip.statusCode,
    'export_async': asyncExport.statusCode,
    'another’s export': await status(`/api/v1/export/${others.exportId}`),
    'exports listed': await status(`/api/v1/export?xform=${form}`),
  };
}

/** The same, as the spec's role table would have it. */
function expected(t: Target): Record<string, unknown> {
  const reads = READS[t.role];
  const exports = EXPORTS.has(t.role);
  const readStatus = reads === 'all' ? 200 : reads === 'own' ? 404 : 403;
  const exportStatus = exports ? 200 : 403;
  return {
    'role on the form': t.role,
    'records listed': reads === 'none' ? 403 : reads === 'own' ? (t.own ? [t.own.record] : []) : [t.others.record, ...(t.own ? [t.own.record] : [])],
    'another’s record': readStatus,
    'another’s record as XML': readStatus,
    'another’s attachment': readStatus,
    'own record': t.own ? (reads === 'none' ? 403 : 200) : 'none',
    'own attachment': t.own ? (reads === 'none' ? 403 : 200) : 'none',
    // Roles that see only their own records export only those.
    'CSV download': exports ? '200 with 1 record(s)' : 403,
    'attachments zip': exports ? '200 with 1 file(s)' : 403,
    'export_async': exports ? 202 : 403,
    // An export of every record is another's data: not found for own-records exporters.
    'another’s export': exports ? 404 : 403,
    'exports listed': exportStatus,
  };
}

describe('restricted roles give no more than asked', () => {
  for (const role of RESTRICTED) {
    for (const grant of GRANTS) {
      test(`${role} by ${grant}`, async () => {
        const target = targets.find((t) => t.role === role && t.grant === grant);
        assert.ok(target);
        assert.deepEqual(await observe(target), expected(target));
      });
    }
  }
});

describe('xform_meta_perms narrow roles, never widen them', () => {
  /** A form of a test's own, its meta permissions and its members: each test changes both. */
  interface PermsForm {
    formId: number;
    projectId: number;
    permsUrl: string;
    users: Map<string, TestUser>;
  }
  let made = 0;
  async function permsForm(): Promise<PermsForm> {
    const n = ++made;
    const projectId = await newProject(`meta perms ${n}`);
    const formId = await publishInto(projectId, `meta_perms_form_${n}`);
    const perms = (await call('GET', `/api/v1/metadata?xform=${formId}`, bob)).json<Array<{ id: number; data_type: string }>>().find((m) => m.data_type === 'xform_meta_perms');
    const users = new Map<string, TestUser>();
    for (const name of ['edna', 'eddy', 'dana', 'dora', 'rona', 'pete']) users.set(name, await createUser(server.app, `${name}${n}`));
    return { formId, projectId, permsUrl: `/api/v1/metadata/${String(perms?.id)}`, users };
  }
  const user = (f: PermsForm, name: string): TestUser => {
    const found = f.users.get(name);
    assert.ok(found);
    return found;
  };
  const roleOf = async (f: PermsForm, name: string) => {
    const username = f.users.get(name)?.username ?? name;
    return (await call('GET', `/api/v1/forms/${f.formId}`, bob)).json<{ users: Array<{ user: string; role: string }> }>().users.find((u) => u.user === username)?.role;
  };
  const setPerms = async (f: PermsForm, value: string) => {
    const res = await call('PATCH', f.permsUrl, bob, { data_value: value });
    assert.equal(res.statusCode, 200, res.body);
  };
  /** Narrow meta permissions, then the members' shares: what the later tests start from. */
  async function narrowAndShare(f: PermsForm): Promise<void> {
    await setPerms(f, 'editor-no-download|dataentry-minor|readonly-no-download');
    await share('forms', f.formId, user(f, 'edna'), 'editor');
    await share('forms', f.formId, user(f, 'dana'), 'dataentry');
    await share('forms', f.formId, user(f, 'dora'), 'dataentry-only');
    await share('forms', f.formId, user(f, 'rona'), 'readonly');
    await share('projects', f.projectId, user(f, 'pete'), 'editor-minor');
  }

  test('a narrower slot narrows a share, a wider one does not widen it', async () => {
    const f = await permsForm();
    await narrowAndShare(f);
    assert.deepEqual(
      [await roleOf(f, 'edna'), await roleOf(f, 'dana'), await roleOf(f, 'dora'), await roleOf(f, 'rona'), await roleOf(f, 'pete')],
      ['editor-no-download', 'dataentry-minor', 'dataentry-only', 'readonly-no-download', 'editor-no-download'],
    );
  });

  test('loosening the meta permissions gives back at most the role asked for', async () => {
    const f = await permsForm();
    await narrowAndShare(f);
    await setPerms(f, 'editor|dataentry|readonly');
    assert.deepEqual(
      [await roleOf(f, 'edna'), await roleOf(f, 'dana'), await roleOf(f, 'dora'), await roleOf(f, 'rona'), await roleOf(f, 'pete')],
      ['editor', 'dataentry', 'dataentry-only', 'readonly', 'editor-minor'],
    );
    // Slots naming higher roles than asked (or of another family) give nothing more.
    await share('forms', f.formId, user(f, 'eddy'), 'editor-no-download');
    await setPerms(f, 'manager|editor|dataentry');
    assert.deepEqual(
      [await roleOf(f, 'edna'), await roleOf(f, 'eddy'), await roleOf(f, 'dana'), await roleOf(f, 'dora'), await roleOf(f, 'rona'), await roleOf(f, 'pete')],
      ['editor', 'editor-no-download', 'dataentry', 'dataentry-only', 'readonly', 'editor-minor'],
    );
    await share('forms', f.formId, user(f, 'dora'), 'dataentry-minor');
    assert.equal(await roleOf(f, 'dora'), 'dataentry-minor');
    assert.equal(await roleOf(f, 'bob'), 'owner');
  });

  test('a slot of another family narrows to what both roles allow', async () => {
    const f = await permsForm();
    await narrowAndShare(f);
    // The editor slot says editors act as data entry here: an editor-minor becomes dataentry-minor.
    await setPerms(f, 'dataentry|dataentry|readonly');
    assert.deepEqual([await roleOf(f, 'edna'), await roleOf(f, 'pete')], ['dataentry', 'dataentry-minor']);
    await setPerms(f, 'editor|dataentry|readonly');
    assert.deepEqual([await roleOf(f, 'edna'), await roleOf(f, 'pete')], ['editor', 'editor-minor']);
  });
});

/** Posts an instance as `user` to bob's account (no media); answers the status. */
async function post(user: TestUser, instance: string): Promise<number> {
  const body = multipart({}, [{ name: 'xml_submission_file', fileName: 's.xml', content: instance, contentType: 'text/xml' }]);
  const res = await server.app.inject({ method: 'POST', url: '/bob/submission', payload: body.payload, headers: { authorization: basic(user.username, user.password), ...body.headers } });
  return res.statusCode;
}

/** An edit (deprecatedID) of the record `record` of the form, as `user`; answers the status. */
async function editAs(user: TestUser, form: number, idString: string, record: number, name: string): Promise<number> {
  const uuid = (await call('GET', `/api/v1/data/${form}/${record}`, bob)).json<{ _uuid: string }>()._uuid;
  const instance = `<?xml version="1.0"?><${idString} id="${idString}" version="2026010101"><name>${name}</name><meta><instanceID>uuid:${randomUUID()}</instanceID><deprecatedID>uuid:${uuid}</deprecatedID></meta></${idString}>`;
  return post(user, instance);
}

/** The names of bob's records on the form, as bob reads them. */
async function bobsRecords(form: number): Promise<string[]> {
  const records = (await call('GET', `/api/v1/data/${form}`, bob)).json<Array<{ name: string; _submitted_by: string }>>();
  return records.filter((r) => r._submitted_by === 'bob').map((r) => r.name);
}

const tagsOf = async (form: number, record: number): Promise<unknown> => (await call('GET', `/api/v1/data/${form}/${record}/labels`, bob)).json();

describe('restricted roles change only the records their role lets them', () => {
  /** Roles holding change_xform and delete_submission: they tag, edit and delete their own records. */
  const CHANGES: ReadonlySet<Restricted> = new Set(['editor-minor', 'editor-no-download']);
  const label = (user: TestUser, form: number, record: number) => call('POST', `/api/v1/data/${form}/${record}/labels`, user, { tags: ['mine'] });
  const status = async (res: Promise<{ statusCode: number }>) => (await res).statusCode;
  const deleted = async (res: Promise<{ statusCode: number; json: () => { message?: string } }>) => {
    const done = await res;
    return done.statusCode === 200 ? done.json().message : done.statusCode;
  };

  let n = 100;
  for (const role of RESTRICTED) {
    for (const grant of ['form share', 'project share'] as const) {
      test(`${role} by ${grant}, on an account that does not require auth`, async () => {
        n += 1;
        const t = await grantForm(n, role, grant);
        const { user, form, idString } = t;
        const others = (await submit(bob, form, idString, `Bob${n}`, n)).record;
        assert.equal((await call('POST', `/api/v1/data/${form}/${others}/labels`, bob, { tags: ['checked'] })).statusCode, 201);
        // Each destructive request gets a record of bob's of its own, so none hides another's effect.
        const single = (await submit(bob, form, idString, `Bob${n} single`, n)).record;
        const bulk = (await submit(bob, form, idString, `Bob${n} bulk`, n)).record;
        const own = SUBMITS.has(role) ? (await submit(user, form, idString, `Own${n}`, 100 + n)).record : undefined;
        const observed: Record<string, unknown> = {
          'tag another’s record': await status(label(user, form, others)),
          'untag another’s record': await status(call('DELETE', `/api/v1/data/${form}/${others}/labels/checked`, user)),
          'another’s tags afterwards': await tagsOf(form, others),
          'review another’s record': await status(call('POST', '/api/v1/submissionreview', user, { instance: others, status: '1' })),
          'edit another’s record': await editAs(user, form, idString, others, `Bob${n} overwritten`),
          'delete another’s record': await status(call('DELETE', `/api/v1/data/${form}/${single}`, user)),
          'bulk delete another’s record': await deleted(call('DELETE', `/api/v1/data/${form}`, user, { instance_ids: String(bulk) })),
          'tag own record': own ? await status(label(user, form, own)) : 'none',
          'edit own record': own ? await editAs(user, form, idString, own, `Own${n} again`) : 'none',
          'review own record': own ? await status(call('POST', '/api/v1/submissionreview', user, { instance: own, status: '1' })) : 'none',
          'delete own record': own ? await status(call('DELETE', `/api/v1/data/${form}/${own}`, user)) : 'none',
        };
        if (SUBMITS.has(role)) await submit(user, form, idString, `Own${n} later`, 200 + n);
        observed['delete all'] = await deleted(call('DELETE', `/api/v1/data/${form}`, user, { delete_all: 'True' }));
        observed['bob’s records afterwards'] = await bobsRecords(form);

        const reads = READS[role];
        const changes = CHANGES.has(role);
        // 404 for a record the role does not read; 403 where it reads none, or reads but may not change.
        const unseen = reads === 'own' ? 404 : 403;
        // Anyone may edit any record of an account without require_auth (onadata), except the roles
        // that read only their own records (or none): they replace only their own.
        const editsOthers = reads === 'all';
        assert.deepEqual(observed, {
          'tag another’s record': unseen,
          'untag another’s record': unseen,
          'another’s tags afterwards': ['checked'],
          // Owners and managers review; a record the caller does not read does not exist for them.
          'review another’s record': reads === 'all' ? 403 : 400,
          'edit another’s record': editsOthers ? 201 : 403,
          'delete another’s record': changes ? 404 : 403,
          'bulk delete another’s record': changes ? '0 records were deleted' : 403,
          'tag own record': own ? (changes ? 201 : 403) : 'none',
          'edit own record': own ? 201 : 'none',
          'review own record': own ? (reads === 'none' ? 400 : 403) : 'none',
          'delete own record': own ? (changes ? 204 : 403) : 'none',
          'delete all': changes ? '1 records were deleted' : 403,
          'bob’s records afterwards': [editsOthers ? `Bob${n} overwritten` : `Bob${n}`, `Bob${n} single`, `Bob${n} bulk`],
        });
      });
    }
  }

  test('with require_auth, an edit needs change_xform (onadata) and, for own-records roles, the record to be theirs', async () => {
    const cases = [['editor-minor', 201], ['editor-no-download', 201], ['dataentry-minor', 403], ['dataentry-only', 403]] as const;
    const observed: Record<string, unknown> = {};
    const forms = [];
    for (const [role] of cases) {
      n += 1;
      const t = await grantForm(n, role, 'form share');
      forms.push({ ...t, others: (await submit(bob, t.form, t.idString, `Bob${n}`, n)).record, own: (await submit(t.user, t.form, t.idString, `Own${n}`, 100 + n)).record });
    }
    n += 1;
    const reader = await grantForm(n, 'readonly-no-download', 'form share');
    const readersOthers = (await submit(bob, reader.form, reader.idString, `Bob${n}`, n)).record;
    assert.equal((await call('PATCH', '/api/v1/profiles/bob', bob, { require_auth: true })).statusCode, 200);
    try {
      for (const t of forms) {
        observed[`${t.role}: another’s`] = await editAs(t.user, t.form, t.idString, t.others, 'Overwritten');
        observed[`${t.role}: own`] = await editAs(t.user, t.form, t.idString, t.own, 'Mine again');
      }
      observed['readonly-no-download: another’s'] = await editAs(reader.user, reader.form, reader.idString, readersOthers, 'Overwritten');
    } finally {
      await call('PATCH', '/api/v1/profiles/bob', bob, { require_auth: false });
    }
    assert.deepEqual(observed, {
      ...Object.fromEntries(cases.flatMap(([role, own]) => [[`${role}: another’s`, 403], [`${role}: own`, own]])),
      'readonly-no-download: another’s': 403,
    });
  });

  test('public data lets an own-records role read every record, not change another’s', async () => {
    n += 1;
    const t = await grantForm(n, 'editor-minor', 'form share');
    const { user, form, idString } = t;
    assert.equal((await call('PATCH', `/api/v1/forms/${form}`, bob, { public_data: true })).statusCode, 200);
    const others = (await submit(bob, form, idString, `Bob${n}`, n)).record;
    const single = (await submit(bob, form, idString, `Bob${n} single`, n)).record;
    const bulk = (await submit(bob, form, idString, `Bob${n} bulk`, n)).record;
    const own = (await submit(user, form, idString, `Own${n}`, 100 + n)).record;
    assert.equal((await call('GET', `/api/v1/data/${form}/${others}`, user)).statusCode, 200);
    assert.deepEqual(
      {
        tag: await status(label(user, form, others)),
        edit: await editAs(user, form, idString, others, 'Overwritten'),
        delete: await status(call('DELETE', `/api/v1/data/${form}/${single}`, user)),
        bulk: await deleted(call('DELETE', `/api/v1/data/${form}`, user, { instance_ids: `${bulk},${own}` })),
        'delete all': await deleted(call('DELETE', `/api/v1/data/${form}`, user, { delete_all: 'True' })),
        afterwards: await bobsRecords(form),
      },
      { tag: 403, edit: 403, delete: 403, bulk: '1 records were deleted', 'delete all': '0 records were deleted', afterwards: [`Bob${n}`, `Bob${n} single`, `Bob${n} bulk`] },
    );
  });
});
