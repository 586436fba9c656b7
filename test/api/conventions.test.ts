import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, startTestServer, type TestServer, type TestUser } from '../helpers.ts';

let server: TestServer;
let bob: TestUser;

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
});
after(() => server.close());

describe('routing conventions', () => {
  test('a trailing slash matches no route', async () => {
    for (const url of ['/api/v1/users/', '/api/v1/forms/', '/api/v1/projects/']) {
      const res = await server.app.inject({ method: 'GET', url, headers: bob.auth });
      assert.equal(res.statusCode, 404, url);
    }
  });

  test('the .json format suffix names the same resource', async () => {
    const plain = await server.app.inject({ method: 'GET', url: '/api/v1/users', headers: bob.auth });
    const suffixed = await server.app.inject({ method: 'GET', url: '/api/v1/users.json', headers: bob.auth });
    assert.equal(suffixed.statusCode, 200);
    assert.deepEqual(suffixed.json(), plain.json());
    const profile = await server.app.inject({ method: 'GET', url: '/api/v1/profiles/bob.json?x=1', headers: bob.auth });
    assert.equal(profile.json().username, 'bob');
  });

  test('/api/v1 redirects to /api/v1/, which links the resources', async () => {
    const redirect = await server.app.inject({ method: 'GET', url: '/api/v1' });
    assert.equal(redirect.statusCode, 301);
    assert.equal(redirect.headers['location'], '/api/v1/');
    const root = await server.app.inject({ method: 'GET', url: '/api/v1/' });
    assert.equal(root.json().users, 'http://testserver/api/v1/users');
  });

  test('unknown paths get a JSON 404', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/nothing-here' });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { detail: 'Not found.' });
  });

  test('an unmapped method gets 405 with the Allow header', async () => {
    const res = await server.app.inject({ method: 'POST', url: '/api/v1/users', headers: bob.auth });
    assert.equal(res.statusCode, 405);
    assert.deepEqual(res.json(), { detail: 'Method "POST" not allowed.' });
    assert.equal(res.headers['allow'], 'GET, HEAD, OPTIONS');
  });

  test('HEAD is answered wherever GET is', async () => {
    const res = await server.app.inject({ method: 'HEAD', url: '/api/v1/users', headers: bob.auth });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '');
  });

  test('detail routes list every mapped method in Allow', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/profiles/bob', headers: bob.auth });
    assert.equal(res.headers['allow'], 'GET, HEAD, PUT, PATCH, OPTIONS');
  });
});

