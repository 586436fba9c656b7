// A form's OData feed: the service document, $metadata and the entity sets' pages. Who reads what
// is the data API's decision (loadDataForm); the records are read through the data API's queries,
// a chunk at a time, and each page is written as it is read.
import { sql } from 'kysely';
import type { RequestContext } from '../../context.ts';
import { AppError, isAppError } from '../../errors.ts';
import { isAuthenticated } from '../../access/index.ts';
import { findFormDefinition } from '../forms/repository.ts';
import { loadDataForm } from '../submissions/data.ts';
import * as records from '../submissions/repository.ts';
import { metadataXml, serviceDocument } from './csdl.ts';
import { recordEntity, repeatRows, selectProperties, type EntityContext } from './entities.ts';
import { FilterError } from './filter.ts';
import { filterCondition, orderClause } from './filter-sql.ts';
import { findProperty, odataModelOf, parentKeyName, ROOT_SET, SYSTEM_FIELDS, type EntityModel, type ODataModel, type Property } from './model.ts';
import { encodeSkipToken, OptionError, parseFeedOptions, type FeedOptions, type SkipToken } from './options.ts';
import { countRepeatRows } from './repository.ts';

/** Entities per page when the client asks for no smaller one (see bench/RESULTS.md). */
export const PAGE_SIZE = 5000;
/** Records read per query while a page is written. */
const CHUNK = 500;

/** An OData error body (`{"error": {"code", "message"}}`), with the status and headers of the error it stands for. */
export function odataError(status: number, message: string, headers: Readonly<Record<string, string>> = {}): AppError {
  return new AppError(status, { error: { code: String(status), message } }, headers);
}

/** Any error of a feed request as an OData error body; an anonymous caller refused is asked for credentials. */
export function asODataError(ctx: RequestContext, error: unknown): unknown {
  if (error instanceof OptionError || error instanceof FilterError) return odataError(400, error.message);
  if (!isAppError(error)) return error;
  if (!isAuthenticated(ctx.actor) && (error.status === 403 || error.status === 404 || error.status === 401)) {
    // Excel and Power BI ask for a password on a Basic challenge.
    return odataError(401, 'Authentication credentials were not provided.', { 'www-authenticate': 'Basic realm="Gather", charset="UTF-8"' });
  }
  const body = error.body;
  const message = !Array.isArray(body) && typeof body['detail'] === 'string' ? body['detail'] : error.message;
  return odataError(error.status, message, error.headers);
}

interface Feedable {
  formId: number;
  submittedBy: number | undefined;
  model: ODataModel;
}

async function loadFeed(ctx: RequestContext, rawId: string): Promise<Feedable> {
  const { visible, submittedBy } = await loadDataForm(ctx, rawId);
  const definition = await findFormDefinition(ctx.db, visible.form.id);
  return { formId: visible.form.id, submittedBy, model: odataModelOf(definition.json) };
}

export async function getServiceDocument(ctx: RequestContext, rawId: string, serviceUrl: string): Promise<Record<string, unknown>> {
  return serviceDocument((await loadFeed(ctx, rawId)).model, serviceUrl);
}

export async function getMetadata(ctx: RequestContext, rawId: string): Promise<string> {
  return metadataXml((await loadFeed(ctx, rawId)).model);
}

export interface FeedRequest {
  readonly query: Readonly<Record<string, string | undefined>>;
  readonly serviceUrl: string;
  /** `Prefer: odata.maxpagesize=n`, when sent. */
  readonly maxPageSize: number | undefined;
}

/** Names of the repeats an entity's rows link to, through its groups. */
function repeatNames(properties: readonly Property[]): string[] {
  return properties.flatMap((p) => (p.kind === 'repeat' ? [p.name] : p.kind === 'group' ? repeatNames(p.properties) : []));
}

function checkSelect(entity: EntityModel, select: ReadonlyArray<readonly string[]>): void {
  for (const path of select) {
    const [first = '', second] = path;
    if (first === '__id' && path.length === 1) continue;
    if (entity.parents.length === 0 && first === '__system' && (second === undefined || SYSTEM_FIELDS.some((f) => f.name === second)) && path.length <= 2) continue;
    if (path.length === 1 && entity.parents.some((p) => parentKeyName(p) === first)) continue;
    if (!findProperty(entity, path)) throw new OptionError(`$select: ${path.join('/')} is not a property of ${entity.setName}.`);
  }
}

function expandContext(entity: EntityModel, options: FeedOptions): EntityContext {
  if (options.expand === '*') return { expand: '*' };
  const known = repeatNames(entity.properties);
  for (const name of options.expand) if (!known.includes(name)) throw new OptionError(`$expand: ${name} is not a repeat of ${entity.setName}.`);
  return { expand: new Set(options.expand) };
}

