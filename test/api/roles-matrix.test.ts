// Walks every role through the project and form endpoints: who gets 2xx, who 403, who 404, who 401.
// Each role is given on a project of its own (project share), which reaches the project's form as
// the same role: the form's default meta-perms narrow nothing (onadata would land editor-family
// roles as editor and dataentry-family roles as dataentry; a client asking for a restricted role
// expects it, see roles-restricted.test.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { csvForm, formFile } from '../fixtures/forms.ts';
import { ROLES, type Role } from '../../src/access/roles.ts';

type Caller = Role | 'no role' | 'anonymous';
const CALLERS: Caller[] = [...ROLES, 'no role', 'anonymous'];

const EDITORS: Role[] = ['editor-no-download', 'editor-minor', 'editor', 'manager', 'owner'];
const MANAGERS: Role[] = ['manager', 'owner'];
/** The roles holding can_export_xform_data on the form (the minor roles export their own records). */
const EXPORTERS: Role[] = ROLES.filter((role) => !['readonly-no-download', 'dataentry-only', 'editor-no-download'].includes(role));
/** dataentry-only submits data only: it reads no records, not even its own. */
const DATA_READERS: Role[] = ROLES.filter((role) => role !== 'dataentry-only');

interface Check {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path with {project} and {form} placeholders. */
  path: string;
  payload?: Record<string, unknown>;
  /** Roles that succeed; everyone else with a role gets 403. */
  allowed: readonly Role[] | 'all';
  success: number;
  /** Reads answer 404 to anonymous callers of private objects; writes answer 401. */
  read: boolean;
}

const CHECKS: Check[] = [
  { name: 'read the project', method: 'GET', path: '/api/v1/projects/{project}', allowed: 'all', success: 200, read: true },
  { name: 'list the project’s forms', method: 'GET', path: '/api/v1/projects/{project}/forms', allowed: 'all', success: 200, read: true },
  { name: 'change the project', method: 'PATCH', path: '/api/v1/projects/{project}', payload: { metadata: { k: 'v' } }, allowed: EDITORS, success: 200, read: false },
  { name: 'share the project', method: 'PUT', path: '/api/v1/projects/{project}/share', payload: { username: 'outsider', role: 'readonly' }, allowed: EDITORS, success: 204, read: false },
  { name: 'tag the project', method: 'POST', path: '/api/v1/projects/{project}/labels', payload: { tags: 'x' }, allowed: MANAGERS, success: 201, read: false },
  { name: 'untag the project', method: 'DELETE', path: '/api/v1/projects/{project}/labels/x', allowed: ['owner'], success: 200, read: false },
  { name: 'read the form', method: 'GET', path: '/api/v1/forms/{form}', allowed: 'all', success: 200, read: true },
  { name: 'read the form’s XForm', method: 'GET', path: '/api/v1/forms/{form}/form.xml', allowed: 'all', success: 200, read: true },
  { name: 'change the form', method: 'PATCH', path: '/api/v1/forms/{form}', payload: { description: 'changed' }, allowed: EDITORS, success: 200, read: false },
  { name: 'share the form', method: 'POST', path: '/api/v1/forms/{form}/share', payload: { username: 'outsider', role: 'readonly' }, allowed: MANAGERS, success: 204, read: false },
  { name: 'tag the form', method: 'POST', path: '/api/v1/forms/{form}/labels', payload: { tags: 'y' }, allowed: MANAGERS, success: 201, read: false },
  { name: 'untag the form', method: 'DELETE', path: '/api/v1/forms/{form}/labels/y', allowed: EDITORS, success: 200, read: false },
  { name: 'read the form’s data', method: 'GET', path: '/api/v1/data/{form}', allowed: DATA_READERS, success: 200, read: true },
  { name: 'export the form’s data (CSV download)', method: 'GET', path: '/api/v1/forms/{form}.csv', allowed: EXPORTERS, success: 200, read: true },
  { name: 'export the form’s data (XLSX download)', method: 'GET', path: '/api/v1/forms/{form}.xlsx', allowed: EXPORTERS, success: 200, read: true },
  { name: 'start an export job', method: 'GET', path: '/api/v1/forms/{form}/export_async?format=csv', allowed: EXPORTERS, success: 202, read: false },
  { name: 'list the form’s exports', method: 'GET', path: '/api/v1/export?xform={form}', allowed: EXPORTERS, success: 200, read: true },
  { name: 'clone the form into one’s own account', method: 'POST', path: '/api/v1/forms/{form}/clone', payload: { username: '{self}' }, allowed: MANAGERS, success: 201, read: false },
  { name: 'delete the form in the background', method: 'DELETE', path: '/api/v1/forms/{form}/delete_async', allowed: MANAGERS, success: 202, read: false },
  { name: 'delete the form', method: 'DELETE', path: '/api/v1/forms/{form}', allowed: EDITORS, success: 204, read: false },
  { name: 'delete the project', method: 'DELETE', path: '/api/v1/projects/{project}', allowed: ['owner'], success: 204, read: false },
];

