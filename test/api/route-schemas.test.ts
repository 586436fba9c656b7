// Route schemas compile on a route's first request (src/http/lazy-schemas.ts): this checks that
// every route's validators and response serializers compile, as Fastify did at start before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers.ts';
import { compileAllSchemas } from '../../src/http/lazy-schemas.ts';

test('every route’s request and response schemas compile', async () => {
  const server = await startTestServer();
  try {
    const compiled = compileAllSchemas(server.app);
    assert.ok(compiled > 100, `only ${compiled} schemas were waiting to compile`);
    assert.equal(compileAllSchemas(server.app), 0, 'each is compiled once');
  } finally {
    await server.close();
  }
});
