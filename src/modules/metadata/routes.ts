// Routes for /api/v1/metadata (form entries with text values): a schema, an access rule and one
// service call each.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { asPayload } from '../../http/payload.ts';
import * as metadata from './service.ts';

const IdParams = Type.Object({ pk: Type.String({ description: 'metadata entry id' }) });
const Entry = Type.Object({}, { additionalProperties: true, description: 'onadata metadata entry: id, xform, data_value, data_type, data_file, extra_data, data_file_type, media_url, file_hash, url, date_created' });
type Pk = { Params: { pk: string } };

export function registerMetadataRoutes(app: FastifyInstance): void {
  app.get<{ Querystring: { xform?: string } }>('/api/v1/metadata', {
    config: { access: 'anyone', cache: 'private' },
    schema: {
      tags: ['metadata'],
      summary: 'Metadata entries of a form (?xform), or of every form the caller holds a role on',
      querystring: Type.Object({ xform: Type.Optional(Type.String({ description: 'form id' })) }),
    },
    handler: (request) => metadata.listMetadata(request.ctx, request.query.xform),
  });

  app.post('/api/v1/metadata', {
    config: { access: 'authenticated' },
    schema: {
      tags: ['metadata'],
      summary: 'Add an entry to a form: {xform, data_type, data_value}, e.g. data_type submission_review, data_value true (owners and managers)',
      body: Type.Object({
        xform: Type.Optional(Type.Unknown({ description: 'form id' })),
        data_type: Type.Optional(Type.Unknown()),
        data_value: Type.Optional(Type.Unknown()),
      }),
      response: { 201: Entry },
    },
    handler: async (request, reply) => reply.code(201).send(await metadata.createMetadata(request.ctx, asPayload(request.body))),
  });

  app.get<Pk>('/api/v1/metadata/:pk', {
    config: { access: 'anyone', cache: 'private' },
    schema: { tags: ['metadata'], summary: 'One metadata entry', params: IdParams, response: { 200: Entry } },
    handler: (request) => metadata.getMetadata(request.ctx, request.params.pk),
  });

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route<Pk>({
      method,
      url: '/api/v1/metadata/:pk',
      config: { access: 'authenticated' },
      schema: { tags: ['metadata'], summary: 'Change an entry’s data_value (editors, managers, owners)', params: IdParams, response: { 200: Entry } },
      handler: (request) => metadata.updateMetadata(request.ctx, request.params.pk, asPayload(request.body)),
    });
  }

  app.delete<Pk>('/api/v1/metadata/:pk', {
    config: { access: 'authenticated' },
    schema: { tags: ['metadata'], summary: 'Delete an entry (marked deleted; owners and managers)', params: IdParams },
    handler: async (request, reply) => {
      await metadata.deleteMetadata(request.ctx, request.params.pk);
      return reply.code(204).send();
    },
  });
}