describe('response headers', () => {
  test('GET responses carry a strong ETag and If-None-Match answers 304', async () => {
    const first = await server.app.inject({ method: 'GET', url: '/api/v1/profiles/bob', headers: bob.auth });
    const etag = first.headers['etag'];
    assert.match(String(etag), /^"[0-9a-f]{32}"$/);
    const again = await server.app.inject({ method: 'GET', url: '/api/v1/profiles/bob', headers: { ...bob.auth, 'if-none-match': String(etag) } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
  });

  test('errors and writes carry no Cache-Control', async () => {
    const error = await server.app.inject({ method: 'GET', url: '/api/v1/profiles/ghost', headers: bob.auth });
    assert.equal(error.headers['cache-control'], undefined);
    const write = await server.app.inject({ method: 'PATCH', url: '/api/v1/profiles/bob', payload: { city: 'Z' }, headers: bob.auth });
    assert.equal(write.headers['cache-control'], undefined);
  });

  test('security headers are set', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/users', headers: bob.auth });
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN');
    assert.equal(res.headers['referrer-policy'], 'same-origin');
  });
});

describe('CORS', () => {
  test('a preflight allows Authorization and Content-Type without credentials', async () => {
    const res = await server.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/user',
      headers: { origin: 'https://app.example.org', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, content-type' },
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.match(String(res.headers['access-control-allow-headers']), /authorization/);
    assert.match(String(res.headers['access-control-allow-headers']), /content-type/);
    assert.match(String(res.headers['access-control-allow-methods']), /PATCH/);
    assert.equal(res.headers['access-control-allow-credentials'], undefined);
    assert.equal(res.headers['access-control-max-age'], '86400');
  });

  test('a plain OPTIONS answers 200 with the path’s Allow header (no preflight headers needed)', async () => {
    for (const url of ['/api/v1/users', '/api/v1/forms/1', '/api/v1/projects/1/share']) {
      const res = await server.app.inject({ method: 'OPTIONS', url, headers: bob.auth });
      assert.equal(res.statusCode, 200, url);
      assert.match(String(res.headers['allow']), /OPTIONS/, url);
      assert.deepEqual(res.json().renders, ['application/json'], url);
    }
    assert.equal((await server.app.inject({ method: 'OPTIONS', url: '/api/v1/users' })).headers['allow'], 'GET, HEAD, OPTIONS');
  });

  test('a cross-origin GET with a token is answered with the allow-origin header', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: { ...bob.auth, origin: 'https://app.example.org' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['access-control-allow-origin'], '*');
  });

  test('configured origins are the only ones allowed', async () => {
    const strict = await startTestServer({ CORS_ORIGINS: 'https://good.example.org' });
    try {
      const good = await strict.app.inject({ method: 'GET', url: '/api/v1/', headers: { origin: 'https://good.example.org' } });
      assert.equal(good.headers['access-control-allow-origin'], 'https://good.example.org');
      const bad = await strict.app.inject({ method: 'GET', url: '/api/v1/', headers: { origin: 'https://evil.example.org' } });
      assert.equal(bad.headers['access-control-allow-origin'], undefined);
    } finally {
      await strict.close();
    }
  });
});

describe('OpenAPI', () => {
  test('the document is generated from the route schemas', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.equal(doc.openapi, '3.0.3');
    for (const path of ['/api/v1/users', '/api/v1/profiles', '/api/v1/profiles/{username}', '/api/v1/user']) {
      assert.ok(doc.paths[path], path);
    }
  });

  test('the browsable docs are served', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/docs/' });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /swagger/i);
  });

  test('the OpenAPI document describes what forms, data, submissions and exports answer', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/docs/json' });
    assert.equal(res.statusCode, 200);
    type Schema = { type?: string; properties?: Record<string, unknown>; items?: Schema };
    type Operation = { responses: Record<string, { content?: Record<string, { schema: Schema }> }> };
    const paths = (res.json() as { paths: Record<string, Record<string, Operation>> }).paths;
    const answered = (path: string, method: string, status: string, type = 'application/json'): Schema => {
      const schema = paths[path]?.[method]?.responses[status]?.content?.[type]?.schema;
      assert.ok(schema, `${method} ${path} ${status} ${type}`);
      return schema;
    };
    const fields = (schema: Schema): string[] => Object.keys((schema.type === 'array' ? schema.items : schema)?.properties ?? {});
    assert.ok(fields(answered('/api/v1/forms/{pk}', 'get', '200')).includes('id_string'));
    assert.ok(fields(answered('/api/v1/forms', 'get', '200')).includes('formid'));
    assert.ok(fields(answered('/api/v1/forms', 'post', '201')).includes('has_id_string_changed'));
    assert.ok(fields(answered('/api/v1/data/{pk}', 'get', '200')).includes('_submission_time'));
    assert.ok(fields(answered('/api/v1/data/{pk}/{dataid}', 'get', '200')).includes('_attachments'));
    assert.ok(fields(answered('/api/v1/submissions', 'post', '201')).includes('instanceID'));
    assert.equal(answered('/api/v1/submissions', 'post', '201', 'text/xml').type, 'string');
    assert.ok(fields(answered('/api/v1/export', 'get', '200')).includes('export_url'));
    assert.ok(fields(answered('/api/v1/forms/{pk}/export_async', 'get', '202')).includes('job_uuid'));
  });
});

