// MAP_TILE_URL: the data map's tile server. The app learns it from GET /api/v1/session, and the
// app's pages let images come from that server only when it is set; unset, no tile is ever asked for.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';
import { startTestServer, type TestServer } from '../helpers.ts';
import { ensureWebBuild } from '../web-build.ts';

let plain: TestServer;
let tiled: TestServer;

before(async () => {
  ensureWebBuild();
  plain = await startTestServer();
  tiled = await startTestServer({ MAP_TILE_URL: 'https://{a-c}.tiles.example.org/osm/{z}/{x}/{y}.png' });
});
after(async () => {
  await plain.close();
  await tiled.close();
});

function imageSources(csp: unknown): string {
  return /img-src ([^;]*)/.exec(String(csp))?.[1] ?? '';
}

test('unset, the session says no tile server and the pages allow images from this server only', async () => {
  const session = await plain.app.inject({ method: 'GET', url: '/api/v1/session' });
  assert.equal(session.statusCode, 200);
  assert.equal(session.json<{ map_tile_url: string }>().map_tile_url, '');
  const page = await plain.app.inject({ method: 'GET', url: '/projects/1/forms/2/map' });
  assert.equal(page.statusCode, 200);
  assert.equal(imageSources(page.headers['content-security-policy']), "'self' data: blob:");
});

test('set, the session hands the template to the app and the pages allow the tile host', async () => {
  const session = await tiled.app.inject({ method: 'GET', url: '/api/v1/session' });
  assert.equal(session.json<{ map_tile_url: string }>().map_tile_url, 'https://{a-c}.tiles.example.org/osm/{z}/{x}/{y}.png');
  const page = await tiled.app.inject({ method: 'GET', url: '/projects/1/forms/2/map' });
  assert.equal(imageSources(page.headers['content-security-policy']), "'self' data: blob: https://*.tiles.example.org");
  assert.match(String(page.headers['content-security-policy']), /connect-src 'self';/);
});

test('a MAP_TILE_URL without {z}/{x}/{y}, or not an address, stops the server from starting', () => {
  assert.throws(() => loadConfig({ MAP_TILE_URL: 'https://tiles.example.org/osm.png' }), /MAP_TILE_URL/);
  assert.throws(() => loadConfig({ MAP_TILE_URL: "javascript:alert(1)//{z}/{x}/{y}" }), /MAP_TILE_URL/);
  assert.throws(() => loadConfig({ MAP_TILE_URL: "https://t.example.org/{z}/{x}/{y}.png; script-src *" }), /MAP_TILE_URL/);
  assert.equal(loadConfig({ MAP_TILE_URL: '/tiles/{z}/{x}/{y}.png' }).mapTileUrl, '/tiles/{z}/{x}/{y}.png');
  assert.equal(loadConfig({}).mapTileUrl, '');
});
