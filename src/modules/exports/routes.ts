// Routes for exports made by jobs: export_async on a form, the Export records under
// /api/v1/export, and the Google Sheets authorization step.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { exportStatus, startExport, type Query } from './jobs.ts';
import { deleteExport, downloadExport, listExports } from './stored-exports.ts';
import { completeGoogleAuthorization } from './gsheets.ts';
import { attachmentDisposition } from '../../http/conventions.ts';
import { replyAsWritten } from '../../http/documented-reply.ts';
import { ExportJob, ExportRecord } from './schemas.ts';

const ExportAsyncQuery = Type.Object(
  {
    format: Type.Optional(Type.String({ description: 'csv, xls, xlsx, csvzip, savzip, kml, osm, zip (the records’ attached files) or gsheets' })),
    job_uuid: Type.Optional(Type.String({ description: 'poll the job this id names' })),
    meta: Type.Optional(Type.String({ description: 'xls/xlsx: a custom report from the form\'s external_export metadata entry with this id' })),
    token: Type.Optional(Type.String({ description: 'xls/xlsx: a custom report from the template at this URL' })),
    data_id: Type.Optional(Type.String({ description: 'with meta or token: the report of this one record' })),
    redirect_uri: Type.Optional(Type.String({ description: 'gsheets: where the provider sends the authorization code' })),
  },
  { additionalProperties: Type.String() },
);

/** onadata's export viewset takes a temporary token in the URL, for links opened outside the API client. */
const TempTokenParameter = Type.String({ description: 'a temporary token (from /api/v1/user), when no Authorization header is sent' });


export function registerExportJobRoutes(app: FastifyInstance): void {
  app.get<{ Params: { pk: string }; Querystring: Query }>('/api/v1/forms/:pk/export_async', {
    config: { access: 'authenticated' },
    serializerCompiler: replyAsWritten,
    schema: {
      tags: ['exports'],
      summary: 'Start an export job (202 {job_uuid}), reuse an up-to-date export (202 {job_status, export_url}), or poll with job_uuid',
      params: Type.Object({ pk: Type.String() }),
      querystring: ExportAsyncQuery,
      response: { 202: ExportJob },
    },
    handler: async (request, reply) => {
      const jobUuid = request.query['job_uuid'];
      const result =
        jobUuid !== undefined
          ? await exportStatus(request.ctx, request.params.pk, jobUuid)
          : await startExport(request.ctx, request.params.pk, request.query);
      return reply.code(result.status).send(result.body);
    },
  });

  app.get<{ Querystring: { xform?: string } }>('/api/v1/export', {
    config: { access: 'anyone', urlTempToken: true },
    serializerCompiler: replyAsWritten,
    schema: {
      tags: ['exports'],
      summary: 'Export records: with ?xform those of one form, else the exports the caller asked for',
      querystring: Type.Object({ xform: Type.Optional(Type.String()), temp_token: Type.Optional(TempTokenParameter) }),
      response: { 200: Type.Array(ExportRecord) },
    },
    handler: (request) => listExports(request.ctx, request.query.xform),
  });

  app.get<{ Querystring: { code?: string; redirect_uri?: string } }>('/api/v1/export/google_auth', {
    config: { access: 'authenticated' },
    schema: {
      tags: ['exports'],
      summary: 'Store the Google authorization for Sheets exports: exchanges the code the provider returned (201)',
      querystring: Type.Object({ code: Type.Optional(Type.String()), redirect_uri: Type.Optional(Type.String()) }),
    },
    handler: async (request, reply) =>
      reply.code(201).send(await completeGoogleAuthorization(request.ctx, request.query.code, request.query.redirect_uri)),
  });

  app.get<{ Params: { id: string } }>('/api/v1/export/:id', {
    config: { access: 'anyone', urlTempToken: true },
    schema: {
      tags: ['exports'],
      summary: 'Download a finished export (`.{ext}` suffix allowed)',
      params: Type.Object({ id: Type.String() }),
      querystring: Type.Object({ temp_token: Type.Optional(TempTokenParameter) }),
    },
    handler: async (request, reply) => {
      const download = await downloadExport(request.ctx, request.params.id);
      if (download.kind === 'redirect') return reply.redirect(download.url, 302);
      return reply
        .type(download.contentType)
        .header('content-length', String(download.size))
        .header('content-disposition', attachmentDisposition(download.fileName))
        .header('x-content-type-options', 'nosniff')
        .send(download.stream);
    },
  });

  app.delete<{ Params: { id: string } }>('/api/v1/export/:id', {
    config: { access: 'authenticated', urlTempToken: true },
    schema: {
      tags: ['exports'],
      summary: 'Delete an export and its file',
      params: Type.Object({ id: Type.String() }),
      querystring: Type.Object({ temp_token: Type.Optional(TempTokenParameter) }),
    },
    handler: async (request, reply) => {
      await deleteExport(request.ctx, request.params.id);
      return reply.code(204).send();
    },
  });
}
