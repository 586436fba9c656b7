// The data API: records of a form, one record, deletion, attachments, and the forms with data.
import type { RequestContext } from '../../context.ts';
import { errors } from '../../errors.ts';
import { ownValue } from '../../platform/lookup.ts';
import { isAuthenticated, requireUser } from '../../access/index.ts';
import { requireForm } from '../../access/load.ts';
import { pageWindow, resolvePage, type PagePlace, type PageRequest } from '../../lib/pages.ts';
import { findBlob, readBlobChunks } from '../blobs/repository.ts';
import * as forms from '../forms/repository.ts';
import { numericSortKeys, queryCondition, sortOrder } from './query.ts';
import { mergeMatches } from './match-list.ts';
import { recordFilters } from './record-filters.ts';
import { sql } from 'kysely';
import * as repo from './repository.ts';
import { buildFormModel } from '../../lib/form-model/model.ts';
import { parseInstance } from '../../lib/instance-xml.ts';
import { isoTimestamp } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db.ts';

export interface DataQuery extends PageRequest {
  query?: string | undefined;
  fields?: string | undefined;
  sort?: string | undefined;
  start?: string | undefined;
  limit?: string | undefined;
}

function parseFields(raw: string | undefined): string[] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (Array.isArray(parsed) && parsed.every((f) => typeof f === 'string')) return parsed;
  } catch {
    // fall through to the error below
  }
  throw errors.fieldsNotAList();
}

function nonNegative(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  return Number(raw);
}

export interface DataPage {
  /** The JSON list, UTF-8, a piece at a time: a large answer is read and sent a slice at a time. */
  chunks: AsyncIterable<string | Buffer>;
  /** Where the page sits, when a page was asked for: the pagination Link header's source. */
  place: PagePlace | undefined;
}

/**
 * Records are sent in pieces of about this many characters. A chunk of records joined into one
 * string of a megabyte or more was flattened, measured and encoded into memory of its own, mapped
 * for it and unmapped after it (the malloc settings of `npm start`), its pages faulting in fresh
 * every time; pieces this small reuse the C heap's memory.
 */
const PIECE_CHARS = 32 * 1024;

/** The texts as UTF-8 pieces of about PIECE_CHARS, comma-separated, after a comma when `more`. */
function* textPieces(texts: readonly string[], more: boolean): Generator<Buffer> {
  let parts: string[] = [];
  let size = 0;
  for (const text of texts) {
    if (size > 0 && size + text.length > PIECE_CHARS) {
      yield Buffer.from(parts.join(''));
      parts = [];
      size = 0;
    }
    const part = more ? `,${text}` : text;
    more = true;
    parts.push(part);
    size += part.length;
  }
  if (size > 0) yield Buffer.from(parts.join(''));
}

/**
 * Records read and sent per database round trip while a list streams. Two chunks are held at a
 * time (one sent, the next read ahead): 2,000 listed faster than 1,000, for a little more memory
 * at the peak (bench/RESULTS.md, 2026-11-28).
 */
const CHUNK = 2000;

/**
 * A page (or all) of records as JSON text, assembled without parsing the records again and
 * streamed: the ordered ids of every match (match list) give the count and the slice; the
 * slice's records are then read CHUNK at a time as the client takes them.
 */
export async function listRecords(ctx: RequestContext, rawId: string, query: DataQuery): Promise<DataPage> {
  const { form, submittedBy } = await requireForm(ctx, rawId, 'view_xform_data');
  const filters = recordFilters(query as Readonly<Record<string, unknown>>);
  const condition = sql`(${queryCondition(query.query)}) AND (${filters.condition})`;
  const order = sortOrder(query.sort);
  const fields = parseFields(query.fields);
  const paged = query.page !== undefined || query.page_size !== undefined;
  let limit = nonNegative(query.limit);
  let offset = nonNegative(query.start) ?? 0;
  let place: PagePlace | undefined;
  const own = submittedBy !== undefined ? { submittedBy } : {};
  const ids = await matchingIds(ctx, form.id, query, filters.key, { condition, order, ...own });
  if (paged) {
    const window = pageWindow(query);
    place = resolvePage(window, ids.length);
    limit = place.size;
    offset = (place.page - 1) * place.size;
  }
  const slice = ids.subarray(offset, limit === undefined ? undefined : offset + limit);
  const read = async (start: number): Promise<string[]> => {
    const texts = await repo.recordTextsByIds(ctx.db, form.id, ctx.baseUrl, Array.from(slice.subarray(start, start + CHUNK)));
    return fields ? texts.map((t) => JSON.stringify(pick(JSON.parse(t) as Record<string, unknown>, fields))) : texts;
  };
  // The first chunk is read before answering, so that a page that fits in it fails (if the
  // database fails) with a status rather than a cut-off body.
  const first = await read(0);
  async function* chunks(): AsyncGenerator<Buffer> {
    let more = false;
    let items = first;
    for (let start = CHUNK; ; start += CHUNK) {
      // The next chunk is read (on another pooled connection) while this one is sent.
      const next = start < slice.length ? read(start) : undefined;
      // A client gone mid-list must not leave the read ahead as an unhandled rejection.
      next?.catch(() => undefined);
      if (items.length > 0) {
        yield* textPieces(items, more);
        more = true;
      }
      if (!next) break;
      items = await next;
    }
  }
  return { chunks: withBrackets(chunks()), place };
}

