// The API side of the web forms: onadata's Enketo link endpoints.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import * as webforms from './service.ts';

export function registerWebFormRoutes(app: FastifyInstance): void {
  app.get<{ Params: { pk: string }; Querystring: Record<string, string | undefined> }>('/api/v1/forms/:pk/enketo', {
    config: { access: 'authenticated' },
    schema: {
      tags: ['forms'],
      summary: 'The form’s web form addresses: enketo_url (fill), enketo_preview_url (stores nothing), single_submit_url (one record)',
      params: Type.Object({ pk: Type.String() }),
      querystring: Type.Object({ survey_type: Type.Optional(Type.String({ description: 'single or preview: only that address' })), show_preview: Type.Optional(Type.String()) }),
    },
    handler: (request) => webforms.formLinks(request.ctx, request.params.pk, request.query),
  });
  app.get<{ Params: { pk: string; dataid: string }; Querystring: { return_url?: string } }>('/api/v1/data/:pk/:dataid/enketo', {
    config: { access: 'authenticated' },
    schema: {
      tags: ['data'],
      summary: 'The web form address that edits this record',
      params: Type.Object({ pk: Type.String(), dataid: Type.String() }),
      querystring: Type.Object({ return_url: Type.Optional(Type.String()) }),
    },
    handler: (request) => webforms.recordEditLink(request.ctx, request.params.pk, request.params.dataid, request.query.return_url),
  });
}
