// /api/v1/user/oauth_applications: the signed-in user's OAuth client applications as JSON, for the
// web app's account page and for integrators (the /o/applications/ pages answer HTML). onadata has
// no such endpoint; the fields follow django-oauth-toolkit's Application model.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requireUser } from '../../access/index.ts';
import { errors } from '../../errors.ts';
import { asPayload } from '../../http/payload.ts';
import { isoTimestamp } from '../../platform/clock.ts';
import type { ApplicationRow } from './repository.ts';
import { CLIENT_TYPES, deleteApplication, GRANT_TYPES, listApplications, registerApplication } from './service.ts';

const Application = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  client_id: Type.String(),
  client_type: Type.String({ description: 'confidential or public' }),
  authorization_grant_type: Type.String({ description: 'authorization-code' }),
  redirect_uris: Type.String({ description: 'space-separated' }),
  created: Type.String(),
});

const Created = Type.Object({
  ...Application.properties,
  client_secret: Type.Union([Type.String(), Type.Null()], { description: 'a confidential client’s secret, shown this once (it is stored hashed); null for a public client' }),
});

const NewApplication = Type.Object({
  name: Type.Optional(Type.String()),
  client_type: Type.Optional(Type.String({ description: `${CLIENT_TYPES.join(' or ')} (default confidential)` })),
  authorization_grant_type: Type.Optional(Type.String({ description: `${GRANT_TYPES.join(', ')} (the default)` })),
  redirect_uris: Type.Optional(Type.String({ description: 'one or more absolute http(s) URIs, space-separated' })),
});

function applicationToApi(row: ApplicationRow): Record<string, unknown> {
  return {
    id: row.id,
    name: row.name,
    client_id: row.client_id,
    client_type: row.client_type,
    authorization_grant_type: row.authorization_grant_type,
    redirect_uris: row.redirect_uris,
    created: isoTimestamp(row.created_at),
  };
}

function text(payload: Record<string, unknown>, key: string, fallback: string): string {
  const value = payload[key];
  return typeof value === 'string' ? value : fallback;
}

export function registerOAuthApplicationRoutes(app: FastifyInstance): void {
  app.get('/api/v1/user/oauth_applications', {
    config: { access: 'authenticated', cache: 'private' },
    schema: { tags: ['user'], summary: 'Your OAuth 2 client applications', response: { 200: Type.Array(Application) } },
    handler: async (request) => (await listApplications(request.ctx, requireUser(request.ctx.actor))).map(applicationToApi),
  });

  app.post('/api/v1/user/oauth_applications', {
    config: { access: 'authenticated' },
    schema: {
      tags: ['user'],
      summary: 'Register an OAuth 2 client application; a confidential one’s client_secret is answered this once',
      body: NewApplication,
      response: { 201: Created },
    },
    handler: async (request, reply) => {
      const payload = asPayload(request.body);
      const result = await registerApplication(request.ctx, requireUser(request.ctx.actor), {
        name: text(payload, 'name', ''),
        client_type: text(payload, 'client_type', 'confidential'),
        authorization_grant_type: text(payload, 'authorization_grant_type', 'authorization-code'),
        redirect_uris: text(payload, 'redirect_uris', ''),
      });
      if (!result.ok) {
        throw errors.invalidFields(Object.fromEntries(Object.entries(result.problems).map(([field, problem]) => [field, [problem]])));
      }
      return reply.code(201).send({ ...applicationToApi(result.application), client_secret: result.clientSecret ?? null });
    },
  });

  app.delete<{ Params: { id: string } }>('/api/v1/user/oauth_applications/:id', {
    config: { access: 'authenticated' },
    schema: {
      tags: ['user'],
      summary: 'Delete one of your OAuth 2 client applications with its codes and tokens',
      params: Type.Object({ id: Type.String() }),
    },
    handler: async (request, reply) => {
      const id = /^\d{1,9}$/.test(request.params.id) ? Number(request.params.id) : undefined;
      if (id === undefined || !(await deleteApplication(request.ctx, requireUser(request.ctx.actor), id))) throw errors.notFound();
      return reply.code(204).send();
    },
  });
}