/** A streamed list's whole text (small answers only: a page of the GeoJSON view). */
export async function wholeText(chunks: AsyncIterable<string | Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of chunks) parts.push(typeof part === 'string' ? Buffer.from(part) : part);
  return Buffer.concat(parts).toString('utf8');
}

async function* withBrackets(items: AsyncIterable<string | Buffer>): AsyncGenerator<string | Buffer> {
  yield '[';
  yield* items;
  yield ']';
}

/**
 * The ordered ids a query matches, from the match cache. While a form is collecting, its version
 * moves with every submission: then only the records added since the list was made are read
 * (matchesAddedSince) and their matches merged in by their numeric sort keys; a change of any
 * other kind (edit, deletion, late files), or an order only the database can compare, makes
 * the list again.
 */
async function matchingIds(
  ctx: RequestContext,
  formId: number,
  query: DataQuery,
  filterKey: string,
  match: Pick<repo.RecordPage, 'condition' | 'order' | 'submittedBy'>,
): Promise<Int32Array> {
  const numeric = numericSortKeys(query.sort);
  const keyExpressions = (numeric ?? []).map((k) => k.expression);
  const descending = (numeric ?? []).map((k) => k.descending);
  const key = JSON.stringify(['data', formId, match.submittedBy ?? null, query.query ?? '', query.sort ?? '', filterKey]);
  const cached = ctx.matchCache.peek(key);
  if (cached?.highWater !== undefined) {
    const now = await repo.matchesAddedSince(ctx.db, formId, cached.highWater, match, keyExpressions);
    if (now.version === cached.version) return cached.ids;
    const [changes, submissions] = cached.version.split(':').map(Number);
    if (now.changes === changes && submissions !== undefined && now.added.length === now.submissions - submissions) {
      const highWater = now.added.reduce((high, a) => Math.max(high, a.id), cached.highWater);
      const matched = now.added.filter((a) => a.matches);
      if (matched.length === 0) {
        ctx.matchCache.put(key, { ...cached, version: now.version, highWater });
        return cached.ids;
      }
      if (cached.keys) {
        const merged = mergeMatches({ ids: cached.ids, keys: [...cached.keys] }, matched, descending);
        ctx.matchCache.put(key, { version: now.version, highWater, ids: merged.ids, keys: merged.keys });
        return merged.ids;
      }
    }
  }
  const made = await repo.matchSnapshot(ctx.db, formId, match, keyExpressions);
  ctx.matchCache.put(key, { version: made.version, highWater: made.highWater, ids: made.ids, ...(numeric ? { keys: made.keys } : {}) });
  return made.ids;
}

function pick(record: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(fields.map((f) => [f, ownValue(record, f) ?? null]));
}

function parseDataId(raw: string): number {
  if (!/^\d+$/.test(raw)) throw errors.invalidDataId();
  return Number(raw);
}

export async function getRecord(ctx: RequestContext, rawId: string, rawDataId: string): Promise<string> {
  const { form, submittedBy } = await requireForm(ctx, rawId, 'view_xform_data');
  const found = await repo.findRecordText(ctx.db, form.id, parseDataId(rawDataId), ctx.baseUrl);
  if (!found || (submittedBy !== undefined && found.submittedBy !== submittedBy)) throw errors.notFound();
  return found.text;
}