function nextLink(request: FeedRequest, setName: string, top: number | undefined, token: SkipToken): string {
  const params: string[] = [];
  for (const key of ['$filter', '$orderby', '$select', '$expand', '$count'] as const) {
    const value = request.query[key];
    if (value !== undefined && value !== '') params.push(`${key}=${encodeURIComponent(value)}`);
  }
  if (top !== undefined) params.push(`$top=${top}`);
  params.push(`$skiptoken=${encodeSkipToken(token)}`);
  return `${request.serviceUrl}/${encodeURIComponent(setName)}?${params.join('&')}`;
}

export interface Feed {
  readonly chunks: AsyncIterable<string>;
}

/**
 * A page of an entity set. Everything that can be refused (options, filter, access) is checked
 * before the first chunk, so that a bad request is a 400 rather than a broken stream.
 */
export async function openFeed(ctx: RequestContext, rawId: string, setName: string, request: FeedRequest): Promise<Feed> {
  const options = parseFeedOptions(request.query);
  const feed = await loadFeed(ctx, rawId);
  const entity = feed.model.sets.get(setName);
  if (!entity) throw odataError(404, `No entity set named ${setName}.`);
  if (options.select) checkSelect(entity, options.select);
  const context = expandContext(entity, options);
  const pageSize = Math.max(1, Math.min(PAGE_SIZE, request.maxPageSize ?? PAGE_SIZE));
  const select = options.select && (context.expand === '*' ? [...options.select, ...repeatNames(entity.properties).map((n) => [n])] : [...options.select, ...[...context.expand].map((n) => [n])]);
  const shape = (e: Record<string, unknown>): string => JSON.stringify(select ? selectProperties(e, select) : e);
  const head = (count: number | undefined): string =>
    `{"@odata.context":${JSON.stringify(`${request.serviceUrl}/$metadata#${setName}`)}${count === undefined ? '' : `,"@odata.count":${count}`},"value":[`;
  if (entity.parents.length === 0) return rootFeed(ctx, feed, options, request, pageSize, { context, shape, head });
  return repeatFeed(ctx, feed, entity, options, request, pageSize, { context, shape, head });
}

interface Writer {
  context: EntityContext;
  shape: (entity: Record<string, unknown>) => string;
  head: (count: number | undefined) => string;
}

type JsonRecord = Record<string, unknown>;

async function rootFeed(ctx: RequestContext, feed: Feedable, options: FeedOptions, request: FeedRequest, pageSize: number, writer: Writer): Promise<Feed> {
  const { model, formId, submittedBy } = feed;
  const own = submittedBy === undefined ? {} : { submittedBy };
  const limit = options.top === undefined ? pageSize : Math.min(options.top, pageSize);
  const ordered = options.filter !== undefined || options.orderby.length > 0;
  if (options.skiptoken && ordered !== ('offset' in options.skiptoken)) throw new OptionError('$skiptoken does not belong to this query.');
  const condition = options.filter ? filterCondition(model.root, options.filter, ctx.clock.now()) : sql`TRUE`;
  const order = orderClause(model.root, options.orderby);

  if (ordered) {
    // The ordered ids of every match, kept while the form's data is unchanged (the data API's
    // cache): each page is then a slice of it, read by primary key.
    const version = await records.formDataVersion(ctx.db, formId);
    const key = JSON.stringify(['odata', formId, submittedBy ?? null, options.filterText ?? '', request.query['$orderby'] ?? '']);
    let ids = ctx.matchCache.get(key, version);
    if (!ids) {
      ids = await records.listMatchingIds(ctx.db, formId, { condition, order, ...own });
      ctx.matchCache.set(key, version, ids);
    }
    const matched = ids;
    const offset = options.skiptoken && 'offset' in options.skiptoken ? options.skiptoken.offset : options.skip;
    const page = matched.subarray(offset, offset + limit);
    const more = offset + page.length < matched.length && (options.top === undefined || options.top > page.length) && page.length > 0;
    const next = more ? nextLink(request, ROOT_SET, options.top === undefined ? undefined : options.top - page.length, { offset: offset + page.length }) : undefined;
    async function* chunks(): AsyncGenerator<string> {
      yield writer.head(options.count ? matched.length : undefined);
      let first = true;
      for (let start = 0; start < page.length; start += CHUNK) {
        const texts = await records.recordTextsByIds(ctx.db, formId, ctx.baseUrl, Array.from(page.subarray(start, start + CHUNK)));
        const parts = texts.map((t) => writer.shape(recordEntity(model.root, JSON.parse(t) as JsonRecord, writer.context)));
        if (parts.length === 0) continue;
        yield (first ? '' : ',') + parts.join(',');
        first = false;
      }
      yield next === undefined ? ']}' : `],"@odata.nextLink":${JSON.stringify(next)}}`;
    }
    return { chunks: chunks() };
  }

  // Default order: keyset pages by `_id`, so that a page costs the same however deep it is.
  const count = options.count ? await records.countRecords(ctx.db, formId, sql`TRUE`, submittedBy) : undefined;
  const startAfter = options.skiptoken && 'after' in options.skiptoken ? options.skiptoken.after : 0;
  const skip = options.skiptoken ? 0 : options.skip;
  async function* chunks(): AsyncGenerator<string> {
    yield writer.head(count);
    let after = startAfter;
    let offset = skip;
    let written = 0;
    let more = false;
    while (written < limit) {
      const wanted = Math.min(CHUNK, limit - written);
      // One more than wanted on the page's last chunk tells whether another page follows.
      const last = wanted === limit - written;
      const texts = await records.listRecordTexts(ctx.db, formId, ctx.baseUrl, { condition: sql`i.id > ${after}`, order: sql`i.id ASC`, limit: last ? wanted + 1 : wanted, offset, ...own });
      offset = 0;
      if (texts.length > wanted) {
        more = true;
        texts.pop();
      }
      const parts: string[] = [];
      for (const text of texts) {
        const record = JSON.parse(text) as JsonRecord;
        after = Number(record['_id']);
        parts.push(writer.shape(recordEntity(model.root, record, writer.context)));
      }
      if (parts.length > 0) yield (written === 0 ? '' : ',') + parts.join(',');
      written += texts.length;
      if (texts.length < wanted) break;
    }
    const topLeft = options.top === undefined ? undefined : options.top - written;
    const next = more && (topLeft === undefined || topLeft > 0) ? nextLink(request, ROOT_SET, topLeft, { after }) : undefined;
    yield next === undefined ? ']}' : `],"@odata.nextLink":${JSON.stringify(next)}}`;
  }
  return { chunks: chunks() };
}

