// OpenRosa submission routes (ODK Collect, Enketo, Briefcase).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { errors } from '../../errors.ts';
import { isAuthenticated } from '../../access/index.ts';
import { findActiveUserByUsername } from '../accounts/repository.ts';
import { attachmentDisposition, openRosaMessage } from '../../http/conventions.ts';
import { deleteRecordsInput, labelsInput } from './inputs.ts';
import { pageLinks } from '../../http/pagination.ts';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import * as data from './data.ts';
import { ownerOfFormId } from '../openrosa/service.ts';
import { recordsGeoJson } from './geojson.ts';
import { findFormDefinition, findLiveFormByIdString } from '../forms/repository.ts';
import { buildFormModel } from '../../lib/form-model/model.ts';
import { jsonSubmissionToXml, readJsonSubmission } from './json-submission.ts';
import { receiveSubmission, type SubmissionOutcome, type SubmissionTarget } from './receive.ts';
import { bodyLeftUnread, refuseBeforeBody, withSubmissionUpload } from './upload.ts';
import { sendSuffixedExport } from '../exports/download-routes.ts';
import { replyAsWritten } from '../../http/documented-reply.ts';
import { DataFormEntry, DataRecord, DeletedRecords, Labels, SubmissionAnswer } from './schemas.ts';

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
}

function successXml(outcome: SubmissionOutcome): string {
  const date = escapeAttribute(outcome.submissionDate);
  return (
    `<?xml version='1.0' encoding='UTF-8' ?>\n<OpenRosaResponse xmlns="http://openrosa.org/http/response"><message>Successful submission.</message>` +
    `<submissionMetadata xmlns="http://www.opendatakit.org/xforms" id="${escapeAttribute(outcome.form.id_string)}" instanceID="uuid:${escapeAttribute(outcome.uuid)}" ` +
    `submissionDate="${date}" isComplete="true" markedAsCompleteDate="${date}"${outcome.form.encrypted ? ' encrypted="yes"' : ''}/></OpenRosaResponse>`
  );
}

/** onadata's JSON submissions: `{"id": "<id_string>", "submission": {...}}`, answered in JSON. */
async function answerJson(request: FastifyRequest, reply: FastifyReply, target: SubmissionTarget): Promise<FastifyReply> {
  const ctx = request.ctx;
  if (target.ownerless && !isAuthenticated(ctx.actor)) throw errors.notAuthenticated(ctx.challenge);
  const check = readJsonSubmission(request.body);
  if (!check.ok) throw errors.jsonSubmissionInvalid(check.body);
  const account = target.username !== undefined ? await findActiveUserByUsername(ctx.db, target.username) : isAuthenticated(ctx.actor) ? ctx.actor.user : undefined;
  const form = account && check.idString ? await findLiveFormByIdString(ctx.db, account.id, check.idString) : undefined;
  if (!form) throw errors.noMatch('XForm');
  const { rootName } = buildFormModel((await findFormDefinition(ctx.db, form.id)).json);
  const xml = jsonSubmissionToXml(check.submission, { rootName, idString: form.id_string, uuid: randomUUID() });
  const outcome = await receiveSubmission(ctx, target, { xml: Buffer.from(xml), media: [] });
  // onadata turns a duplicate JSON submission into a validation error.
  if (outcome.kind === 'duplicate') throw errors.duplicateSubmission();
  return reply.code(201).send({
    message: 'Successful submission.',
    formid: form.id_string,
    encrypted: form.encrypted,
    instanceID: `uuid:${outcome.uuid}`,
    submissionDate: outcome.submissionDate,
    markedAsCompleteDate: outcome.submissionDate,
  });
}

async function answer(request: FastifyRequest, reply: FastifyReply, target: SubmissionTarget): Promise<FastifyReply> {
  const ctx = request.ctx;
  reply.header('location', `${ctx.baseUrl}${request.url.split('?')[0] ?? ''}`);
  if (request.method === 'HEAD') {
    await refuseBeforeBody(ctx, target, true);
    return reply.code(204).send();
  }
  if (String(request.headers['content-type'] ?? '').startsWith('application/json')) return answerJson(request, reply, target);
  try {
    // Who is asking, and whether they may submit here, is settled before any of the body is read
    // (as onadata authenticates first): a refused caller's body costs neither memory nor disk.
    await refuseBeforeBody(ctx, target);
    const outcome = await withSubmissionUpload(ctx, request, target, (upload) => receiveSubmission(ctx, target, upload));
    reply.code(outcome.status).type('text/xml; charset=utf-8');
    return reply.send(outcome.kind === 'duplicate' ? openRosaMessage('Duplicate submission') : successXml(outcome));
  } catch (error) {
    // The rest of a body left unread would be taken for the next request on this connection.
    if (bodyLeftUnread(request)) reply.header('connection', 'close');
    throw error;
  }
}

