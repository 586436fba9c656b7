// The API side of the web forms: the form's enketo_* addresses, onadata's /enketo endpoints, and
// the form-scoped OpenRosa routes the pages use (/forms/{pk}/formList, form.xml, xformsManifest and
// submission).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, json, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { csvForm, formFile } from '../fixtures/forms.ts';

let server: TestServer;
let owner: TestUser;
let stranger: TestUser;
let formId: number;
let otherFormId: number;

function instance(idString: string, uuid: string): string {
  return `<?xml version="1.0"?><${idString} id="${idString}" version="2026010101"><name>Achieng</name><age>31</age><meta><instanceID>uuid:${uuid}</instanceID></meta></${idString}>`;
}

before(async () => {
  server = await startTestServer();
  owner = await createUser(server.app, 'odhiambo');
  stranger = await createUser(server.app, 'kamau');
  formId = await publishForm(server.app, owner, formFile(csvForm({ id: 'census', title: 'Census' }), 'census.csv'));
  otherFormId = await publishForm(server.app, owner, formFile(csvForm({ id: 'market', title: 'Market' }), 'market.csv'));
});
after(async () => {
  await server.close();
});

describe('web form addresses', () => {
  test('the form JSON links its fill, preview and single-submit pages on this server', async () => {
    const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}`, headers: owner.auth });
    const form = json(res);
    assert.equal(form['enketo_url'], `http://testserver/forms/${formId}/fill`);
    assert.equal(form['enketo_preview_url'], `http://testserver/forms/${formId}/preview`);
    // onadata answers enketo_url here (it reads the wrong metadata key); a client expects the
    // single-submit page, which /enketo?survey_type=single also gives.
    assert.equal(form['enketo_single_submit_url'], `http://testserver/forms/${formId}/single`);
  });

  test('GET /api/v1/forms/{pk}/enketo answers the three, or one with survey_type', async () => {
    const all = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/enketo`, headers: owner.auth });
    assert.equal(all.statusCode, 200, all.body);
    assert.deepEqual(json(all), {
      enketo_url: `http://testserver/forms/${formId}/fill`,
      enketo_preview_url: `http://testserver/forms/${formId}/preview`,
      single_submit_url: `http://testserver/forms/${formId}/single`,
    });
    const single = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/enketo?survey_type=single`, headers: owner.auth });
    assert.deepEqual(json(single), { single_submit_url: `http://testserver/forms/${formId}/single` });
    const preview = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/enketo?show_preview=true`, headers: owner.auth });
    assert.deepEqual(json(preview), { enketo_preview_url: `http://testserver/forms/${formId}/preview` });
  });

  test('the enketo endpoints refuse the anonymous and those who cannot see the form', async () => {
    assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/enketo` })).statusCode, 401);
    assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/enketo`, headers: stranger.auth })).statusCode, 404);
    assert.equal((await server.app.inject({ method: 'GET', url: '/api/v1/forms/999999/enketo', headers: owner.auth })).statusCode, 404);
    // A read-only role sees the form but may not submit to it (onadata's report_xform).
    const reader = await createUser(server.app, 'njeri');
    const shared = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/share`, payload: { username: reader.username, role: 'readonly' }, headers: owner.auth });
    assert.equal(shared.statusCode, 204, shared.body);
    assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/enketo`, headers: reader.auth })).statusCode, 403);
  });

  test('GET /api/v1/data/{pk}/{dataid}/enketo answers the record’s edit page; unknown records 404', async () => {
    const sent = await postSubmission(server.app, `/forms/${formId}/submission`, instance('census', 'a0000000-0000-4000-8000-000000000001'));
    assert.equal(sent.statusCode, 201, sent.body);
    const [row] = json<{ _id: number }[]>(await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}`, headers: owner.auth }));
    assert.ok(row);
    const link = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}/${row._id}/enketo?return_url=${encodeURIComponent('http://testserver/x')}`, headers: owner.auth });
    assert.equal(link.statusCode, 200, link.body);
    assert.deepEqual(json(link), { url: `http://testserver/forms/${formId}/records/${row._id}/edit?return_url=${encodeURIComponent('http://testserver/x')}` });
    assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}/999999/enketo`, headers: owner.auth })).statusCode, 404);
  });
});

describe('form-scoped OpenRosa routes', () => {
  test('/forms/{pk}/formList lists that one form, anonymously while its account allows it', async () => {
    const res = await server.app.inject({ method: 'GET', url: `/forms/${formId}/formList`, headers: { 'x-openrosa-version': '1.0' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.body, /<formID>census<\/formID>/);
    assert.doesNotMatch(res.body, /market/);
    assert.match(res.body, new RegExp(`<downloadUrl>http://testserver/odhiambo/forms/${formId}/form\\.xml</downloadUrl>`));
    assert.equal((await server.app.inject({ method: 'GET', url: '/forms/999999/formList' })).statusCode, 404);
  });

  test('/forms/{pk}/form.xml and /forms/{pk}/xformsManifest answer as the owner’s addresses do', async () => {
    const byOwner = await server.app.inject({ method: 'GET', url: `/odhiambo/forms/${formId}/form.xml` });
    const byForm = await server.app.inject({ method: 'GET', url: `/forms/${formId}/form.xml` });
    assert.equal(byForm.statusCode, 200, byForm.body);
    assert.equal(byForm.body, byOwner.body);
    assert.match(byForm.body, /<h:title>Census<\/h:title>/);
    const manifest = await server.app.inject({ method: 'GET', url: `/forms/${formId}/xformsManifest` });
    assert.equal(manifest.statusCode, 200, manifest.body);
    assert.equal(manifest.body, (await server.app.inject({ method: 'GET', url: `/odhiambo/xformsManifest/${formId}` })).body);
    assert.equal((await server.app.inject({ method: 'HEAD', url: `/forms/${formId}/form.xml` })).statusCode, 200);
    for (const url of ['/forms/999999/form.xml', '/forms/999999/xformsManifest']) assert.equal((await server.app.inject({ method: 'GET', url })).statusCode, 404);
    // A signed-in person whose role cannot submit gets neither, as the form list does not list it.
    const reader = await createUser(server.app, 'atieno');
    const shared = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${otherFormId}/share`, payload: { username: reader.username, role: 'readonly' }, headers: owner.auth });
    assert.equal(shared.statusCode, 204, shared.body);
    assert.equal((await server.app.inject({ method: 'GET', url: `/forms/${otherFormId}/form.xml`, headers: reader.auth })).statusCode, 404);
    assert.equal((await server.app.inject({ method: 'GET', url: `/forms/${otherFormId}/xformsManifest`, headers: reader.auth })).statusCode, 404);
  });

  test('/forms/{pk}/submission takes that form’s records and refuses another form’s', async () => {
    const wrong = await postSubmission(server.app, `/forms/${formId}/submission`, instance('market', 'a0000000-0000-4000-8000-000000000002'));
    assert.equal(wrong.statusCode, 404, wrong.body);
    const right = await postSubmission(server.app, `/forms/${otherFormId}/submission`, instance('market', 'a0000000-0000-4000-8000-000000000003'));
    assert.equal(right.statusCode, 201, right.body);
  });

  test('an account that requires auth: 401 before the body is read, and the owner gets in', async () => {
    const guarded = await createUser(server.app, 'wafula');
    const guardedForm = await publishForm(server.app, guarded, formFile(csvForm({ id: 'guarded', title: 'Guarded' }), 'guarded.csv'));
    await server.app.inject({ method: 'PATCH', url: `/api/v1/profiles/${guarded.username}`, headers: guarded.auth, payload: { require_auth: true } });
    for (const document of ['formList', 'form.xml', 'xformsManifest']) {
      assert.equal((await server.app.inject({ method: 'GET', url: `/forms/${guardedForm}/${document}` })).statusCode, 401, document);
    }
    assert.equal((await server.app.inject({ method: 'GET', url: `/forms/${guardedForm}/form.xml`, headers: guarded.auth })).statusCode, 200);
    // The web form page's own calls get a challenge for which browsers open no password dialog.
    const fromPage = await server.app.inject({ method: 'GET', url: `/forms/${guardedForm}/xformsManifest`, headers: { 'x-requested-with': 'XMLHttpRequest' } });
    assert.equal(fromPage.headers['www-authenticate'], 'Session realm="Gather"');
    const anonymous = await postSubmission(server.app, `/forms/${guardedForm}/submission`, instance('guarded', 'a0000000-0000-4000-8000-000000000004'));
    assert.equal(anonymous.statusCode, 401, anonymous.body);
    const signed = await postSubmission(server.app, `/forms/${guardedForm}/submission`, instance('guarded', 'a0000000-0000-4000-8000-000000000005'), guarded.auth);
    assert.equal(signed.statusCode, 201, signed.body);
  });
});
