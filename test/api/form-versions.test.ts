// What a form tells about its submissions and versions: submission_count_for_today,
// form_versions (counts per version) and /forms/{pk}/versions.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createUser, multipart, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { csvForm, formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';

let server: TestServer;
let bob: TestUser;
let formId: number;

async function submit(xml: string): Promise<void> {
  const res = await postSubmission(server.app, '/bob/submission', xml, bob.auth);
  assert.equal(res.statusCode, 201, res.body);
}

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  formId = await publishForm(server.app, bob, formFile(HOUSEHOLD_CSV, 'household.csv'));
});
after(() => server.close());

test('a form counts today’s submissions and its submissions per version', async () => {
  const empty = (await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}`, headers: bob.auth })).json();
  assert.equal(empty.submission_count_for_today, 0);
  assert.deepEqual(empty.form_versions, []);

  await submit(householdXml({ uuid: randomUUID() }));
  await submit(householdXml({ uuid: randomUUID() }));
  await submit(householdXml({ uuid: randomUUID() }).replace('version="2026010101"', 'version="2025"'));
  const form = (await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}`, headers: bob.auth })).json();
  assert.equal(form.submission_count_for_today, 3);
  assert.deepEqual(form.form_versions, [
    { version: '2025', total: 1 },
    { version: '2026010101', total: 2 },
  ]);

  // Tomorrow, none of them is today's.
  server.clock.advance(24 * 3600);
  const tomorrow = (await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}`, headers: bob.auth })).json();
  assert.equal(tomorrow.submission_count_for_today, 0);
  // The list (short form) has neither field, as onadata's.
  const [listed] = (await server.app.inject({ method: 'GET', url: '/api/v1/forms', headers: bob.auth })).json();
  assert.equal('submission_count_for_today' in listed, false);
  assert.equal('form_versions' in listed, false);
});

test('/forms/{pk}/versions lists published versions; each has its JSON and XML; unknown ones are 404', async () => {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/versions`, headers: bob.auth });
  assert.equal(res.statusCode, 200);
  const [version] = res.json();
  assert.equal(version.version, '2026010101');
  assert.equal(version.xform, `http://testserver/api/v1/forms/${formId}`);
  assert.equal(version.url, `http://testserver/api/v1/forms/${formId}/versions/2026010101`);
  assert.equal(version.xml, `http://testserver/api/v1/forms/${formId}/versions/2026010101.xml`);
  assert.equal(version.created_by, 'http://testserver/api/v1/users/bob');

  const json = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/versions/2026010101`, headers: bob.auth });
  assert.equal(json.statusCode, 200);
  assert.equal(json.json().id_string, 'household');
  const viaSuffix = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/versions/2026010101.json`, headers: bob.auth });
  assert.equal(viaSuffix.json().id_string, 'household');
  const xml = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/versions/2026010101.xml`, headers: bob.auth });
  assert.equal(xml.statusCode, 200);
  assert.match(String(xml.headers['content-type']), /xml/);
  assert.match(xml.body, /<h:html/);

  assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/versions/nope`, headers: bob.auth })).statusCode, 404);
  assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/versions` })).statusCode, 404, 'a private form’s versions are hidden from anonymous callers');
});

test('a replaced form keeps each version’s XForm and XLSForm, listed as onadata lists them', async () => {
  const first = csvForm({ id: 'versioned', version: 'v1' });
  const second = csvForm({ id: 'versioned', version: 'v2', extra: ',text,village,Village' });
  const id = await publishForm(server.app, bob, formFile(first, 'versioned.csv'));
  const replacement = multipart({}, [formFile(second, 'versioned-2.csv')]);
  const replaced = await server.app.inject({ method: 'PATCH', url: `/api/v1/forms/${id}`, payload: replacement.payload, headers: { ...bob.auth, ...replacement.headers } });
  assert.equal(replaced.statusCode, 200, replaced.body);

  const list = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${id}/versions`, headers: bob.auth });
  assert.equal(list.statusCode, 200);
  const versions = list.json();
  assert.deepEqual(versions.map((v: Record<string, unknown>) => v['version']), ['v1', 'v2']);
  // onadata's XFormVersionListSerializer: these keys, in this order (no XLSForm link).
  assert.deepEqual(Object.keys(versions[0]), ['xform', 'url', 'xml', 'created_by', 'version', 'date_created', 'date_modified']);

  const oldXml = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${id}/versions/v1.xml`, headers: bob.auth });
  assert.equal(oldXml.statusCode, 200);
  assert.doesNotMatch(oldXml.body, /village/);
  const newXml = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${id}/versions/v2.xml`, headers: bob.auth });
  assert.match(newXml.body, /village/);

  // The XLSForm each version was published from, whichever suffix is asked for.
  for (const suffix of ['xls', 'xlsx']) {
    const oldXls = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${id}/versions/v1.${suffix}`, headers: bob.auth });
    assert.equal(oldXls.statusCode, 200);
    assert.equal(oldXls.body, first);
    assert.match(String(oldXls.headers['content-disposition']), /versioned\.csv/);
  }
  const newXls = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${id}/versions/v2.xlsx`, headers: bob.auth });
  assert.equal(newXls.body, second);
  assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/forms/${id}/versions/v3.xls`, headers: bob.auth })).statusCode, 404);
});
