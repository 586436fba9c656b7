// The web app's pages and files, served beside the API without taking any of its paths.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { checkUsername } from '../../src/modules/accounts/validation.ts';
import { APP_PAGES } from '../../src/http/web-app.ts';
import { paths } from '../../web/src/paths.ts';
import { createUser, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { ensureWebBuild } from '../web-build.ts';

let server: TestServer;
let alice: TestUser;

before(async () => {
  ensureWebBuild();
  server = await startTestServer();
  alice = await createUser(server.app, 'alice');
});
after(() => server.close());

function scriptOf(page: string): string {
  const match = /<script type="module" crossorigin src="(\/assets\/[^"]+\.js)">/.exec(page);
  assert.ok(match?.[1], page);
  return match[1];
}

describe('pages', () => {
  for (const url of ['/', '/login', '/register', '/projects', '/projects/12', '/projects/12/anything']) {
    test(`${url} answers the app's page, revalidated on every load`, async () => {
      const res = await server.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.equal(res.headers['cache-control'], 'no-cache');
      assert.match(String(res.headers['content-security-policy']), /script-src 'self'/);
      assert.match(res.body, /<div id="app"><\/div>/);
    });
  }

  test('every page of the app is served, under a first segment no user can take', () => {
    for (const path of Object.values(paths)) {
      const served = APP_PAGES.some((page) => page === path || (page.endsWith('/*') && path.startsWith(page.slice(0, -1))));
      assert.ok(served, `${path} is not answered by the server`);
    }
    for (const page of APP_PAGES) {
      const segment = page.split('/')[1] ?? '';
      if (segment === '') continue;
      assert.match(checkUsername(segment).errors.join(' '), /reserved name/, `${segment} could be a username`);
    }
  });
});

describe('assets', () => {
  test('the page’s script is served gzipped and cached for a year', async () => {
    const page = await server.app.inject({ method: 'GET', url: '/' });
    const script = scriptOf(page.body);
    const res = await server.app.inject({ method: 'GET', url: script, headers: { 'accept-encoding': 'gzip, br' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-encoding'], 'gzip');
    assert.match(String(res.headers['content-type']), /^text\/javascript/);
    assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.match(String(res.headers['vary']), /Accept-Encoding/);
    const plain = await server.app.inject({ method: 'GET', url: script });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.deepEqual(gunzipSync(res.rawPayload), plain.rawPayload);
  });

  test('the first load (entry, preloaded chunks, styles) is within issue 20’s 400 kB compressed', async () => {
    const page = await server.app.inject({ method: 'GET', url: '/' });
    const urls = [...page.body.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] ?? '');
    assert.ok(urls.some((u) => u.endsWith('.css')) && urls.some((u) => u.endsWith('.js')), page.body);
    let bytes = 0;
    for (const url of urls) {
      const res = await server.app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip' } });
      assert.equal(res.statusCode, 200, url);
      bytes += res.rawPayload.length;
    }
    assert.ok(bytes < 400_000, `${bytes} bytes`);
  });

  for (const url of ['/assets/nothing-here.js', '/assets/..%2Fpackage.json', '/assets/%2E%2E%2Fpackage.json', '/assets/.hidden']) {
    test(`${url} is a JSON 404`, async () => {
      const res = await server.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { detail: 'Not found.' });
    });
  }
});

describe('the API and device paths keep theirs', () => {
  test('an unknown API path is still the JSON 404', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/no-such-thing' });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { detail: 'Not found.' });
  });

  test('a user’s OpenRosa form list is not the app', async () => {
    const res = await server.app.inject({ method: 'GET', url: `/${alice.username}/formList`, headers: alice.auth });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /xml/);
  });

  test('an unknown top-level path is not the app', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/somebody/else' });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { detail: 'Not found.' });
  });

  test('the API documentation and the /o/ pages are still theirs', async () => {
    const docs = await server.app.inject({ method: 'GET', url: '/api/docs/json' });
    assert.equal(docs.statusCode, 200);
    const spec = docs.json<{ paths: Record<string, Record<string, unknown>> }>();
    assert.ok(spec.paths['/api/v1/session']?.['post'], 'POST /api/v1/session is documented');
    assert.ok(spec.paths['/api/v1/session']?.['delete'], 'DELETE /api/v1/session is documented');
    assert.equal(spec.paths['/projects/*'], undefined, 'the app’s pages are not API paths');
    const login = await server.app.inject({ method: 'GET', url: '/o/login/' });
    assert.match(login.body, /<form method="post" action="\/o\/login\/">/);
  });

  test('POST to a page is a 405, not the page', async () => {
    const res = await server.app.inject({ method: 'POST', url: '/projects' });
    assert.equal(res.statusCode, 405);
  });
});
