import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import { compileAllSchemas, lazySchemas, rememberLazySchemas } from './lazy-schemas.ts';

async function appWith(register: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const schemas = lazySchemas();
  const app = Fastify({ schemaController: { compilersFactory: schemas.compilersFactory }, ajv: { customOptions: { coerceTypes: 'array' } } });
  rememberLazySchemas(app, schemas);
  register(app);
  await app.ready();
  return app;
}

test('validators compiled on first use coerce, refuse with Ajv’s errors and serialize as before', async () => {
  const app = await appWith((app) => {
    app.post(
      '/items/:id',
      {
        schema: {
          params: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
          querystring: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } }, limit: { type: 'integer' } } },
          body: { type: 'object', properties: { name: { type: 'string', minLength: 1 } }, required: ['name'] },
          response: { 200: { type: 'object', properties: { id: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } }, limit: { type: 'integer' } } } },
        },
      },
      async (request) => {
        const query = request.query as { tags?: string[]; limit?: number };
        return { id: (request.params as { id: number }).id, tags: query.tags, limit: query.limit, secret: 'not in the schema' };
      },
    );
  });
  try {
    const ok = await app.inject({ method: 'POST', url: '/items/7?tags=a&limit=3', payload: { name: 'x' } });
    assert.equal(ok.statusCode, 200, ok.body);
    // The query string's root object is replaced by Ajv's coercion (tags: a string becomes a list).
    assert.deepEqual(ok.json(), { id: 7, tags: ['a'], limit: 3 });
    const badBody = await app.inject({ method: 'POST', url: '/items/7', payload: {} });
    assert.equal(badBody.statusCode, 400);
    assert.match(badBody.json<{ message: string }>().message, /body must have required property 'name'/);
    const badParam = await app.inject({ method: 'POST', url: '/items/seven', payload: { name: 'x' } });
    assert.equal(badParam.statusCode, 400);
    assert.match(badParam.json<{ message: string }>().message, /params\/id must be integer/);
    // Those compiled on first use are not compiled again.
    assert.equal(compileAllSchemas(app), 0);
  } finally {
    await app.close();
  }
});

test('a schema that does not compile lets the server start and is named by compileAllSchemas', async () => {
  const app = await appWith((app) => {
    app.get('/broken', { schema: { querystring: { type: 'object', properties: { n: { type: 'no-such-type' } } } } }, async () => ({}));
    app.get('/fine', { schema: { querystring: { type: 'object', properties: { n: { type: 'integer' } } } } }, async () => ({}));
  });
  try {
    assert.throws(() => compileAllSchemas(app), /GET \/broken: the querystring schema does not compile/);
  } finally {
    await app.close();
  }
});
