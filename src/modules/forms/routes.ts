// Routes for /forms: a schema, an access rule and one service call each.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { readBody } from '../../http/multipart.ts';
import { sendCachedJson, sendPage } from '../../http/list-reply.ts';
import { paginate } from '../../http/pagination.ts';
import { pageWindow } from '../../lib/pages.ts';
import * as forms from './service.ts';
import { cloneFormInput, formListQuery, labelsInput, shareFormInput, surveyPreviewInput, updateFormInput } from './inputs.ts';
import { createSurveyPreview, surveyPreviewXml } from './preview.ts';
import { asyncDeleteStatus, asyncPublishStatus, startAsyncDelete, startAsyncPublish } from './async.ts';
import { sendSuffixedExport } from '../exports/download-routes.ts';
import { attachmentDisposition } from '../../http/conventions.ts';
import { replyAsWritten } from '../../http/documented-reply.ts';
import { AsyncJob, CreatedForm, Form, FormListItem, FormVersion, Labels } from './schemas.ts';

const IdParams = Type.Object({ pk: Type.String({ description: 'form id' }) });
const PageQuery = {
  page: Type.Optional(Type.String({ description: 'page number, or `last`' })),
  page_size: Type.Optional(Type.String({ description: 'items per page (default 1000, at most 10000)' })),
};
type Pk = { Params: { pk: string } };

