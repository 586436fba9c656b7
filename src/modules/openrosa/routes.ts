// OpenRosa routes for ODK Collect, Enketo and Briefcase: form list, form download, manifest, media.
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import type { RequestContext } from '../../context.ts';
import * as openrosa from './service.ts';
import { attachmentDisposition } from '../../http/conventions.ts';

const XML = 'text/xml; charset=utf-8';

type Strings = Record<string, string | undefined>;
type Produce = (params: Strings, query: Strings, ctx: RequestContext) => Promise<string | Uint8Array>;

/**
 * GET answers with the document; HEAD (OpenRosa's probe) with the OpenRosa headers: 204 for the
 * form lists, as onadata's list views answer, and 200 with the document's type for a single
 * document (a form, a manifest), as its detail views do.
 */
function getAndHead(app: FastifyInstance, url: string, summary: string, params: TSchema | undefined, produce: Produce, contentType = XML, headStatus: 200 | 204 = 200): void {
  const config = { access: 'anyone' as const, openrosa: true };
  const schema = { tags: ['openrosa'], summary, ...(params ? { params } : {}) };
  const run = (request: FastifyRequest): Promise<string | Uint8Array> =>
    produce(request.params as Strings, request.query as Strings, request.ctx);
  app.route({
    method: 'GET',
    url,
    exposeHeadRoute: false,
    config,
    schema,
    handler: async (request, reply: FastifyReply) => reply.type(contentType).send(await run(request)),
  });
  app.route({
    method: 'HEAD',
    url,
    config,
    schema: { ...schema, hide: true },
    handler: async (request, reply: FastifyReply) => {
      await run(request);
      return headStatus === 204 ? reply.code(204).send() : reply.code(200).type(contentType).send();
    },
  });
}

const Form = Type.Object({ pk: Type.String() });
const OwnerForm = Type.Object({ username: Type.String(), pk: Type.String() });

export function registerOpenRosaRoutes(app: FastifyInstance): void {
  for (const url of ['/formList', '/api/v1/formlist']) {
    getAndHead(app, url, 'OpenRosa form list (authenticated)', undefined, (_p, q, ctx) => openrosa.formList(ctx, undefined, q['formID']), XML, 204);
  }
  getAndHead(
    app,
    '/:username/formList',
    'OpenRosa form list of an account',
    Type.Object({ username: Type.String() }),
    (p, q, ctx) => openrosa.formList(ctx, p['username'], q['formID']),
    XML,
    204,
  );
  getAndHead(app, '/forms/:pk/formList', 'OpenRosa form list of one form (anonymous unless its account requires auth)', Form, (p, _q, ctx) =>
    openrosa.formListOfForm(ctx, p['pk'] ?? ''),
    XML,
    204,
  );
  // The same form's XForm and manifest by its id alone, for the web form pages (webforms/urls.ts).
  getAndHead(app, '/forms/:pk/form.xml', 'A form’s XForm (anonymous unless its account requires auth)', Form, (p, _q, ctx) =>
    openrosa.formXmlOfForm(ctx, p['pk'] ?? ''),
  );
  getAndHead(app, '/forms/:pk/xformsManifest', 'A form’s media manifest (anonymous unless its account requires auth)', Form, (p, _q, ctx) =>
    openrosa.manifestOfForm(ctx, p['pk'] ?? ''),
  );
  getAndHead(app, '/:username/forms/:pk/form.xml', 'Download a form’s XForm', OwnerForm, (p, _q, ctx) =>
    openrosa.formXml(ctx, p['username'], p['pk'] ?? ''),
  );
  getAndHead(app, '/api/v1/formlist/:pk', 'Download a form’s XForm', Form, (p, _q, ctx) => openrosa.formXml(ctx, undefined, p['pk'] ?? ''));
  getAndHead(app, '/:username/xformsManifest/:pk', 'A form’s media manifest', OwnerForm, (p, _q, ctx) =>
    openrosa.manifest(ctx, p['username'], p['pk'] ?? ''),
  );
  for (const url of ['/xformsManifest/:pk', '/api/v1/formlist/:pk/manifest']) {
    getAndHead(app, url, 'A form’s media manifest', Form, (p, _q, ctx) => openrosa.manifest(ctx, undefined, p['pk'] ?? ''));
  }
  for (const url of ['/:username/xformsMedia/:pk/:filename', '/xformsMedia/:pk/:filename']) {
    app.get<{ Params: Strings; Querystring: Strings }>(url, {
      config: { access: 'anyone', openrosa: true },
      schema: {
        tags: ['openrosa'],
        summary: 'A form media file: itemsets.csv, or a media entry by id as the manifest gives it (a linked file redirects)',
        params: Type.Object({ ...(url.startsWith('/:username') ? { username: Type.String() } : {}), pk: Type.String(), filename: Type.String() }),
      },
      handler: async (request, reply) => {
        const p = request.params;
        const media = await openrosa.mediaFile(request.ctx, p['username'], p['pk'] ?? '', p['filename'] ?? '', request.query as Strings);
        if (media.kind === 'redirect') return reply.redirect(media.location, 302);
        if (media.kind === 'export') {
          return reply
            .type('text/csv; charset=utf-8')
            .header('content-disposition', attachmentDisposition(media.fileName))
            .header('cache-control', 'private, no-store')
            .send(Readable.from(media.file.chunks));
        }
        const sent = reply.type(media.contentType).header('content-disposition', attachmentDisposition(media.fileName)).header('x-content-type-options', 'nosniff');
        if (media.kind === 'text') return sent.send(media.content);
        return sent.header('content-length', media.size).send(Readable.from(media.content));
      },
    });
  }
}