export function registerSubmissionRoutes(app: FastifyInstance): void {
  const config = { access: 'anyone' as const, openrosa: true, upload: true };
  for (const url of ['/submission', '/api/v1/submissions']) {
    app.route({
      method: ['POST', 'HEAD'],
      url,
      config,
      serializerCompiler: replyAsWritten,
      schema: {
        tags: ['submissions'],
        summary: 'Receive an OpenRosa submission (multipart xml_submission_file plus media), or a JSON one ({id, submission}); credentials required',
        response: { 201: SubmissionAnswer },
      },
      handler: (request, reply) => answer(request, reply, { ownerless: true }),
    });
  }
  app.route<{ Params: { username: string } }>({
    method: ['POST', 'HEAD'],
    url: '/:username/submission',
    config,
    serializerCompiler: replyAsWritten,
    schema: {
      tags: ['submissions'],
      summary: 'Receive an OpenRosa submission for a form of this account (anonymous unless the account requires auth)',
      params: Type.Object({ username: Type.String() }),
      response: { 201: SubmissionAnswer },
    },
    handler: (request, reply) => answer(request, reply, { ownerless: false, username: request.params.username }),
  });
  // onadata's form-scoped address, which the web forms post to: the form's owner as above, and
  // the instance must belong to this very form.
  app.route<{ Params: { pk: string } }>({
    method: ['POST', 'HEAD'],
    url: '/forms/:pk/submission',
    config,
    serializerCompiler: replyAsWritten,
    schema: {
      tags: ['submissions'],
      summary: 'Receive an OpenRosa submission for this form (anonymous unless its account requires auth)',
      params: Type.Object({ pk: Type.String() }),
      response: { 201: SubmissionAnswer },
    },
    handler: async (request, reply) => {
      const owner = await ownerOfFormId(request.ctx, request.params.pk);
      return answer(request, reply, { ownerless: false, username: owner.username, formId: Number(request.params.pk) });
    },
  });
}

