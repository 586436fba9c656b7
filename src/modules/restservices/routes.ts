// Routes for /api/v1/restservices: a schema, an access rule and one service call each.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import * as restservices from './service.ts';
import { restServiceInput } from './inputs.ts';

const IdParams = Type.Object({ pk: Type.String({ description: 'REST service id' }) });
const Service = Type.Object({}, {
  additionalProperties: true,
  description: 'onadata REST service: id, xform, name, service_url, date_created, date_modified, active, inactive_reason; ' +
    'and send_updates, has_secret and the delivery log (delivery: pending, delivered, dropped, last_status, last_error, attempts, last_attempt, last_delivery, retry_after)',
});
type Pk = { Params: { pk: string } };

export function registerRestServiceRoutes(app: FastifyInstance): void {
  app.get<{ Querystring: { xform?: string } }>('/api/v1/restservices', {
    config: { access: 'anyone', cache: 'private' },
    schema: {
      tags: ['restservices'],
      summary: 'REST services of a form (?xform), or of every form the caller holds a role on',
      querystring: Type.Object({ xform: Type.Optional(Type.String({ description: 'form id' })) }),
    },
    handler: (request) => restservices.listRestServices(request.ctx, request.query.xform),
  });

  app.post('/api/v1/restservices', {
    config: { access: 'authenticated' },
    schema: {
      tags: ['restservices'],
      summary: 'Send a form’s records to a URL (owners and managers): {xform, name: generic_json or generic_xml, service_url, ' +
        'secret (optional: signs each delivery), send_updates (optional: also edits and review changes)}',
      response: { 201: Service },
    },
    handler: async (request, reply) => reply.code(201).send(await restservices.createRestService(request.ctx, restServiceInput(request.body, false))),
  });

  app.get<Pk>('/api/v1/restservices/:pk', {
    config: { access: 'anyone', cache: 'private' },
    schema: { tags: ['restservices'], summary: 'One REST service with its delivery log', params: IdParams, response: { 200: Service } },
    handler: (request) => restservices.getRestService(request.ctx, request.params.pk),
  });

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route<Pk>({
      method,
      url: '/api/v1/restservices/:pk',
      config: { access: 'authenticated' },
      schema: { tags: ['restservices'], summary: 'Change a REST service (owners and managers)', params: IdParams, response: { 200: Service } },
      handler: (request) => restservices.updateRestService(request.ctx, request.params.pk, restServiceInput(request.body, method === 'PATCH')),
    });
  }

  app.delete<Pk>('/api/v1/restservices/:pk', {
    config: { access: 'authenticated' },
    schema: { tags: ['restservices'], summary: 'Remove a REST service and its undelivered records’ queue (owners and managers)', params: IdParams },
    handler: async (request, reply) => {
      await restservices.deleteRestService(request.ctx, request.params.pk);
      return reply.code(204).send();
    },
  });
}
