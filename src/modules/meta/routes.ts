// The API root, its redirect, and the OpenAPI document.
import type { FastifyInstance } from 'fastify';

const RESOURCES = ['users', 'user', 'profiles', 'projects', 'forms'] as const;

export function registerMetaRoutes(app: FastifyInstance): void {
  app.get('/api/v1', {
    config: { access: 'anyone' },
    schema: { hide: true },
    handler: (_request, reply) => reply.redirect('/api/v1/', 301),
  });

  app.get('/api/v1/', {
    config: { access: 'anyone' },
    schema: { tags: ['meta'], summary: 'Links to the API resources' },
    handler: (request) =>
      Object.fromEntries(RESOURCES.map((name) => [name, `${request.ctx.baseUrl}/api/v1/${name}`])),
  });

  // Served as /api/v1/openapi.json: the `.json` suffix is stripped before routing.
  app.get('/api/v1/openapi', {
    config: { access: 'anyone' },
    schema: { hide: true },
    handler: () => app.swagger(),
  });
}