export function registerDataRoutes(app: FastifyInstance): void {
  const DataParams = Type.Object({ pk: Type.String({ description: 'form id' }) });
  const RecordParams = Type.Object({ pk: Type.String(), dataid: Type.String() });
  app.get('/api/v1/data', {
    config: { access: 'anyone' },
    serializerCompiler: replyAsWritten,
    schema: { tags: ['data'], summary: 'Forms whose data the caller may read', response: { 200: Type.Array(DataFormEntry) } },
    handler: (request) => data.formsWithData(request.ctx),
  });
  app.get('/api/v1/data/public', {
    config: { access: 'anyone' },
    serializerCompiler: replyAsWritten,
    schema: { tags: ['data'], summary: 'Forms whose data is public (public_data), for anyone', response: { 200: Type.Array(DataFormEntry) } },
    handler: (request) => data.formsWithPublicData(request.ctx),
  });
  app.get<{ Params: { pk: string }; Querystring: data.DataQuery & { geo_field?: string; title?: string } }>('/api/v1/data/:pk', {
    config: { access: 'anyone' },
    serializerCompiler: replyAsWritten,
    schema: {
      tags: ['data'],
      summary: 'A form’s records: query (JSON), fields, sort, start/limit, page/page_size',
      params: DataParams,
      querystring: Type.Object({
        query: Type.Optional(Type.String()),
        fields: Type.Optional(Type.String()),
        sort: Type.Optional(Type.String()),
        start: Type.Optional(Type.String()),
        limit: Type.Optional(Type.String()),
        page: Type.Optional(Type.String()),
        page_size: Type.Optional(Type.String()),
        geo_field: Type.Optional(Type.String({ description: '.geojson: the geopoint field to map' })),
        title: Type.Optional(Type.String({ description: '.geojson: the field shown as the feature title' })),
        simple_style: Type.Optional(Type.String({ description: '.geojson: `true` makes a single point a Point rather than a GeometryCollection' })),
      }),
      response: { 200: Type.Array(DataRecord) },
    },
    handler: async (request, reply) => {
      // `/api/v1/data/{pk}.geojson` arrives here with the suffix in the id.
      const geo = /^(\d+)\.geojson$/.exec(request.params.pk);
      if (geo?.[1]) {
        const collection = await recordsGeoJson(request.ctx, geo[1], request.query);
        const link = pageLinks(request.ctx.baseUrl, request.url, collection.place);
        if (link) reply.header('link', link);
        return reply.type('application/geo+json').send(collection.body);
      }
      const download = sendSuffixedExport(request, reply);
      if (download) return download;
      const page = await data.listRecords(request.ctx, request.params.pk, request.query);
      const link = pageLinks(request.ctx.baseUrl, request.url, page.place);
      if (link) reply.header('link', link);
      return reply.type('application/json; charset=utf-8').send(Readable.from(page.chunks));
    },
  });
  app.get<{ Params: { pk: string; dataid: string } }>('/api/v1/data/:pk/:dataid/labels', {
    config: { access: 'anyone' },
    serializerCompiler: replyAsWritten,
    schema: { tags: ['data'], summary: 'A record’s tags', params: RecordParams, response: { 200: Labels } },
    handler: (request) => data.recordLabels(request.ctx, request.params.pk, request.params.dataid),
  });
  app.post<{ Params: { pk: string; dataid: string } }>('/api/v1/data/:pk/:dataid/labels', {
    config: { access: 'authenticated' },
    serializerCompiler: replyAsWritten,
    schema: { tags: ['data'], summary: 'Tag a record (comma- or space-separated `tags`; editors)', params: RecordParams, response: { 200: Labels, 201: Labels } },
    handler: async (request, reply) => {
      const result = await data.addRecordLabels(request.ctx, request.params.pk, request.params.dataid, labelsInput(request.body));
      return reply.code(result.status).send(result.tags);
    },
  });
  app.delete<{ Params: { pk: string; dataid: string; tag: string } }>('/api/v1/data/:pk/:dataid/labels/:tag', {
    config: { access: 'authenticated' },
    serializerCompiler: replyAsWritten,
    schema: {
      tags: ['data'],
      summary: 'Remove a record’s tag: 200 with the rest, 202 if it was not there',
      params: Type.Object({ pk: Type.String(), dataid: Type.String(), tag: Type.String() }),
      response: { 200: Labels, 202: Labels },
    },
    handler: async (request, reply) => {
      const result = await data.removeRecordLabel(request.ctx, request.params.pk, request.params.dataid, request.params.tag);
      return reply.code(result.status).send(result.tags);
    },
  });
  app.delete<{ Params: { pk: string } }>('/api/v1/data/:pk', {
    config: { access: 'authenticated' },
    serializerCompiler: replyAsWritten,
    schema: {
      tags: ['data'],
      summary: 'Delete records: instance_ids=1,2,3 or delete_all=True (those who may delete records)',
      params: DataParams,
      response: { 200: DeletedRecords },
    },
    handler: (request) => data.deleteRecords(request.ctx, request.params.pk, deleteRecordsInput(request.query, request.body)),
  });
  app.get<{ Params: { pk: string; dataid: string } }>('/api/v1/data/:pk/:dataid', {
    config: { access: 'anyone' },
    serializerCompiler: replyAsWritten,
    schema: { tags: ['data'], summary: 'One record (`.xml`: as submitted)', params: RecordParams, response: { 200: DataRecord } },
    handler: async (request, reply) => {
      // `/api/v1/data/{pk}/{dataid}.xml` arrives with the suffix in the record id.
      const xml = /^(\d+)\.xml$/.exec(request.params.dataid);
      if (xml?.[1]) return reply.type('text/xml; charset=utf-8').send(await data.getRecordXml(request.ctx, request.params.pk, xml[1]));
      return reply.type('application/json; charset=utf-8').send(await data.getRecord(request.ctx, request.params.pk, request.params.dataid));
    },
  });
  app.get<{ Params: { pk: string; dataid: string } }>('/api/v1/data/:pk/:dataid/history', {
    config: { access: 'anyone' },
    serializerCompiler: replyAsWritten,
    schema: { tags: ['data'], summary: 'A record’s earlier versions (edits archive them), oldest first', params: RecordParams, response: { 200: Type.Array(DataRecord) } },
    handler: (request) => data.recordHistory(request.ctx, request.params.pk, request.params.dataid),
  });
  app.delete<{ Params: { pk: string; dataid: string } }>('/api/v1/data/:pk/:dataid', {
    config: { access: 'authenticated' },
    schema: { tags: ['data'], summary: 'Delete a record', params: RecordParams },
    handler: async (request, reply) => {
      await data.deleteRecord(request.ctx, request.params.pk, request.params.dataid);
      return reply.code(204).send();
    },
  });
  app.get<{ Params: { id: string } }>('/api/v1/files/:id', {
    config: { access: 'anyone' },
    schema: { tags: ['data'], summary: 'A submission attachment', params: Type.Object({ id: Type.String() }) },
    handler: async (request, reply) => {
      const file = await data.attachmentFile(request.ctx, request.params.id);
      return reply
        .type(file.mimetype)
        .header('content-disposition', attachmentDisposition(file.name))
        .header('content-length', file.size)
        .send(Readable.from(file.content));
    },
  });
}
