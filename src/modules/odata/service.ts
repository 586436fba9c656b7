// A form's OData feed: the service document, $metadata, the entity sets' pages, one entity by key
// and navigation to a repeat's rows. Who reads what is the data API's decision (access requireForm); the
// rows are read by the feed's own light queries (repository.ts), a chunk at a time in keyset
// order, the next chunk read while the last one is written.
import { sql, type RawBuilder } from 'kysely';
import type { RequestContext } from '../../context.ts';
import { errors, isAppError } from '../../errors.ts';
import { isAuthenticated } from '../../access/index.ts';
import { perDefinition } from '../forms/definition-memo.ts';
import { requireForm } from '../../access/load.ts';
import { metadataXml, serviceDocument } from './csdl.ts';
import { pickOf, repeatRowWriter, submissionBytesWriter, type EntityContext, type ExpandTree, type RepeatRowWriter, type SubmissionBytesWriter } from './entities.ts';
import { CopyBuffers } from '../../platform/pg-copy.ts';
import { MEMO_PAGE, recordWriter, type RecordWriter } from './memo.ts';
import { FilterError, type FilterNode } from './filter.ts';
import { afterCondition, filterCondition, orderClause, orderTerms, termText } from './filter-sql.ts';
import { findProperty, odataModelOf, parentKeyName, SYSTEM_FIELDS, type EntityModel, type ODataModel, type Property } from './model.ts';
import { encodeSkipToken, OptionError, parseFeedOptions, type OrderItem, type SkipToken } from './options.ts';
import { copyRecords, countRows, findRecordId, measureBatch, readRecords, readRecordTexts, readRepeatRows, termValues, type KnownRecordRow, type RecordRow, type RowFilter, type RowRead } from './repository.ts';
import { parseResource, ResourceNotFound, type Resource } from './resource.ts';
import { scopeOf, type Scope } from './scope.ts';

/** Entities per page when the client asks for no smaller one (see bench/RESULTS.md). */
export const PAGE_SIZE = 10_000;
/** Rows read per query while a page is written. */
const CHUNK = 1000;
/** The first chunk is smaller, so that writing starts sooner and the next read overlaps it. */
const FIRST_CHUNK = 250;

/** Any error of a feed request as an OData error body; an anonymous caller refused is asked for credentials. */
export function asODataError(ctx: RequestContext, error: unknown): unknown {
  if (error instanceof OptionError || error instanceof FilterError) return errors.odataQueryInvalid(error.message);
  if (error instanceof ResourceNotFound) return errors.odataResourceUnknown(error.message);
  if (!isAppError(error)) return error;
  if (!isAuthenticated(ctx.actor) && (error.status === 403 || error.status === 404 || error.status === 401)) {
    return errors.odataNotAuthenticated();
  }
  return errors.odataRefusal(error);
}

interface Feedable {
  formId: number;
  submittedBy: number | undefined;
  model: ODataModel;
}

/**
 * Feed models by form and definition: a dashboard's page read again and again would otherwise read
 * the form's definition and build its model on every request.
 */
const feedModelOf = perDefinition(odataModelOf, 100);

async function loadFeed(ctx: RequestContext, rawId: string): Promise<Feedable> {
  const { form, submittedBy } = await requireForm(ctx, rawId, 'view_xform_data');
  return { formId: form.id, submittedBy, model: await feedModelOf(ctx.db, form) };
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
  /** The resource path after `odata.svc/`, as the request's URL spells it (for @odata.nextLink). */
  readonly resourcePath: string;
  /** `Prefer: odata.maxpagesize=n`, when sent. */
  readonly maxPageSize: number | undefined;
}

/** The repeats an entity's rows link to, through its groups. */
function repeatsOf(properties: readonly Property[]): EntityModel[] {
  return properties.flatMap((p) => (p.kind === 'repeat' ? [p.entity] : p.kind === 'group' ? repeatsOf(p.properties) : []));
}