async function repeatFeed(ctx: RequestContext, feed: Feedable, entity: EntityModel, options: FeedOptions, request: FeedRequest, pageSize: number, writer: Writer): Promise<Feed> {
  if (options.filter || options.orderby.length > 0) throw new OptionError(`$filter and $orderby are answered on ${ROOT_SET} only, not on ${entity.setName}.`);
  if (options.skiptoken && !('after' in options.skiptoken)) throw new OptionError('$skiptoken does not belong to this query.');
  const { formId, submittedBy } = feed;
  const own = submittedBy === undefined ? {} : { submittedBy };
  const keys = [...entity.parents.slice(1).map((p) => p.key), entity.key];
  const count = options.count ? await countRepeatRows(ctx.db, formId, keys, submittedBy) : undefined;
  const limit = options.top === undefined ? pageSize : Math.min(options.top, pageSize);
  const token = options.skiptoken && 'after' in options.skiptoken ? options.skiptoken : undefined;
  async function* chunks(): AsyncGenerator<string> {
    yield writer.head(count);
    // A page may end inside a record: the token then names the record before it and the rows of it already sent.
    let after = token?.after ?? 0;
    let toSkip = token ? (token.rows ?? 0) : options.skip;
    let written = 0;
    let next: SkipToken | undefined;
    reading: for (;;) {
      const texts = await records.listRecordTexts(ctx.db, formId, ctx.baseUrl, { condition: sql`i.id > ${after}`, order: sql`i.id ASC`, limit: CHUNK, offset: 0, ...own });
      const parts: string[] = [];
      for (const text of texts) {
        const record = JSON.parse(text) as JsonRecord;
        let sentOfRecord = 0;
        for (const row of repeatRows(entity, record, writer.context)) {
          if (written === limit) {
            next = { after, rows: sentOfRecord };
            break;
          }
          if (toSkip > 0) {
            toSkip -= 1;
            sentOfRecord += 1;
            continue;
          }
          parts.push(writer.shape(row));
          written += 1;
          sentOfRecord += 1;
        }
        if (next) break;
        after = Number(record['_id']);
        if (written === limit) {
          next = { after };
          break;
        }
      }
      if (parts.length > 0) yield (written === parts.length ? '' : ',') + parts.join(',');
      if (next || texts.length < CHUNK) break reading;
    }
    const topLeft = options.top === undefined ? undefined : options.top - written;
    const link = next && (topLeft === undefined || topLeft > 0) ? nextLink(request, entity.setName, topLeft, next) : undefined;
    yield link === undefined ? ']}' : `],"@odata.nextLink":${JSON.stringify(link)}}`;
  }
  return { chunks: chunks() };
}