/** A record the caller may see, for its labels: its form and id. */
async function loadRecordForLabels(ctx: RequestContext, rawId: string, rawDataId: string, write: boolean): Promise<{ formId: number; dataId: number }> {
  const grant = await requireForm(ctx, rawId, 'view_xform_data');
  const { form, submittedBy } = grant;
  const dataId = parseDataId(rawDataId);
  const found = await repo.findInstanceById(ctx.db, form.id, dataId);
  if (!found || found.deleted_at || (submittedBy !== undefined && found.submitted_by !== submittedBy)) throw errors.notFound();
  if (write) {
    requireUser(ctx.actor);
    if (!grant.allows('change_xform') || !grant.changes(found.submitted_by)) throw errors.permissionDenied();
  }
  return { formId: form.id, dataId };
}

/** GET /api/v1/data/{pk}/{dataid}/labels: the record's tags (its `_tags`). */
export async function recordLabels(ctx: RequestContext, rawId: string, rawDataId: string): Promise<string[]> {
  const { formId, dataId } = await loadRecordForLabels(ctx, rawId, rawDataId, false);
  return repo.recordTags(ctx.db, formId, dataId);
}

/** POST /api/v1/data/{pk}/{dataid}/labels {tags}: adds tags (any case counts as the same tag); editors. */
export async function addRecordLabels(ctx: RequestContext, rawId: string, rawDataId: string, added: readonly string[]): Promise<{ status: number; tags: string[] }> {
  const { formId, dataId } = await loadRecordForLabels(ctx, rawId, rawDataId, true);
  const current = await repo.recordTags(ctx.db, formId, dataId);
  const known = new Set(current.map((t) => t.toLowerCase()));
  const next = [...current, ...added.filter((t) => !known.has(t.toLowerCase()))];
  if (next.length !== current.length) await repo.setRecordTags(ctx.db, formId, dataId, next, ctx.clock.now());
  return { status: added.length ? 201 : 200, tags: next };
}

/** DELETE /api/v1/data/{pk}/{dataid}/labels/{tag}: 200 with the rest, 202 when it was not there; editors. */
export async function removeRecordLabel(ctx: RequestContext, rawId: string, rawDataId: string, tag: string): Promise<{ status: number; tags: string[] }> {
  const { formId, dataId } = await loadRecordForLabels(ctx, rawId, rawDataId, true);
  const current = await repo.recordTags(ctx.db, formId, dataId);
  const next = current.filter((t) => t.toLowerCase() !== tag.toLowerCase());
  if (next.length === current.length) return { status: 202, tags: current };
  await repo.setRecordTags(ctx.db, formId, dataId, next, ctx.clock.now());
  return { status: 200, tags: next };
}

/** GET /api/v1/data/{pk}/{dataid}.xml: the record as it was submitted (its instance XML). */
export async function getRecordXml(ctx: RequestContext, rawId: string, rawDataId: string): Promise<string> {
  const { form, submittedBy } = await requireForm(ctx, rawId, 'view_xform_data');
  const found = await repo.findInstanceById(ctx.db, form.id, parseDataId(rawDataId));
  if (!found || found.deleted_at || (submittedBy !== undefined && found.submitted_by !== submittedBy)) throw errors.notFound();
  return found.xml;
}

/**
 * GET /api/v1/data/{pk}/{dataid}/history: the record's earlier versions, oldest first, each as the
 * record it was (read from its archived XML), with the uuid it had then.
 */
export async function recordHistory(ctx: RequestContext, rawId: string, rawDataId: string): Promise<Record<string, unknown>[]> {
  const { form, submittedBy } = await requireForm(ctx, rawId, 'view_xform_data');
  const dataId = parseDataId(rawDataId);
  const found = await repo.findRecordText(ctx.db, form.id, dataId, ctx.baseUrl);
  if (!found || (submittedBy !== undefined && found.submittedBy !== submittedBy)) throw errors.notFound();
  const model = buildFormModel((await forms.findFormDefinition(ctx.db, form.id)).json);
  return (await repo.listRecordHistory(ctx.db, form.id, dataId)).map((version) => {
    const parsed = parseInstance(version.xml, model, { maxBytes: ctx.config.uploadLimitBytes });
    const record = parsed.ok ? parsed.record : {};
    return { ...record, _id: dataId, _uuid: version.uuid, _xform_id_string: form.id_string, _date_archived: isoTimestamp(version.date_created) };
  });
}

/**
 * DELETE /api/v1/data/{pk}/{dataid}: a role that changes only its own records (recordWriteScope)
 * deletes only those; another's record is not found when the caller does not read it either (as
 * GET answers), else 403.
 */
