// Routes of the Briefcase Aggregate API, as onadata serves it to ODK Briefcase: submissionList,
// downloadSubmission (with or without the account in the path) and formUpload.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { openRosaMessage } from '../../http/conventions.ts';
import { readBody } from '../../http/multipart.ts';
import { formUpload } from './form-upload.ts';
import * as briefcase from './service.ts';

const XML = 'text/xml; charset=utf-8';
const Account = Type.Object({ username: Type.String() });

const ListQuery = Type.Object({
  formId: Type.Optional(Type.String({ description: 'the form’s id_string' })),
  numEntries: Type.Optional(Type.String({ description: 'records per page (default 100, at most 10,000)' })),
  cursor: Type.Optional(Type.String({ description: 'the resumptionCursor of the previous page; empty for the first' })),
  includeIncomplete: Type.Optional(Type.String({ description: 'sent by Briefcase; every stored record is complete' })),
});
const DownloadQuery = Type.Object({
  formId: Type.Optional(Type.String({ description: 'id_string[@version=… and @uiVersion=…]/root[@key=uuid:…]' })),
});

type Strings = Record<string, string | undefined>;

export function registerBriefcaseRoutes(app: FastifyInstance): void {
  for (const prefix of ['/:username', '']) {
    const params = prefix ? { params: Account } : {};
    app.get<{ Params: Strings; Querystring: briefcase.SubmissionListQuery }>(`${prefix}/view/submissionList`, {
      config: { access: 'anyone', openrosa: true },
      schema: { tags: ['openrosa'], summary: 'Briefcase: a page of a form’s record ids (idChunk) and the cursor of the next page', ...params, querystring: ListQuery },
      handler: async (request, reply) => reply.type(XML).send(await briefcase.submissionList(request.ctx, request.params['username'], request.query)),
    });
    app.get<{ Params: Strings; Querystring: { formId?: string } }>(`${prefix}/view/downloadSubmission`, {
      config: { access: 'anyone', openrosa: true },
      schema: { tags: ['openrosa'], summary: 'Briefcase: one record’s submission XML with its files’ links', ...params, querystring: DownloadQuery },
      handler: async (request, reply) =>
        reply.type(XML).send(await briefcase.downloadSubmission(request.ctx, request.params['username'], request.query.formId)),
    });
    const uploadConfig = { access: 'authenticated' as const, upload: true, openrosa: true };
    app.post<{ Params: Strings }>(`${prefix}/formUpload`, {
      config: uploadConfig,
      schema: {
        tags: ['openrosa'],
        summary: 'Briefcase: publish an XForm (form_def_file) with its media files; a later part with the same form adds its files',
        ...params,
      },
      handler: async (request, reply) => {
        const body = await readBody(request, request.ctx.config.uploadLimitBytes);
        const idString = await formUpload(request.ctx, request.params['username'], body);
        return reply.code(201).type(XML).send(openRosaMessage(`${idString} successfully published.`));
      },
    });
    app.route<{ Params: Strings }>({
      method: 'HEAD',
      url: `${prefix}/formUpload`,
      config: uploadConfig,
      schema: { tags: ['openrosa'], hide: true, ...params },
      handler: async (_request, reply) => reply.code(204).send(),
    });
  }
}