let server: TestServer;
let bob: TestUser;
const callers = new Map<Caller, TestUser | undefined>();
const targets = new Map<Caller, { project: number; form: number }>();

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  await createUser(server.app, 'outsider');
  let n = 0;
  for (const caller of CALLERS) {
    n += 1;
    const user = caller === 'anonymous' ? undefined : await createUser(server.app, `user${n}`);
    callers.set(caller, user);
    const project = await server.app.inject({ method: 'POST', url: '/api/v1/projects', headers: bob.auth, payload: { name: `project ${n}` } });
    const projectId = Number(project.json().projectid);
    const body = multipart({}, [formFile(csvForm({ id: `form_${n}` }))]);
    const form = await server.app.inject({ method: 'POST', url: `/api/v1/projects/${projectId}/forms`, payload: body.payload, headers: { ...bob.auth, ...body.headers } });
    assert.equal(form.statusCode, 201, form.body);
    targets.set(caller, { project: projectId, form: Number(form.json().formid) });
    // Tags to remove, whoever may add them.
    await server.app.inject({ method: 'POST', url: `/api/v1/projects/${projectId}/labels`, headers: bob.auth, payload: { tags: 'x' } });
    await server.app.inject({ method: 'POST', url: `/api/v1/forms/${form.json().formid}/labels`, headers: bob.auth, payload: { tags: 'y' } });
    if (user && caller !== 'no role') {
      const shared = await server.app.inject({ method: 'PUT', url: `/api/v1/projects/${projectId}/share`, headers: bob.auth, payload: { username: user.username, role: caller } });
      assert.equal(shared.statusCode, 204, shared.body);
    }
  }
});
after(() => server.close());

function expected(check: Check, caller: Caller): number {
  if (caller === 'anonymous') return check.read ? 404 : 401;
  if (caller === 'no role') return 404;
  return check.allowed === 'all' || check.allowed.includes(caller) ? check.success : 403;
}

describe('role matrix', () => {
  for (const caller of CALLERS) {
    test(`${caller}: every endpoint answers as its role allows`, async () => {
      const user = callers.get(caller);
      const target = targets.get(caller);
      assert.ok(target);
      const outcomes: string[] = [];
      for (const check of CHECKS) {
        const url = check.path.replace('{project}', String(target.project)).replace('{form}', String(target.form));
        const payload = check.payload
          ? JSON.parse(JSON.stringify(check.payload).replace('{self}', user?.username ?? 'nobody'))
          : undefined;
        const res = await server.app.inject({ method: check.method, url, headers: user ? user.auth : {}, ...(payload ? { payload } : {}) });
        const want = expected(check, caller);
        if (res.statusCode !== want) outcomes.push(`${check.name}: got ${res.statusCode}, expected ${want} (${res.body.slice(0, 120)})`);
      }
      assert.deepEqual(outcomes, []);
    });
  }

  test('project members are shown with onadata’s project-level role names', async () => {
    const target = targets.get('owner');
    assert.ok(target);
    const shown = new Map<string, string>();
    for (const caller of ['dataentry-only', 'editor-no-download', 'readonly-no-download'] as const) {
      const t = targets.get(caller);
      const user = callers.get(caller);
      assert.ok(t && user);
      const project = (await server.app.inject({ method: 'GET', url: `/api/v1/projects/${t.project}`, headers: bob.auth })).json();
      const entry = project.users.find((u: { user: string }) => u.user === user.username);
      shown.set(caller, entry?.role);
    }
    assert.deepEqual(Object.fromEntries(shown), {
      'dataentry-only': 'dataentry',
      'editor-no-download': 'editor-minor',
      'readonly-no-download': 'readonly-no-download',
    });
  });
});