export function registerFormRoutes(app: FastifyInstance): void {
  registerAsyncFormRoutes(app);
  app.post('/api/v1/forms', {
    config: { access: 'authenticated', upload: true },
    serializerCompiler: replyAsWritten,
    schema: {
      tags: ['forms'],
      response: { 201: CreatedForm },
      summary:
        'Publish an XLSForm: multipart xls_file, or xls_url / dropbox_xls_url; optional owner (username) and project (id). ' +
        'A form the converter refuses: 400 {type: "alert-error", text, errors: [{message, sheet?, row?, column?}]}',
    },
    handler: async (request, reply) =>
      reply.code(201).send(await forms.publishForm(request.ctx, await readBody(request, request.ctx.config.uploadLimitBytes))),
  });

  app.get<{ Querystring: { owner?: string; tags?: string; tag?: string; instances_with_osm?: string; page?: string; page_size?: string } }>('/api/v1/forms', {
    config: { access: 'anyone', cache: 'public' },
    serializerCompiler: replyAsWritten,
    schema: {
      tags: ['forms'],
      summary: 'Forms the caller holds a role on (anonymous: public forms)',
      response: { 200: Type.Array(FormListItem) },
      querystring: Type.Object({
        owner: Type.Optional(Type.String()),
        tags: Type.Optional(Type.String()),
        tag: Type.Optional(Type.String()),
        instances_with_osm: Type.Optional(Type.String()),
        ...PageQuery,
      }),
    },
    handler: async (request, reply) =>
      sendCachedJson(request, reply, async () => {
        // Page over ids first, so only the page's forms are represented.
        const ids = await forms.listFormIds(request.ctx, formListQuery(request.query));
        const { pageItems, link } = paginate(ids, pageWindow(request.query), request.url, request.ctx.baseUrl);
        return { body: await forms.shortForms(request.ctx, pageItems), ...(link ? { headers: { link } } : {}) };
      }),
  });

  app.get('/api/v1/forms/public', {
    config: { access: 'anyone', cache: 'public' },
    serializerCompiler: replyAsWritten,
    schema: { tags: ['forms'], summary: 'Every public form', querystring: Type.Object(PageQuery), response: { 200: Type.Array(FormListItem) } },
    handler: async (request, reply) => sendPage(request, reply, await forms.listPublicForms(request.ctx)),
  });

  app.post('/api/v1/forms/survey_preview', {
    config: { access: 'authenticated' },
    schema: { tags: ['forms'], summary: 'Compile CSV XLSForm text (`body`) for preview', body: Type.Object({ body: Type.Optional(Type.String()) }) },
    handler: (request) => createSurveyPreview(request.ctx, surveyPreviewInput(request.body)),
  });

  const previewQuery = Type.Object({ username: Type.Optional(Type.String()), filename: Type.Optional(Type.String()) });
  app.get<{ Querystring: { username?: string; filename?: string } }>('/api/v1/forms/survey_preview', {
    config: { access: 'anyone' },
    schema: { tags: ['forms'], summary: 'A preview’s XForm as a JSON string', querystring: previewQuery },
    handler: async (request, reply) => reply.type('application/json; charset=utf-8').send(JSON.stringify(await surveyPreviewXml(request.ctx, request.query))),
  });
  app.get<{ Querystring: { username?: string; filename?: string } }>('/api/v1/forms/survey_preview.xml', {
    config: { access: 'anyone' },
    schema: { tags: ['forms'], summary: 'A preview’s XForm', querystring: previewQuery },
    handler: async (request, reply) => reply.type('application/xml; charset=utf-8').send(await surveyPreviewXml(request.ctx, request.query)),
  });

  app.get<Pk>('/api/v1/forms/:pk', {
    config: { access: 'anyone', cache: 'public' },
    serializerCompiler: replyAsWritten,
    schema: {
      tags: ['forms'],
      summary: 'One form; `{pk}.csv|xls|xlsx|csvzip|savzip|kml|osm|zip` downloads its data export (zip: the attached files)',
      params: IdParams,
      response: { 200: Form },
    },
    handler: async (request, reply) => {
      const download = sendSuffixedExport(request, reply);
      if (download) return download;
      return forms.getForm(request.ctx, request.params.pk);
    },
  });

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route<Pk>({
      method,
      url: '/api/v1/forms/:pk',
      config: { access: 'authenticated', upload: true },
      serializerCompiler: replyAsWritten,
      schema: {
        tags: ['forms'],
        response: { 200: Form },
        summary:
          method === 'PUT'
            ? 'Update a form (uuid, description, downloadable, owner, public, public_data, title required)'
            : 'Change form fields, or replace the XLSForm (xls_file / xls_url / dropbox_xls_url) while it has no submissions',
        params: IdParams,
      },
      handler: async (request) =>
        forms.updateForm(request.ctx, request.params.pk, updateFormInput(await readBody(request, request.ctx.config.uploadLimitBytes), method === 'PUT')),
    });
  }

  app.delete<Pk>('/api/v1/forms/:pk', {
    config: { access: 'authenticated' },
    schema: { tags: ['forms'], summary: 'Delete a form', params: IdParams },
    handler: async (request, reply) => {
      await forms.deleteForm(request.ctx, request.params.pk);
      return reply.code(204).send();
    },
  });

  // `/form.json` arrives here with its suffix already stripped by the router's URL rewrite.
  app.get<{ Params: { pk: string; format?: string } }>('/api/v1/forms/:pk/form', {
    config: { access: 'anyone', cache: 'public' },
    schema: { tags: ['forms'], summary: 'The form as JSON (form.json), XML (form.xml) or the uploaded spreadsheet (form.xls)', params: IdParams },
    handler: async (request, reply) => {
      const file = await forms.formRepresentation(request.ctx, request.params.pk, 'json');
      return reply.type(file.contentType).header('content-disposition', attachmentDisposition(file.fileName)).send(file.body);
    },
  });
  app.get<{ Params: { pk: string; format: string } }>('/api/v1/forms/:pk/form.:format', {
    config: { access: 'anyone', cache: 'public' },
    schema: { hide: true, params: Type.Object({ pk: Type.String(), format: Type.String() }) },
    handler: async (request, reply) => {
      const file = await forms.formRepresentation(request.ctx, request.params.pk, request.params.format);
      return reply.type(file.contentType).header('content-disposition', attachmentDisposition(file.fileName)).send(file.body);
    },
  });

  app.get<Pk>('/api/v1/forms/:pk/versions', {
    config: { access: 'anyone', cache: 'public' },
    serializerCompiler: replyAsWritten,
    schema: { tags: ['forms'], summary: 'The form’s published versions', params: IdParams, response: { 200: Type.Array(FormVersion) } },
    handler: (request) => forms.formVersions(request.ctx, request.params.pk),
  });
  // `/versions/{v}.json` arrives with its suffix stripped; `.xml`, `.xls` and `.xlsx` are read here.
  app.get<{ Params: { pk: string; version: string } }>('/api/v1/forms/:pk/versions/:version', {
    config: { access: 'anyone', cache: 'public' },
    schema: {
      tags: ['forms'],
      summary: 'One published version: its form JSON, its XForm with `.xml`, or its XLSForm with `.xls` / `.xlsx`',
      params: Type.Object({ pk: Type.String(), version: Type.String() }),
    },
    handler: async (request, reply) => {
      const { version, format } = versionAndFormat(request.params.version);
      const file = await forms.formVersion(request.ctx, request.params.pk, version, format);
      if (format === 'xls' || format === 'xlsx') reply.header('content-disposition', attachmentDisposition(file.fileName));
      return reply.type(file.contentType).send(file.body);
    },
  });

  app.get<Pk>('/api/v1/forms/:pk/labels', {
    config: { access: 'anyone' },
    serializerCompiler: replyAsWritten,
    schema: { tags: ['forms'], summary: 'The form’s tags', params: IdParams, response: { 200: Labels } },
    handler: (request) => forms.formLabels(request.ctx, request.params.pk),
  });
  app.post<Pk>('/api/v1/forms/:pk/labels', {
    config: { access: 'authenticated' },
    serializerCompiler: replyAsWritten,
    schema: { tags: ['forms'], summary: 'Add tags (comma- or space-separated `tags`)', params: IdParams, response: { 200: Labels, 201: Labels } },
    handler: async (request, reply) => {
      const result = await forms.addFormLabels(request.ctx, request.params.pk, labelsInput(request.body));
      return reply.code(result.status).send(result.tags);
    },
  });
  app.delete<{ Params: { pk: string; tag: string } }>('/api/v1/forms/:pk/labels/:tag', {
    config: { access: 'authenticated' },
    serializerCompiler: replyAsWritten,
    schema: {
      tags: ['forms'],
      summary: 'Remove a tag: 200 with the rest, 202 if it was not there',
      params: Type.Object({ pk: Type.String(), tag: Type.String() }),
      response: { 200: Labels, 202: Labels },
    },
    handler: async (request, reply) => {
      const result = await forms.removeFormLabel(request.ctx, request.params.pk, request.params.tag);
      return reply.code(result.status).send(result.tags);
    },
  });

  app.post<Pk>('/api/v1/forms/:pk/share', {
    config: { access: 'authenticated' },
    schema: { tags: ['forms'], summary: 'Give users (username or comma-separated usernames) a role on this form', params: IdParams },
    handler: async (request, reply) => {
      await forms.shareForm(request.ctx, request.params.pk, shareFormInput(request.body));
      return reply.code(204).send();
    },
  });

  app.post<Pk>('/api/v1/forms/:pk/clone', {
    config: { access: 'authenticated' },
    serializerCompiler: replyAsWritten,
    schema: { tags: ['forms'], summary: 'Copy the form into `username`’s account (optionally into project_id)', params: IdParams, response: { 201: Form } },
    handler: async (request, reply) => reply.code(201).send(await forms.cloneForm(request.ctx, request.params.pk, cloneFormInput(request.body))),
  });
}