export async function deleteRecord(ctx: RequestContext, rawId: string, rawDataId: string): Promise<void> {
  const actor = requireUser(ctx.actor);
  const { form, allows, writeScope, readScope } = await requireForm(ctx, rawId, 'view_xform');
  const dataId = parseDataId(rawDataId);
  if (!allows('delete_submission')) throw errors.noDeletePermission();
  const submittedBy = writeScope === 'own' ? actor.id : undefined;
  const deleted = await inTransaction(ctx.db, async (trx) => {
    const done = await repo.softDeleteInstance(trx, form.id, dataId, actor.id, ctx.clock.now(), submittedBy);
    if (done) await repo.refreshFormCounters(trx, form.id);
    return done;
  });
  if (deleted) return;
  // Not deleted: gone, or another's record the caller may not change (403 only if they read it).
  const found = submittedBy !== undefined && readScope === 'all' ? await repo.findInstanceById(ctx.db, form.id, dataId) : undefined;
  throw found && !found.deleted_at ? errors.noDeletePermission() : errors.notFound();
}

/** A bulk delete as a request gave it (submissions/inputs.ts reads it). */
export interface DeleteRecordsInput {
  /** `permanent_delete` was asked for (refused). */
  permanent: boolean;
  /** `delete_all`: every record. */
  all: boolean;
  /** `instance_ids` as given, each trimmed, none empty; the service checks they are ids. */
  ids: string[];
}

/**
 * DELETE /api/v1/data/{pk} with `instance_ids=1,2,3` or `delete_all=True`: those records (or all)
 * are deleted at once, in one transaction. onadata answers the same message and deletes later.
 * A role that changes only its own records deletes only those: another's id counts as one that
 * does not exist.
 */
export async function deleteRecords(ctx: RequestContext, rawId: string, input: DeleteRecordsInput): Promise<{ message: string }> {
  const actor = requireUser(ctx.actor);
  const { form, submittedBy } = await requireForm(ctx, rawId, 'delete_submission', { denied: errors.noDeletePermission });
  if (input.permanent) throw errors.permanentDeleteDisabled();
  const { all, ids } = input;
  if (!all && ids.length === 0) throw errors.dataIdsMissing();
  if (ids.some((id) => !/^\d{1,9}$/.test(id))) throw errors.invalidDataId();
  const count = await inTransaction(ctx.db, async (trx) => {
    const n = await repo.softDeleteInstances(trx, form.id, all ? 'all' : ids.map(Number), actor.id, ctx.clock.now(), submittedBy);
    if (n > 0) await repo.refreshFormCounters(trx, form.id);
    return n;
  });
  return { message: `${count} records were deleted` };
}

/** GET /api/v1/data: the forms whose data the caller may read. */
export async function formsWithData(ctx: RequestContext): Promise<Record<string, unknown>[]> {
  const rows = isAuthenticated(ctx.actor)
    ? await forms.listLiveForms(ctx.db, { memberId: ctx.actor.user.id })
    : (await forms.listLiveForms(ctx.db, { sharedOnly: true })).filter((f) => f.shared_data);
  return rows.map((f) => dataEntry(ctx, f));
}

function dataEntry(ctx: RequestContext, f: forms.FormRow): Record<string, unknown> {
  return { id: f.id, id_string: f.id_string, title: f.title, description: f.description, url: `${ctx.baseUrl}/api/v1/data/${f.id}` };
}

/** GET /api/v1/data/public: every form whose records are public (public_data), whoever asks. */
export async function formsWithPublicData(ctx: RequestContext): Promise<Record<string, unknown>[]> {
  return (await forms.listLiveForms(ctx.db, { sharedDataOnly: true })).map((f) => dataEntry(ctx, f));
}

/** An attachment's file, read from storage a chunk at a time as it is sent. */
export async function attachmentFile(ctx: RequestContext, rawId: string): Promise<{ name: string; mimetype: string; size: number; content: AsyncIterable<Uint8Array> }> {
  if (!/^\d+$/.test(rawId)) throw errors.notFound();
  const attachment = await repo.findAttachment(ctx.db, Number(rawId));
  if (!attachment) throw errors.notFound();
  const { submittedBy } = await requireForm(ctx, String(attachment.form_id), 'view_xform_data');
  if (submittedBy !== undefined && attachment.submitted_by !== submittedBy) throw errors.notFound();
  const blob = await findBlob(ctx.db, attachment.blob);
  if (!blob) throw errors.notFound();
  return { name: attachment.name, mimetype: attachment.mimetype, size: blob.size, content: readBlobChunks(ctx.db, blob) };
}
