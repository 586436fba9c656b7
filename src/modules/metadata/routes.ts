// Routes for /api/v1/metadata (form entries: text values, media files and links, supporting
// documents): a schema, an access rule and one service call each.
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { attachmentDisposition } from '../../http/conventions.ts';
import { readBody } from '../../http/multipart.ts';
import * as metadata from './service.ts';
import { createMetadataInput, updateMetadataInput } from './inputs.ts';

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
    config: { access: 'authenticated', upload: true },
    schema: {
      tags: ['metadata'],
      summary:
        'Add an entry to a form (owners and managers): {xform, data_type, data_value}, e.g. data_type submission_review, data_value true; ' +
        'or multipart xform, data_type media or supporting_doc, data_file (the file devices download with the form, or a document kept beside it); ' +
        'or data_type media with data_value the http(s) address of the file',
      response: { 201: Entry },
    },
    handler: async (request, reply) =>
      reply.code(201).send(await metadata.createMetadata(request.ctx, createMetadataInput(await readBody(request, request.ctx.config.uploadLimitBytes)))),
  });

  app.get<Pk>('/api/v1/metadata/:pk', {
    config: { access: 'anyone', cache: 'private' },
    schema: {
      tags: ['metadata'],
      summary: 'One metadata entry; with a file extension (`/api/v1/metadata/7.png`) the entry’s uploaded file, or a redirect to a linked media file',
      params: IdParams,
      response: { 200: Entry },
    },
    handler: async (request, reply) => {
      const suffixed = /^(\d+)\.([A-Za-z0-9]+)$/.exec(request.params.pk);
      if (!suffixed || suffixed[2]?.toLowerCase() === 'json') return metadata.getMetadata(request.ctx, suffixed?.[1] ?? request.params.pk);
      const download = await metadata.getMetadataFile(request.ctx, suffixed[1] ?? '');
      if (download.kind === 'redirect') return reply.redirect(download.location, 302);
      return reply
        .type(download.contentType)
        .header('content-disposition', attachmentDisposition(download.fileName))
        .header('x-content-type-options', 'nosniff')
        .header('content-length', download.size)
        .send(Readable.from(download.content));
    },
  });

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route<Pk>({
      method,
      url: '/api/v1/metadata/:pk',
      config: { access: 'authenticated' },
      schema: { tags: ['metadata'], summary: 'Change an entry’s data_value (editors, managers, owners)', params: IdParams, response: { 200: Entry } },
      handler: (request) => metadata.updateMetadata(request.ctx, request.params.pk, updateMetadataInput(request.body)),
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