export function registerAsyncFormRoutes(app: FastifyInstance): void {
  app.post('/api/v1/forms/create_async', {
    config: { access: 'authenticated', upload: true },
    serializerCompiler: replyAsWritten,
    schema: { tags: ['forms'], summary: 'Publish an XLSForm (multipart xls_file) in the background; answers 202 {job_uuid}', response: { 202: AsyncJob } },
    handler: async (request, reply) =>
      reply.code(202).send(await startAsyncPublish(request.ctx, await readBody(request, request.ctx.config.uploadLimitBytes))),
  });
  // The spec writes the poll with a trailing slash (`create_async/?job_uuid=`); both answer.
  for (const url of ['/api/v1/forms/create_async', '/api/v1/forms/create_async/']) {
    app.get<{ Querystring: { job_uuid?: string } }>(url, {
      config: { access: 'authenticated' },
      serializerCompiler: replyAsWritten,
      schema: {
        tags: ['forms'],
        summary: 'Poll a create_async job: 202 {job_status} while it runs, 201 with the form when done',
        response: { 201: CreatedForm, 202: AsyncJob },
        querystring: Type.Object({ job_uuid: Type.Optional(Type.String()) }),
        ...(url.endsWith('/') ? { hide: true } : {}),
      },
      handler: async (request, reply) => {
        const result = await asyncPublishStatus(request.ctx, request.query.job_uuid);
        return reply.code(result.status).send(result.body);
      },
    });
  }
  for (const method of ['DELETE', 'POST'] as const) {
    app.route<Pk>({
      method,
      url: '/api/v1/forms/:pk/delete_async',
      config: { access: 'authenticated' },
      serializerCompiler: replyAsWritten,
      schema: { tags: ['forms'], summary: 'Delete the form in the background; answers 202 {job_uuid}', params: IdParams, response: { 202: AsyncJob } },
      handler: async (request, reply) => reply.code(202).send(await startAsyncDelete(request.ctx, request.params.pk)),
    });
  }
  app.get<{ Params: { pk: string }; Querystring: { job_uuid?: string } }>('/api/v1/forms/:pk/delete_async', {
    config: { access: 'authenticated' },
    serializerCompiler: replyAsWritten,
    schema: {
      tags: ['forms'],
      summary: 'Poll a delete_async job',
      response: { 202: AsyncJob },
      params: IdParams,
      querystring: Type.Object({ job_uuid: Type.Optional(Type.String()) }),
    },
    handler: async (request, reply) => reply.code(202).send(await asyncDeleteStatus(request.ctx, request.query.job_uuid)),
  });
}

/** `2026010101.xml` → the version and the representation its suffix asks for (JSON without one). */
function versionAndFormat(raw: string): { version: string; format: forms.VersionFormat } {
  const suffix = /\.(xml|xlsx|xls)$/.exec(raw)?.[1];
  if (suffix === 'xml' || suffix === 'xls' || suffix === 'xlsx') return { version: raw.slice(0, -suffix.length - 1), format: suffix };
  return { version: raw, format: 'json' };
}
