// A form's OData v4 feed at /api/v1/forms/{pk}/odata.svc (Excel, Power BI, R, Tableau): the
// service document, $metadata, and one entity set for the records and one per repeat.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import * as odata from './service.ts';

const ODATA_JSON = 'application/json; odata.metadata=minimal; odata.streaming=true; charset=utf-8';
const Params = Type.Object({ pk: Type.String({ description: 'form id' }) });
const PathParams = Type.Object({
  pk: Type.String({ description: 'form id' }),
  '*': Type.String({ description: "resource path: Submissions, Submissions.<repeat path with dots>, Submissions('uuid:…'), Submissions('uuid:…')/<repeat>, …" }),
});

function serviceUrl(request: FastifyRequest<{ Params: { pk: string } }>): string {
  return `${request.ctx.baseUrl}/api/v1/forms/${encodeURIComponent(request.params.pk)}/odata.svc`;
}

function maxPageSize(request: FastifyRequest): number | undefined {
  const prefer = request.headers['prefer'];
  const match = /odata\.maxpagesize\s*=\s*(\d{1,9})/i.exec(Array.isArray(prefer) ? prefer.join(',') : (prefer ?? ''));
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** The path after `odata.svc/`, undecoded (keys may hold an encoded `/`). */
function rawResourcePath(url: string): string {
  const path = url.split('?', 1)[0] ?? '';
  const at = path.indexOf('/odata.svc/');
  return at < 0 ? '' : path.slice(at + '/odata.svc/'.length);
}

function decodePath(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

async function answering<T>(request: FastifyRequest, reply: FastifyReply, work: () => Promise<T>): Promise<T> {
  reply.header('odata-version', '4.0');
  try {
    return await work();
  } catch (error) {
    throw odata.asODataError(request.ctx, error);
  }
}

export function registerODataRoutes(app: FastifyInstance): void {
  const config = { access: 'anyone' as const };
  const serviceSchema = { tags: ['odata'], summary: 'OData service document of a form’s feed (Basic or Token; the data API’s permissions)', params: Params };
  for (const url of ['/api/v1/forms/:pk/odata.svc', '/api/v1/forms/:pk/odata.svc/']) {
    app.get<{ Params: { pk: string } }>(url, {
      config,
      schema: serviceSchema,
      handler: (request, reply) =>
        answering(request, reply, async () => {
          const doc = await odata.getServiceDocument(request.ctx, request.params.pk, serviceUrl(request));
          return reply.type(ODATA_JSON).send(doc);
        }),
    });
  }
  app.get<{ Params: { pk: string } }>('/api/v1/forms/:pk/odata.svc/$metadata', {
    config,
    schema: { tags: ['odata'], summary: 'CSDL XML of a form’s feed: Submissions, one entity type per repeat, groups as complex types', params: Params },
    handler: (request, reply) =>
      answering(request, reply, async () => {
        const xml = await odata.getMetadata(request.ctx, request.params.pk);
        return reply.type('application/xml; charset=utf-8').send(xml);
      }),
  });
  app.get<{ Params: { pk: string; '*': string }; Querystring: Record<string, string | undefined> }>('/api/v1/forms/:pk/odata.svc/*', {
    config,
    schema: {
      tags: ['odata'],
      summary: 'A page of an entity set, the rows below one entity, or one entity by key: $top $skip $count $select $orderby $filter $expand; @odata.nextLink continues',
      description:
        'Submissions: the records (keyed by `__id`, meta fields under `__system`); Submissions.<repeat>: a repeat’s rows, with `__Submissions-id`. ' +
        "Submissions('uuid:…') is one record, Submissions('uuid:…')/<repeat> its rows, Submissions.<repeat>('uuid:…/<repeat>/2') one row (and on down). " +
        '$filter (eq ne gt ge lt le, and or not, year month day hour minute second date now, contains startswith endswith, tolower toupper) and $orderby apply to every set. ' +
        `Pages hold at most ${odata.PAGE_SIZE} entities (or \`Prefer: odata.maxpagesize\`); errors are \`{"error": {"code", "message"}}\`.`,
      params: PathParams,
    },
    handler: (request, reply) =>
      answering(request, reply, async () => {
        const resourcePath = rawResourcePath(request.url);
        const feed = await odata.openFeed(request.ctx, request.params.pk, decodePath(resourcePath), {
          query: request.query,
          serviceUrl: serviceUrl(request),
          resourcePath,
          maxPageSize: maxPageSize(request),
        });
        return reply.type(ODATA_JSON).send(Readable.from(feed.chunks));
      }),
  });
}
