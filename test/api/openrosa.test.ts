import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { csvForm, formFile } from '../fixtures/forms.ts';

let server: TestServer;
let bob: TestUser;
let alice: TestUser;
let formId: number;
let formHash: string;

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  alice = await createUser(server.app, 'alice');
  const body = multipart({}, [formFile(csvForm({ id: 'household', title: 'Household people' }))]);
  const res = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: body.payload, headers: { ...bob.auth, ...body.headers } });
  formId = Number(res.json().formid);
  formHash = String(res.json().hash);
});
after(() => server.close());

describe('OpenRosa form list', () => {
  test('/{username}/formList lists the account’s forms to a device without credentials', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/bob/formList' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/xml; charset=utf-8');
    assert.equal(res.headers['x-openrosa-version'], '1.0');
    assert.ok(res.headers['x-openrosa-accept-content-length']);
    assert.equal(
      res.body,
      '<?xml version="1.0" encoding="utf-8"?>\n<xforms xmlns="http://openrosa.org/xforms/xformsList">' +
        `<xform><formID>household</formID><name>Household people</name><version>2026010101</version><hash>${formHash}</hash>` +
        `<descriptionText></descriptionText><downloadUrl>http://testserver/bob/forms/${formId}/form.xml</downloadUrl></xform></xforms>`,
    );
  });

  test('HEAD answers 204 on the lists and 200 on a form, with the OpenRosa headers', async () => {
    const res = await server.app.inject({ method: 'HEAD', url: '/bob/formList' });
    assert.equal(res.statusCode, 204);
    assert.equal(res.headers['x-openrosa-version'], '1.0');
    const form = await server.app.inject({ method: 'HEAD', url: `/bob/forms/${formId}/form.xml` });
    assert.equal(form.statusCode, 200);
    assert.match(String(form.headers['content-type']), /^text\/xml/);
    assert.equal(form.body, '');
  });

  test('/formList needs credentials: 401 with a challenge, as OpenRosa XML', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/formList' });
    assert.equal(res.statusCode, 401);
    assert.ok(res.headers['www-authenticate']);
    assert.match(res.body, /<OpenRosaResponse xmlns="http:\/\/openrosa.org\/http\/response"><message nature="">Authentication credentials were not provided.<\/message><\/OpenRosaResponse>/);
    const authed = await server.app.inject({ method: 'GET', url: '/formList', headers: bob.auth });
    assert.match(authed.body, /<formID>household<\/formID>/);
    const other = await server.app.inject({ method: 'GET', url: '/api/v1/formlist', headers: alice.auth });
    assert.doesNotMatch(other.body, /household/);
  });

  test('formID narrows the list; an unknown account is a 404', async () => {
    assert.doesNotMatch((await server.app.inject({ method: 'GET', url: '/bob/formList?formID=other' })).body, /<xform>/);
    assert.match((await server.app.inject({ method: 'GET', url: '/bob/formList?formID=HOUSEHOLD' })).body, /<xform>/);
    assert.equal((await server.app.inject({ method: 'GET', url: '/nobody/formList' })).statusCode, 404);
  });

  test('an account that requires auth hides its list from anonymous devices', async () => {
    await server.app.inject({ method: 'PATCH', url: '/api/v1/profiles/bob', payload: { require_auth: true }, headers: bob.auth });
    try {
      assert.equal((await server.app.inject({ method: 'GET', url: '/bob/formList' })).statusCode, 401);
      assert.equal((await server.app.inject({ method: 'GET', url: '/bob/formList', headers: bob.auth })).statusCode, 200);
    } finally {
      await server.app.inject({ method: 'PATCH', url: '/api/v1/profiles/bob', payload: { require_auth: false }, headers: bob.auth });
    }
  });

  test('the download URL serves the XForm, whose md5 is the listed hash', async () => {
    const res = await server.app.inject({ method: 'GET', url: `/bob/forms/${formId}/form.xml` });
    assert.equal(res.statusCode, 200);
    const { createHash } = await import('node:crypto');
    assert.equal(`md5:${createHash('md5').update(res.body).digest('hex')}`, formHash);
    assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/formlist/${formId}`, headers: bob.auth })).body, res.body);
    assert.equal((await server.app.inject({ method: 'GET', url: '/bob/forms/999/form.xml' })).statusCode, 404);
  });

  test('the manifest of a form without media is empty', async () => {
    const res = await server.app.inject({ method: 'GET', url: `/bob/xformsManifest/${formId}` });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '<?xml version="1.0" encoding="utf-8"?>\n<manifest xmlns="http://openrosa.org/xforms/xformsManifest"></manifest>');
  });

  test('forms that are not downloadable are not listed', async () => {
    await server.app.inject({ method: 'PATCH', url: `/api/v1/forms/${formId}`, payload: { downloadable: false }, headers: bob.auth });
    try {
      assert.doesNotMatch((await server.app.inject({ method: 'GET', url: '/bob/formList' })).body, /<xform>/);
    } finally {
      await server.app.inject({ method: 'PATCH', url: `/api/v1/forms/${formId}`, payload: { downloadable: true }, headers: bob.auth });
    }
  });
});