describe('input the database refuses', () => {
  test('NUL characters in a body or a path are a 400, never a 500', async () => {
    const body = await server.app.inject({ method: 'PATCH', url: '/api/v1/profiles/bob', payload: { city: 'a\u0000b' }, headers: bob.auth });
    assert.equal(body.statusCode, 400);
    const path = await server.app.inject({ method: 'GET', url: '/api/v1/users/a%00b', headers: bob.auth });
    assert.ok(path.statusCode === 400 || path.statusCode === 404, String(path.statusCode));
  });

  test('endpoints that take fields read a multipart form like a urlencoded one; an absent body is an empty one', async () => {
    const { multipart } = await import('../helpers.ts');
    const form = multipart({ name: 'Multipart project' });
    const made = await server.app.inject({ method: 'POST', url: '/api/v1/projects', headers: { ...bob.auth, ...form.headers }, payload: form.payload });
    assert.equal(made.statusCode, 201, made.body);
    assert.equal(made.json().name, 'Multipart project');
    const register = multipart({ username: 'multi', first_name: 'Multi', email: 'multi@example.org', password: 'a-long-Passphrase-7' });
    const registered = await server.app.inject({ method: 'POST', url: '/api/v1/profiles', headers: register.headers, payload: register.payload });
    assert.equal(registered.statusCode, 201, registered.body);
    const empty = await server.app.inject({ method: 'POST', url: '/api/v1/projects', headers: bob.auth });
    assert.equal(empty.statusCode, 400);
    assert.deepEqual(empty.json(), { name: ['This field is required.'] });
    const nothing = await server.app.inject({ method: 'PATCH', url: '/api/v1/profiles/bob', headers: bob.auth });
    assert.equal(nothing.statusCode, 200, nothing.body);
  });

  test('a broken multipart body (no boundary, cut short) is a 400 on every upload route, never a 500', async () => {
    const formId = Number(
      (await server.app.inject({ method: 'POST', url: '/api/v1/forms', headers: bob.auth, payload: { text_xls_form: 'survey,,,\n,type,name,label\n,text,q,Q\n' } })).json().formid,
    );
    const truncated = '--XYZ\r\nContent-Disposition: form-data; name="xls_file"; filename="f.csv"\r\nContent-Type: text/csv\r\n\r\nsurvey,,,\n,type,name';
    const routes: Array<['POST' | 'PATCH', string]> = [
      ['POST', '/api/v1/forms'],
      ['POST', '/api/v1/forms/create_async'],
      ['PATCH', `/api/v1/forms/${formId}`],
      ['POST', `/api/v1/forms/${formId}/csv_import`],
      ['POST', '/api/v1/metadata'],
    ];
    for (const [method, url] of routes) {
      for (const [contentType, payload] of [['multipart/form-data', 'garbage'], ['multipart/form-data; boundary=XYZ', truncated]] as const) {
        const res = await server.app.inject({ method, url, headers: { ...bob.auth, 'content-type': contentType }, payload });
        assert.equal(res.statusCode, 400, `${method} ${url} ${contentType}: ${res.body}`);
        assert.match(String(res.json().detail), /^Multipart form parse error - /, `${method} ${url}`);
      }
    }
    assert.equal((await server.app.inject({ method: 'GET', url: '/api/v1/forms', headers: bob.auth })).json().length, 1, 'nothing was published');
    // Devices get the same 400, in OpenRosa's envelope.
    const device = await server.app.inject({ method: 'POST', url: '/bob/submission', headers: { ...bob.auth, 'content-type': 'multipart/form-data; boundary=XYZ' }, payload: truncated });
    assert.equal(device.statusCode, 400);
    assert.match(device.body, /<OpenRosaResponse[^>]*><message nature="">The multipart body is malformed\.</);
  });
});