function repeatName(repeat: EntityModel): string {
  return repeat.setName.slice(repeat.setName.lastIndexOf('.') + 1);
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

/** Checks every name of an $expand tree against the repeats at its level. */
function checkExpand(entity: EntityModel, tree: ExpandTree): void {
  if (tree === '*') return;
  const repeats = repeatsOf(entity.properties);
  for (const [name, inner] of tree) {
    const repeat = repeats.find((r) => repeatName(r) === name);
    if (!repeat) throw new OptionError(`$expand: ${name} is not a repeat of ${entity.setName}.`);
    checkExpand(repeat, inner);
  }
}

function nextLink(request: FeedRequest, top: number | undefined, token: SkipToken): string {
  const params: string[] = [];
  for (const key of ['$filter', '$orderby', '$select', '$expand', '$count'] as const) {
    const value = request.query[key];
    if (value !== undefined && value !== '') params.push(`${key}=${encodeURIComponent(value)}`);
  }
  if (top !== undefined) params.push(`$top=${top}`);
  params.push(`$skiptoken=${encodeSkipToken(token)}`);
  return `${request.serviceUrl}/${request.resourcePath}?${params.join('&')}`;
}

export interface Feed {
  readonly chunks: Iterable<string | Buffer> | AsyncIterable<string | Buffer>;
}

/**
 * A row read for a page: its entity's UTF-8 JSON (made when written: a view that the page's next
 * entity may overwrite, so it is copied before another is asked for), and where a page after it
 * starts (made when asked: only for the row a chunk ends on).
 */
interface PageRow {
  readonly entity: () => Buffer;
  readonly token: () => SkipToken;
}

const COMMA = 0x2c;

/**
 * Pieces of the response are kept under this size: a larger Buffer is memory of its own, mapped
 * for it and unmapped after it (the malloc settings of `npm start`), whose pages fault in fresh
 * on every piece; smaller ones reuse the C heap's memory.
 */
const PIECE_BYTES = 64 * 1024;

/**
 * The rows' entities, comma-separated (and after a comma when `more`: entities went before), in
 * pieces of at most PIECE_BYTES: each entity is copied into its piece as soon as it is written. An
 * entity larger than a piece by itself goes out as its own copy.
 */
function* entityPieces(rows: readonly PageRow[], more: boolean): Generator<Buffer> {
  let piece = Buffer.allocUnsafeSlow(PIECE_BYTES);
  let size = 0;
  for (const row of rows) {
    const entity = row.entity();
    const most = 1 + entity.length;
    if (size > 0 && size + most > PIECE_BYTES) {
      yield piece.subarray(0, size);
      piece = Buffer.allocUnsafeSlow(PIECE_BYTES);
      size = 0;
    }
    if (most > PIECE_BYTES) {
      if (more) yield Buffer.from(',');
      yield Buffer.from(entity);
      more = true;
      continue;
    }
    if (more) piece[size++] = COMMA;
    more = true;
    size += entity.copy(piece, size);
  }
  if (size > 0) yield piece.subarray(0, size);
}

/** Rows read together, and what frees what they were read into once they are written. */
interface Chunk {
  readonly rows: PageRow[];
  readonly release?: (() => void) | undefined;
}

/** Reads up to `limit` rows after a keyset position (or, on a first page, from an offset). */
type ChunkReader = (after: SkipToken | undefined, limit: number, offset: number) => Promise<Chunk>;

/**
 * The restriction of a key or navigation path: one record (by its `_id`, found first by its uuid,
 * so that the planner reads one row whatever it believes about the form), and the items of its
 * enclosing repeats.
 */
function resourceConditions(scope: Scope, resource: Resource, recordId: number | undefined): { record: RawBuilder<unknown>; rows: RawBuilder<unknown> } {
  const record = recordId === undefined ? sql`TRUE` : sql`i.id = ${recordId}`;
  const parts = resource.positions.map((position, index) => sql`${scope.tiebreak[index + 1]} = ${position}`);
  return { record, rows: parts.length === 0 ? sql`TRUE` : sql.join(parts, sql` AND `) };
}

function pathsOf(node: FilterNode): Array<readonly string[]> {
  switch (node.kind) {
    case 'path':
      return [node.segments];
    case 'call':
      return node.args.flatMap(pathsOf);
    case 'compare':
    case 'logical':
      return [...pathsOf(node.left), ...pathsOf(node.right)];
    case 'not':
      return pathsOf(node.operand);
    default:
      return [];
  }
}

/** Whether a $filter or $orderby names an answer (not only `__id`, `__system/…` or a parent's id). */
function readsAnswers(filter: FilterNode | undefined, orderby: readonly OrderItem[]): boolean {
  const paths = [...(filter ? pathsOf(filter) : []), ...orderby.map((o) => o.path)];
  return paths.some((p) => p[0] !== '__system' && !(p.length === 1 && p[0]?.startsWith('__')));
}

/**
 * The records read without their stored text that the memo cannot write after all (a column such
 * as the submitter's name changed since) with their text read now.
 */
async function withTexts(db: RequestContext['db'], writer: RecordWriter, rows: ReadonlyArray<RecordRow | KnownRecordRow>): Promise<RecordRow[]> {
  const records = rows.map((row) => (row.uuid === null ? recalled(writer, row) : row));
  const missing = records.filter((r) => !writer.writable(r));
  if (missing.length === 0) return records;
  const texts = await readRecordTexts(db, missing.map((r) => r.id));
  const unwritable = new Set(missing);
  // A record gone meanwhile (its form deleted) is left out.
  return records.flatMap((r) => (!unwritable.has(r) ? [r] : texts.has(r.id) ? [{ ...r, ...texts.get(r.id) }] : []));
}

/** A known record's row with the columns the read left out, as the writer wrote them for its version. */
function recalled(writer: RecordWriter, row: KnownRecordRow): RecordRow {
  const meta = writer.recall(row.id, row.stamp);
  if (meta === undefined) throw new Error(`record ${row.id} was read as known, but its version is not the writer's`);
  // Written out rather than spread: the rows a page writes keep one shape for the writer's code.
  return {
    id: meta.id, uuid: meta.uuid, json: null, stamp: row.stamp, submitted: meta.submitted, modified: meta.modified, submitter: row.submitter,
    edited: meta.edited, media_count: meta.media_count, total_media: meta.total_media, status: meta.status, version: meta.version, terms: row.terms,
  };
}

/** Past any item's position: a token after every row of a record. */
const PAST_POSITIONS = 2 ** 31 - 1;
/** The fewest records a batch of a repeat's rows takes. */
const MIN_BATCH = 200;

/**
 * An entity set's page, the rows below one entity (navigation), or one entity by key. Everything
 * that can be refused (path, options, filter, access) is checked before the first chunk, so that
 * a bad request is a 4xx rather than a broken stream.
 */
export async function openFeed(ctx: RequestContext, rawId: string, path: string, request: FeedRequest): Promise<Feed> {
  const options = parseFeedOptions(request.query);
  const feed = await loadFeed(ctx, rawId);
  const resource = parseResource(feed.model, path);
  const { entity } = resource;
  if (options.select) checkSelect(entity, options.select);
  checkExpand(entity, options.expand);
  const expanded = options.expand === '*' ? repeatsOf(entity.properties).map(repeatName) : [...options.expand.keys()];
  const select = options.select && [...options.select, ...expanded.map((n) => [n])];
  const context: EntityContext = { expand: options.expand, pick: pickOf(select) };

  const scope = scopeOf(entity, readsAnswers(options.filter, options.orderby));
  const recordId = resource.uuid === undefined ? undefined : await findRecordId(ctx.db, { formId: feed.formId, submittedBy: feed.submittedBy }, resource.uuid);
  if (resource.uuid !== undefined && recordId === undefined) throw errors.odataRecordNotReadable(resource.uuid);
  const restriction = resourceConditions(scope, resource, recordId);
  const where = sql`${options.filter ? filterCondition(scope, options.filter, ctx.clock.now()) : sql`TRUE`} AND ${restriction.record} AND ${restriction.rows}`;
  const terms = orderTerms(scope, options.orderby);
  const order = orderClause(scope, terms);
  const base: RowFilter = { formId: feed.formId, submittedBy: feed.submittedBy, condition: where };
  const rowsAfter = (after: SkipToken | undefined, limit: number, offset: number): RowRead => {
    let condition = where;
    if (after) {
      const keyset = afterCondition(scope, terms, after.values, after.key);
      if (!keyset) throw new OptionError('$skiptoken does not belong to this query.');
      condition = sql`${where} AND ${keyset}`;
    }
    return { ...base, condition, order, terms: terms.map(termText), limit, offset };
  };
  const pageSize = Math.max(1, Math.min(PAGE_SIZE, request.maxPageSize ?? PAGE_SIZE));
  const pageLimit = options.top === undefined ? pageSize : Math.min(options.top, pageSize);
  const recordsReader = (writer: RecordWriter, bytes: SubmissionBytesWriter | undefined): ChunkReader => {
    // What COPY reads a chunk into, given back once the chunk is written.
    const buffers = new CopyBuffers();
    return async (after, limit, offset) => {
      const copied = bytes && (await copyRecords(ctx.db, scope, rowsAfter(after, limit, offset), buffers));
      if (bytes && copied) {
        const src = copied[0]?.src;
        return {
          rows: copied.map((r) => ({ entity: () => bytes(r.src, r.start, r.end, r), token: () => ({ values: termValues(r.terms), key: [r.id] }) })),
          release: () => {
            if (src) buffers.used(src, 1);
          },
        };
      }
      const records = await withTexts(ctx.db, writer, await readRecords(ctx.db, scope, rowsAfter(after, limit, offset), writer.knownList));
      return {
        rows: records.map((r) => ({
          entity: () => writer.write(r),
          token: () => ({ values: termValues(r.terms), key: [r.id] }),
        })),
      };
    };
  };
  const rowsReader = (write: RepeatRowWriter): ChunkReader => async (after, limit, offset) => {
    // In the rows' own order, a chunk comes from a batch of records at a time (see RecordBatch).
    const batched = terms.length === 0 && offset === 0;
    const out: PageRow[] = [];
    let start = after;
    for (;;) {
      const batch = batched ? { from: start?.key[0] ?? 0, size: Math.max(MIN_BATCH, limit), condition: restriction.record } : undefined;
      const items = await readRepeatRows(ctx.db, scope, rowsAfter(start, limit - out.length, offset), batch);
      for (const r of items) {
        out.push({
          entity: () => write(r.uuid, r.positions, JSON.parse(r.item) as Record<string, unknown>),
          token: () => ({ values: termValues(r.terms), key: [r.id, ...r.positions] }),
        });
      }
      if (!batch || out.length >= limit) return { rows: out };
      const measured = await measureBatch(ctx.db, base, batch);
      if (measured.size < batch.size) return { rows: out };
      start = { values: [], key: [measured.last, ...scope.levels.map(() => PAST_POSITIONS)] };
    }
  };
  const remembered = resource.single || pageLimit <= MEMO_PAGE;
  const read =
    entity.parents.length === 0
      ? recordsReader(recordWriter(entity, context, remembered, recordId === undefined ? undefined : [recordId]), remembered ? undefined : submissionBytesWriter(entity, context))
      : rowsReader(repeatRowWriter(entity, context));
  const contextUrl = `${request.serviceUrl}/$metadata#${entity.setName}`;

  if (resource.single) {
    const [row] = (await read(undefined, 1, 0)).rows;
    if (!row) throw errors.odataEntityNotReadable(path);
    // The only entity this request writes: its view stays as it is.
    return { chunks: [`{"@odata.context":${JSON.stringify(`${contextUrl}/$entity`)},`, row.entity().subarray(1)] };
  }

  if (options.skiptoken && !afterCondition(scope, terms, options.skiptoken.values, options.skiptoken.key)) throw new OptionError('$skiptoken does not belong to this query.');
  const count = options.count ? await countRows(ctx.db, scope, base) : undefined;
  const head = `{"@odata.context":${JSON.stringify(contextUrl)}${count === undefined ? '' : `,"@odata.count":${count}`},"value":[`;
  // Ordered by an answer, a chunk is the whole page: each query sorts every match once. In the
  // records' order or by a column (an index range from the keyset), chunks cost no more than a page.
  const chunked = terms.length === 0 || terms[0]?.notNull === true;
  const pages = pageRows(read, pageLimit, chunked ? CHUNK : pageLimit, options.skiptoken, options.skiptoken ? 0 : options.skip);
  async function* chunks(): AsyncGenerator<string | Buffer> {
    yield head;
    let written = 0;
    let last: SkipToken | undefined;
    let more = false;
    for await (const chunk of pages) {
      if (chunk === 'more') {
        more = true;
        break;
      }
      const { rows } = chunk;
      if (rows.length > 0) {
        yield* entityPieces(rows, written > 0);
        written += rows.length;
        last = rows[rows.length - 1]?.token();
      }
      chunk.release?.();
    }
    const topLeft = options.top === undefined ? undefined : options.top - written;
    const next = more && last && (topLeft === undefined || topLeft > 0) ? nextLink(request, topLeft, last) : undefined;
    yield next === undefined ? ']}' : `],"@odata.nextLink":${JSON.stringify(next)}}`;
  }
  return { chunks: chunks() };
}

/**
 * A page's rows, chunk by chunk, each chunk's query sent before the previous chunk is written (the
 * database reads while the server writes); 'more' at the end when rows remain after the page.
 */
async function* pageRows(read: ChunkReader, limit: number, chunk: number, start: SkipToken | undefined, skip: number): AsyncGenerator<Chunk | 'more'> {
  const fetch = (after: SkipToken | undefined, offset: number, written: number): { rows: Promise<Chunk>; wanted: number } => {
    const wanted = Math.min(written === 0 ? Math.min(FIRST_CHUNK, chunk) : chunk, limit - written);
    // One more than wanted on the page's last chunk tells whether another page follows.
    const rows = read(after, wanted === limit - written ? wanted + 1 : wanted, offset);
    rows.catch(() => undefined); // awaited below; a client gone meanwhile must not leave it unhandled
    return { rows, wanted };
  };
  let pending: { rows: Promise<Chunk>; wanted: number } | undefined = fetch(start, skip, 0);
  let written = 0;
  while (pending) {
    const { rows: promise, wanted } = pending;
    pending = undefined;
    const { rows, release } = await promise;
    const more = rows.length > wanted;
    const page = more ? rows.slice(0, wanted) : rows;
    written += page.length;
    const last = page[page.length - 1];
    if (!more && page.length === wanted && written < limit && last) pending = fetch(last.token(), 0, written);
    yield { rows: page, release };
    if (more) yield 'more';
  }
}
