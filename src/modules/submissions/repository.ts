// SQL for submissions (instances), their history and attachments.
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';
import { preparedMarker } from '../../platform/prepared-marker.ts';
import type { InstancesTable } from '../../platform/schema.ts';
import type { SubmissionForm } from '../../caches.ts';
import { recordReviewKeys } from '../reviews/repository.ts';
import { QUEUE_INSERTED_RECORD, type DeliveryEvent, type QueuedRecord } from '../restservices/repository.ts';
import { recordText, type RecordRow } from './record-text.ts';

export type InstanceRow = Selectable<InstancesTable>;

export async function findInstanceByUuid(db: DbOrTx, formId: number, uuid: string): Promise<InstanceRow | undefined> {
  return db.selectFrom('instances').selectAll().where('form_id', '=', formId).where('uuid', '=', uuid).executeTakeFirst();
}

/**
 * Takes this instanceID's turn until the transaction ends (migration 0018): a submission storing
 * the same instanceID waits, then sees whether the edit holding it archived it.
 */
export async function lockInstanceUuid(db: DbOrTx, formId: number, uuid: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(gather_uuid_lock_key(${formId}::int, ${uuid}::text))`.execute(db);
}

/**
 * The record with this uuid, its row locked until the transaction ends: an edit holds it from
 * before it reads the version it replaces until that version is archived, so a rival edit of the
 * same version waits, then finds the uuid gone (another edit won) instead of replacing it too.
 * Locking first also keeps the history row's key-share lock from deadlocking with a rival.
 */
export async function lockInstanceByUuid(db: DbOrTx, formId: number, uuid: string): Promise<InstanceRow | undefined> {
  return db.selectFrom('instances').selectAll().where('form_id', '=', formId).where('uuid', '=', uuid).forUpdate().executeTakeFirst();
}

export async function findInstanceById(db: DbOrTx, formId: number, id: number): Promise<InstanceRow | undefined> {
  return db.selectFrom('instances').selectAll().where('form_id', '=', formId).where('id', '=', id).executeTakeFirst();
}

/** A record's tags (`_tags` in its stored JSON). */
export async function recordTags(db: DbOrTx, formId: number, id: number): Promise<string[]> {
  const result = await sql<{ tags: unknown }>`SELECT coalesce(json->'_tags', '[]'::jsonb) AS tags FROM instances WHERE form_id = ${formId}::int AND id = ${id}::int`.execute(db);
  const tags = result.rows[0]?.tags;
  return Array.isArray(tags) ? tags.map(String) : [];
}

/** Replaces a record's tags, marking it modified (a trigger counts the change for caches and exports). */
export async function setRecordTags(db: DbOrTx, formId: number, id: number, tags: readonly string[], now: Date): Promise<void> {
  await sql`UPDATE instances SET json = jsonb_set(json, '{_tags}', ${JSON.stringify(tags)}::jsonb, true), date_modified = ${now}::timestamptz
    WHERE form_id = ${formId}::int AND id = ${id}::int AND deleted_at IS NULL`.execute(db);
}

export async function uuidInHistory(db: DbOrTx, formId: number, uuid: string): Promise<boolean> {
  return (await recordOfArchivedUuid(db, formId, uuid)) !== undefined;
}

/** A record's archived versions, oldest first. */
export async function listRecordHistory(db: DbOrTx, formId: number, instanceId: number): Promise<Array<{ uuid: string; xml: string; date_created: Date }>> {
  return db.selectFrom('instance_history').select(['uuid', 'xml', 'date_created']).where('form_id', '=', formId).where('instance_id', '=', instanceId).orderBy('id').execute();
}

/** The record one of whose earlier versions had this uuid (an edit archived it), if any. */
export async function recordOfArchivedUuid(db: DbOrTx, formId: number, uuid: string): Promise<number | undefined> {
  const row = await db.selectFrom('instance_history').select('instance_id').where('form_id', '=', formId).where('uuid', '=', uuid).executeTakeFirst();
  return row?.instance_id;
}

export interface NewInstance {
  form_id: number;
  uuid: string;
  xml: string;
  json: string;
  version: string;
  submitted_by: number | null;
  date_created: Date;
  total_media: number;
  has_geopoint: boolean;
  /** JSON object text (src/lib/writers/layout/repeat-counts.ts). */
  repeat_counts: string;
}

/**
 * Archives `previous` (read with lockInstanceByUuid in the same transaction) and stores the next
 * version in its place. The update is conditional on the version still being `previous`, so a
 * caller that forgot the lock fails loudly instead of overwriting another edit.
 */
export async function archiveAndReplace(
  db: DbOrTx,
  previous: InstanceRow,
  next: {
    uuid: string; xml: string; json: string; version: string; total_media: number; has_geopoint: boolean; repeat_counts: string; editedBy: number | null; now: Date;
  },
): Promise<void> {
  await db.insertInto('instance_history').values({ instance_id: previous.id, form_id: previous.form_id, uuid: previous.uuid, xml: previous.xml, date_created: next.now }).execute();
  const replaced = await db
    .updateTable('instances')
    .set({
      uuid: next.uuid,
      xml: next.xml,
      // The record's tags, notes and latest review outlive the edit (src/modules/reviews), as
      // they do in onadata, where they belong to the record rather than to one of its versions.
      json: sql<string>`${next.json}::jsonb || jsonb_build_object('_tags', coalesce(instances.json->'_tags', '[]'::jsonb))
        || ${recordReviewKeys(sql`${previous.id}::int`)}`,
      version: next.version,
      total_media: next.total_media,
      has_geopoint: next.has_geopoint,
      repeat_counts: next.repeat_counts,
      edited: true,
      last_edited: next.now,
      last_edited_by: next.editedBy,
      date_modified: next.now,
    })
    .where('id', '=', previous.id)
    .where('uuid', '=', previous.uuid)
    .executeTakeFirst();
  if (Number(replaced.numUpdatedRows) !== 1) throw new Error(`record ${previous.id} changed under an edit that held its lock`);
}

/**
 * Stores a record's file; answers whether it was written. `replace`: a file of the same name already there is replaced (a new or
 * edited version brings its own files); otherwise it is kept (a re-sent record only adds the files
 * that had not arrived).
 */
export async function saveAttachment(
  db: DbOrTx,
  attachment: { instance_id: number; name: string; mimetype: string; blob: string; size: number; date_created: Date },
  replace: boolean,
): Promise<boolean> {
  const result = await db
    .insertInto('attachments')
    .values(attachment)
    .onConflict((oc) => {
      const target = oc.columns(['instance_id', 'name']);
      return replace ? target.doUpdateSet({ mimetype: attachment.mimetype, blob: attachment.blob, size: attachment.size }) : target.doNothing();
    })
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Recounts how many of the referenced media files have arrived. */
export async function refreshMediaCount(db: DbOrTx, instanceId: number, referenced: readonly string[]): Promise<void> {
  const names = referenced.length ? [...referenced] : [''];
  await db
    .updateTable('instances')
    .set({
      media_count: sql<number>`(SELECT count(*)::int FROM attachments a WHERE a.instance_id = ${instanceId} AND a.name = ANY(${names}::text[]))`,
    })
    .where('id', '=', instanceId)
    .execute();
}

const STAT_SHARDS = 16;

/** Recounts a form's submissions from scratch (after deletions), into shard 0. */
export async function refreshFormCounters(db: DbOrTx, formId: number): Promise<void> {
  await db.deleteFrom('form_stats').where('form_id', '=', formId).execute();
  await sql`INSERT INTO form_stats (form_id, shard, submissions, geopoints, last_submission_time)
    SELECT ${formId}, 0, count(*)::int, count(*) FILTER (WHERE has_geopoint)::int, max(date_created)
    FROM instances WHERE form_id = ${formId} AND deleted_at IS NULL`.execute(db);
}

/** Soft-deletes a live record of the form (only if `submittedBy` submitted it, when given); answers whether it did. */
export async function softDeleteInstance(db: DbOrTx, formId: number, instanceId: number, userId: number, now: Date, submittedBy?: number): Promise<boolean> {
  let query = db
    .updateTable('instances')
    .set({ deleted_at: now, deleted_by: userId, date_modified: now })
    .where('form_id', '=', formId)
    .where('id', '=', instanceId)
    .where('deleted_at', 'is', null);
  if (submittedBy !== undefined) query = query.where('submitted_by', '=', submittedBy);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Soft-deletes these live records of the form (or all of them; only those `submittedBy` submitted, when given); answers how many. */
export async function softDeleteInstances(db: DbOrTx, formId: number, ids: readonly number[] | 'all', userId: number, now: Date, submittedBy?: number): Promise<number> {
  if (ids !== 'all' && ids.length === 0) return 0;
  let query = db.updateTable('instances').set({ deleted_at: now, deleted_by: userId, date_modified: now }).where('form_id', '=', formId).where('deleted_at', 'is', null);
  if (ids !== 'all') query = query.where(sql<boolean>`id = ANY(${[...ids]}::int[])`);
  if (submittedBy !== undefined) query = query.where('submitted_by', '=', submittedBy);
  return Number((await query.executeTakeFirst()).numUpdatedRows);
}

/** Submissions of the user's forms created in [from, to), grouped by the form's public flag. */
export async function countMonthlySubmissions(db: DbOrTx, ownerId: number, from: Date, to: Date): Promise<{ public: number; private: number }> {
  const rows = await db
    .selectFrom('instances as i')
    .innerJoin('forms as f', 'f.id', 'i.form_id')
    .select(['f.shared', (eb) => eb.fn.countAll<number>().as('n')])
    .where('f.owner_id', '=', ownerId)
    .where('f.deleted_at', 'is', null)
    .where('i.date_created', '>=', from)
    .where('i.date_created', '<', to)
    .groupBy('f.shared')
    .execute();
  const counts = { public: 0, private: 0 };
  for (const row of rows) counts[row.shared ? 'public' : 'private'] += Number(row.n);
  return counts;
}

/** One attachment of `a` as the data API lists it, for a record of form `formId`. */
function attachmentJson(baseUrl: string, formId: RawBuilder<unknown>) {
  return sql`jsonb_build_object(
    'download_url', ${baseUrl} || '/api/v1/files/' || a.id || '?filename=' || gather_url_encode(a.name),
    'mimetype', a.mimetype, 'filename', a.name, 'name', a.name,
    'instance', a.instance_id, 'xform', ${formId}, 'id', a.id)`;
}

/** Where recordColumns finds a record's `_attachments` list (jsonb text, NULL for none). */
interface AttachmentSource {
  /** Joined to RECORD_FROM. */
  join: RawBuilder<unknown>;
  list: RawBuilder<unknown>;
}

/**
 * The attachments of one record at a time, built only for a record that has one: an aggregate
 * set up for every record cost PostgreSQL about 4 µs a record with no attachment.
 */
function attachmentsPerRecord(baseUrl: string): AttachmentSource {
  return {
    join: sql``,
    list: sql`CASE WHEN EXISTS (SELECT FROM attachments a WHERE a.instance_id = i.id)
      THEN (SELECT jsonb_agg(${attachmentJson(baseUrl, sql`i.form_id`)} ORDER BY a.id)::text FROM attachments a WHERE a.instance_id = i.id) END`,
  };
}

/**
 * The attachments of the records whose ids lie in [first, last], from one scan of that range of
 * the attachments' index: as cheap as listing no attachments when there are none, and no probe
 * per record when there are.
 */
function attachmentsInRange(baseUrl: string, formId: number, first: number, last: number): AttachmentSource {
  return attachmentsBetween(baseUrl, formId, sql`${first}::int`, sql`${last}::int`);
}

/** attachmentsInRange with the range's ends as expressions of the statement. */
function attachmentsBetween(baseUrl: string, formId: number, first: RawBuilder<unknown>, last: RawBuilder<unknown>): AttachmentSource {
  return {
    join: sql`LEFT JOIN (SELECT a.instance_id, jsonb_agg(${attachmentJson(baseUrl, sql`${formId}::int`)} ORDER BY a.id)::text AS list
      FROM attachments a WHERE a.instance_id >= ${first} AND a.instance_id <= ${last} GROUP BY a.instance_id) att ON att.instance_id = i.id`,
    list: sql`att.list`,
  };
}

/**
 * What record-text.ts assembles a data API record from (RecordRow), selected from RECORD_FROM
 * and `attachments.join`. The usernames come from joins: a subquery per name cost PostgreSQL
 * about 1 µs a record each (bench/RESULTS.md, 2026-11-28).
 */
function recordColumns(attachments: AttachmentSource) {
  const micros = (column: string) => sql`(extract(epoch FROM ${sql.ref(column)}) * 1000000)::float8`;
  return sql`i.json_text AS json, i.id, i.form_id, ${micros('i.date_created')} AS created_us, ${micros('i.date_modified')} AS modified_us,
    ${micros('i.last_edited')} AS edited_us, submitter.username AS submitted_by_name, i.edited,
    last_editor.username AS last_edited_by_name, i.total_media, i.media_count, ${attachments.list} AS attachments`;
}

/** The records (instances i) with the users recordColumns names. */
const RECORD_FROM = sql`instances i LEFT JOIN users submitter ON submitter.id = i.submitted_by
  LEFT JOIN users last_editor ON last_editor.id = i.last_edited_by`;

export interface RecordPage {
  condition: RawBuilder<unknown>;
  order: RawBuilder<unknown>;
  limit: number | undefined;
  offset: number;
  /** Only this submitter's records (roles that see their own data only). */
  submittedBy?: number;
}

/**
 * The form's data version: changes whenever a record is added, edited or deleted (new
 * submissions move form_stats; everything else bumps forms.data_changes by trigger).
 */
export async function formDataVersion(db: DbOrTx, formId: number): Promise<string> {
  const result = await sql<{ version: string }>`SELECT f.data_changes || ':' ||
      coalesce((SELECT sum(s.submissions) FROM form_stats s WHERE s.form_id = f.id), 0) AS version
    FROM forms f WHERE f.id = ${formId}`.execute(db);
  return result.rows[0]?.version ?? '';
}

/**
 * Counts a change to a form's records that the instances triggers do not see: files that arrive
 * late for a record already stored (its media count, links and files change, its JSON does not).
 */
export async function noteRecordsChanged(db: DbOrTx, formId: number): Promise<void> {
  await db
    .updateTable('forms')
    .set((eb) => ({ data_changes: eb('data_changes', '+', 1) }))
    .where('id', '=', formId)
    .execute();
}

/** The ids of the live records matching a condition, in the requested order. */
export async function listMatchingIds(db: DbOrTx, formId: number, page: Pick<RecordPage, 'condition' | 'order' | 'submittedBy'>): Promise<Int32Array> {
  const own = page.submittedBy === undefined ? sql`TRUE` : sql`i.submitted_by = ${page.submittedBy}`;
  const result = await sql<{ id: number }>`SELECT i.id FROM instances i
    WHERE i.form_id = ${formId} AND i.deleted_at IS NULL AND ${own} AND (${page.condition})
    ORDER BY ${page.order}`.execute(db);
  return Int32Array.from(result.rows, (r) => r.id);
}

/** The form's data version (as formDataVersion) in its two parts. */
const VERSION_PARTS = sql`f.data_changes AS changes,
  coalesce((SELECT sum(s.submissions) FROM form_stats s WHERE s.form_id = f.id), 0)::int8 AS submissions`;

export interface VersionParts {
  /** formDataVersion's text: `changes:submissions`. */
  version: string;
  changes: number;
  submissions: number;
}

function versionParts(row: { changes: number | string; submissions: number | string } | undefined): VersionParts {
  if (!row) return { version: '', changes: -1, submissions: -1 };
  const changes = Number(row.changes);
  const submissions = Number(row.submissions);
  return { version: `${changes}:${submissions}`, changes, submissions };
}

type MatchQuery = Pick<RecordPage, 'condition' | 'order' | 'submittedBy'>;

export interface MatchSnapshot extends VersionParts {
  /** The form's highest live record id (0 for none). */
  highWater: number;
  ids: Int32Array;
  /** Per numeric sort key (in the order given), each id's value; NULL as +Infinity. */
  keys: Float64Array[];
}

/**
 * listMatchingIds with the version it answers for, the high water of record ids, and the
 * numeric sort keys, all read in one statement (one snapshot), so that records added later can
 * be told apart exactly (matchesAddedSince). One sort, one text of `id key…` entries.
 */
export async function matchSnapshot(db: DbOrTx, formId: number, match: MatchQuery, keys: readonly RawBuilder<unknown>[]): Promise<MatchSnapshot> {
  const own = match.submittedBy === undefined ? sql`TRUE` : sql`i.submitted_by = ${match.submittedBy}`;
  const entry = sql.join([sql`i.id::text`, ...keys.map((k) => sql`coalesce((${k})::text, 'Infinity')`)], sql` || ' ' || `);
  const result = await sql<{ changes: number; submissions: number; high: number | null; list: string | null }>`SELECT ${VERSION_PARTS},
      (SELECT max(i.id) FROM instances i WHERE i.form_id = f.id AND i.deleted_at IS NULL) AS high,
      (SELECT string_agg(${entry}, ',' ORDER BY ${match.order}) FROM instances i
        WHERE i.form_id = f.id AND i.deleted_at IS NULL AND ${own} AND (${match.condition})) AS list
    FROM forms f WHERE f.id = ${formId}`.execute(db);
  const row = result.rows[0];
  const entries = row?.list ? row.list.split(',') : [];
  const ids = new Int32Array(entries.length);
  const values = keys.map(() => new Float64Array(entries.length));
  entries.forEach((text, n) => {
    const parts = text.split(' ');
    ids[n] = Number(parts[0]);
    values.forEach((target, k) => (target[n] = Number(parts[k + 1])));
  });
  return { ...versionParts(row), highWater: Number(row?.high ?? 0), ids, keys: values };
}

export interface AddedRecords extends VersionParts {
  /** Every live record with an id above the high water: whether it matches, and its sort keys (NULL as +Infinity). */
  added: Array<{ id: number; matches: boolean; keys: number[] }>;
}

/**
 * The form's version and the live records with ids above `highWater`, in one snapshot: when the
 * only change since a matchSnapshot is new submissions, these are exactly them (their number is
 * the growth of the submission count) and a cached match list takes them in without a scan.
 */
export async function matchesAddedSince(db: DbOrTx, formId: number, highWater: number, match: MatchQuery, keys: readonly RawBuilder<unknown>[]): Promise<AddedRecords> {
  const own = match.submittedBy === undefined ? sql`TRUE` : sql`i.submitted_by = ${match.submittedBy}`;
  const fields = [sql`i.id`, sql`coalesce(${own} AND (${match.condition}), false)`, ...keys.map((k) => sql`(${k})`)];
  const result = await sql<{ changes: number; submissions: number; added: unknown }>`SELECT ${VERSION_PARTS},
      (SELECT json_agg(json_build_array(${sql.join(fields)})) FROM instances i
        WHERE i.form_id = f.id AND i.deleted_at IS NULL AND i.id > ${highWater}::int) AS added
    FROM forms f WHERE f.id = ${formId}`.execute(db);
  const row = result.rows[0];
  const raw = typeof row?.added === 'string' ? (JSON.parse(row.added) as unknown) : row?.added;
  const added = (Array.isArray(raw) ? (raw as unknown[][]) : []).map(([id, matches, ...values]) => ({
    id: Number(id),
    matches: matches === true,
    keys: values.map((v) => (v === null || v === undefined ? Infinity : Number(v))),
  }));
  return { ...versionParts(row), added };
}

/** Record texts for ids, in the order given (ids that vanished meanwhile are skipped). */
export async function recordTextsByIds(db: DbOrTx, formId: number, baseUrl: string, ids: readonly number[]): Promise<string[]> {
  return (await recordRowsByIds(db, formId, baseUrl, ids)).map(recordText);
}

/**
 * The rows of `queue` (a query of queued deliveries: id, instance_id, event, created_at, at most a
 * few hundred) with their records' texts, in id order: one statement, where the REST dispatcher
 * read its queue and then the records. `prepared` names the statement for a caller that reads
 * this way many times a second with a `queue` of the same text each time.
 */
export async function queuedRecordTexts(db: DbOrTx, formId: number, baseUrl: string, queue: RawBuilder<unknown>, prepared?: string): Promise<QueuedRecord[]> {
  const marker = sql.raw(prepared === undefined ? '' : preparedMarker(prepared));
  // As recordTextsByIds reads records in id order: one scan of the range of the form's live
  // records (and of their attachments) that the queued records span, with the ends found in the
  // statement (a lookup per record cost PostgreSQL about twice as much). Materialised: joined in
  // place, a plan could scan that range once per queued record.
  const first = sql`(SELECT min(q.instance_id) FROM q)`;
  const last = sql`(SELECT max(q.instance_id) FROM q)`;
  const attachments = attachmentsBetween(baseUrl, formId, first, last);
  const result = await sql<Omit<RecordRow, 'json'> & { json: string | null; delivery_id: string; event: DeliveryEvent; created_ms: number }>`${marker}WITH q AS MATERIALIZED (${queue}),
    r AS MATERIALIZED (SELECT ${recordColumns(attachments)} FROM ${RECORD_FROM} ${attachments.join}
      WHERE i.form_id = ${formId}::int AND i.deleted_at IS NULL AND i.id >= ${first} AND i.id <= ${last}
        AND i.id = ANY(ARRAY(SELECT q.instance_id FROM q)))
    SELECT q.id AS delivery_id, q.event, (extract(epoch FROM q.created_at) * 1000)::float8 AS created_ms, r.*
    FROM q LEFT JOIN r ON r.id = q.instance_id
    ORDER BY q.id`.execute(db);
  return result.rows.map((row) => ({ id: Number(row.delivery_id), event: row.event, createdMs: row.created_ms, text: hasRecord(row) ? recordText(row) : undefined }));
}

/** A row of a left join to the records that found its record. */
function hasRecord<T extends { json: string | null }>(row: T): row is T & { json: string } {
  return row.json !== null;
}

async function recordRowsByIds(db: DbOrTx, formId: number, baseUrl: string, ids: readonly number[]): Promise<RecordRow[]> {
  if (ids.length === 0) return [];
  const ascending = ids.every((id, n) => n === 0 || id > (ids[n - 1] ?? 0));
  if (ascending) {
    // Ids in order (the default order, or a page of it): one range scan of the form's live
    // records, several times cheaper than a lookup per id.
    const first = ids[0] ?? 0;
    const last = ids[ids.length - 1] ?? 0;
    const attachments = attachmentsInRange(baseUrl, formId, first, last);
    const result = await sql<RecordRow>`SELECT ${recordColumns(attachments)} FROM ${RECORD_FROM} ${attachments.join}
      WHERE i.form_id = ${formId} AND i.deleted_at IS NULL AND i.id >= ${first}::int AND i.id <= ${last}::int
        AND i.id = ANY(${[...ids]}::int[])
      ORDER BY i.id`.execute(db);
    return result.rows;
  }
  // One primary-key lookup per id, whatever the planner believes about the form's size (LIMIT 1
  // keeps the subquery from being merged into a join, which with stale statistics became a scan
  // of the whole form per page).
  const result = await sql<RecordRow>`SELECT r.*
    FROM unnest(${ids}::int[]) WITH ORDINALITY AS wanted(id, position)
    CROSS JOIN LATERAL (SELECT ${recordColumns(attachmentsPerRecord(baseUrl))} FROM ${RECORD_FROM}
      WHERE i.id = wanted.id AND i.form_id = ${formId} AND i.deleted_at IS NULL LIMIT 1) r
    ORDER BY wanted.position`.execute(db);
  return result.rows;
}

export async function countRecords(db: DbOrTx, formId: number, condition: RawBuilder<unknown>, submittedBy?: number): Promise<number> {
  const own = submittedBy === undefined ? sql`TRUE` : sql`i.submitted_by = ${submittedBy}`;
  const result = await sql<{ n: number }>`SELECT count(*)::int AS n FROM instances i
    WHERE i.form_id = ${formId} AND i.deleted_at IS NULL AND ${own} AND (${condition})`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

export async function findRecordText(db: DbOrTx, formId: number, instanceId: number, baseUrl: string): Promise<{ text: string; submittedBy: number | null } | undefined> {
  const result = await sql<RecordRow & { submitted_by: number | null }>`SELECT ${recordColumns(attachmentsPerRecord(baseUrl))}, i.submitted_by FROM ${RECORD_FROM}
    WHERE i.form_id = ${formId} AND i.id = ${instanceId} AND i.deleted_at IS NULL`.execute(db);
  const row = result.rows[0];
  return row ? { text: recordText(row), submittedBy: row.submitted_by } : undefined;
}

export async function findAttachment(db: DbOrTx, attachmentId: number): Promise<{ form_id: number; submitted_by: number | null; name: string; mimetype: string; blob: string } | undefined> {
  return db
    .selectFrom('attachments as a')
    .innerJoin('instances as i', 'i.id', 'a.instance_id')
    .select(['i.form_id', 'i.submitted_by', 'a.name', 'a.mimetype', 'a.blob'])
    .where('a.id', '=', attachmentId)
    .where('i.deleted_at', 'is', null)
    .executeTakeFirst();
}

/** What receiving a submission needs to know about its form: one light query, no counters. */
/** Declared beside the cache of submit decisions that carries it (src/caches.ts). */
export type { SubmissionForm };

function submissionForms(db: DbOrTx) {
  return db
    .selectFrom('forms as f')
    .innerJoin('users as o', 'o.id', 'f.owner_id')
    .select(['f.id', 'f.owner_id', 'f.id_string', 'f.title', 'f.version', 'f.hash', 'f.downloadable', 'f.require_auth', 'f.encrypted', 'f.shared'])
    .where('f.deleted_at', 'is', null)
    .where('o.is_active', '=', true);
}

export async function findSubmissionFormByUuid(db: DbOrTx, uuid: string): Promise<SubmissionForm | undefined> {
  return submissionForms(db).where('f.uuid', '=', uuid).executeTakeFirst();
}

export async function findSubmissionFormByIdString(db: DbOrTx, ownerId: number, idString: string): Promise<SubmissionForm | undefined> {
  return submissionForms(db).where('f.owner_id', '=', ownerId).where(sql<string>`lower(f.id_string)`, '=', idString.toLowerCase()).executeTakeFirst();
}

/**
 * Stores a new submission and counts it in one statement (so no explicit transaction and one
 * round trip). Returns the new id, or undefined when the form already has this uuid.
 */
/**
 * No earlier version of a record had this uuid: a re-sent original of an edited record is a
 * duplicate of that record (onadata checks the edit history too), not a new record.
 */
const NOT_ARCHIVED = (instance: Pick<NewInstance, 'form_id' | 'uuid'>) =>
  sql`gather_uuid_never_archived(${instance.form_id}::int, ${instance.uuid}::text)`;

export async function insertInstanceCounted(db: DbOrTx, instance: NewInstance): Promise<number | undefined> {
  const geo = instance.has_geopoint ? 1 : 0;
  const result = await sql<{ id: number }>`
    WITH ins AS (
      INSERT INTO instances (form_id, uuid, xml, json, version, submitted_by, date_created, date_modified, total_media, has_geopoint, repeat_counts)
      SELECT ${instance.form_id}::int, ${instance.uuid}::text, ${instance.xml}::text, ${instance.json}::jsonb, ${instance.version}::text, ${instance.submitted_by}::int,
             ${instance.date_created}::timestamptz, ${instance.date_created}::timestamptz, ${instance.total_media}::int, ${instance.has_geopoint}::bool,
             ${instance.repeat_counts}::jsonb
      WHERE ${NOT_ARCHIVED(instance)}
      ON CONFLICT (form_id, uuid) DO NOTHING
      RETURNING id, form_id, date_created
    ), counted AS (
      INSERT INTO form_stats AS s (form_id, shard, submissions, geopoints, last_submission_time)
      SELECT form_id, id % ${STAT_SHARDS}, 1, ${geo}, date_created FROM ins
      ON CONFLICT (form_id, shard) DO UPDATE SET
        submissions = s.submissions + 1,
        geopoints = s.geopoints + EXCLUDED.geopoints,
        last_submission_time = GREATEST(coalesce(s.last_submission_time, EXCLUDED.last_submission_time), EXCLUDED.last_submission_time)
    ), queued AS (${QUEUE_INSERTED_RECORD})
    SELECT id FROM ins`.execute(db);
  return result.rows[0]?.id;
}

/** The facts a remembered submit decision rests on (see target-cache.ts). */
export interface SubmitFacts {
  form: SubmissionForm;
  ownerLogin: string | null;
  ownerRequireAuth: boolean;
  actorId: number | null;
  role: string | null;
}

/** Whether every fact of a remembered submit decision still holds (one row, `allowed`). */
function stillAllowed(facts: SubmitFacts): RawBuilder<unknown> {
  const { form } = facts;
  return sql`
      SELECT EXISTS (
        SELECT 1 FROM forms f JOIN users o ON o.id = f.owner_id
        WHERE f.id = ${form.id}::int AND f.owner_id = ${form.owner_id}::int AND f.deleted_at IS NULL AND o.is_active
          AND f.hash = ${form.hash}::text AND f.version = ${form.version}::text AND f.id_string = ${form.id_string}::text
          AND f.downloadable AND f.require_auth = ${form.require_auth}::bool AND f.shared = ${form.shared}::bool AND f.encrypted = ${form.encrypted}::bool
          AND o.require_auth = ${facts.ownerRequireAuth}::bool
          AND (${facts.ownerLogin}::text IS NULL OR lower(o.username) = ${facts.ownerLogin}::text)
          AND (${facts.actorId}::int IS NULL OR
               (SELECT r.role FROM form_roles r WHERE r.form_id = f.id AND r.user_id = ${facts.actorId}::int) IS NOT DISTINCT FROM ${facts.role}::text)
      ) AS allowed
`;
}

/** The number of rows of VALUES a batch of `count` records is sent in (see insertInstancesIfStillAllowed). */
function batchStatementSize(count: number): number {
  let size = 1;
  while (size < count) size *= 2;
  return size;
}

/**
 * insertInstanceCounted for several new records of one form, in one statement, but only if every
 * fact of a remembered submit decision still holds, read once in the same statement: the form is
 * live, unchanged (definition, version, settings) and still the owner's, the owner active with
 * the same require_auth (and the same username when the URL named it), and the caller's role on
 * the form the same. Each record is stored unless its instanceID is already the form's (or was,
 * see NOT_ARCHIVED); records are inserted in the order given, so of two with the same instanceID
 * the first is stored. `ids[i]` is the stored id of `instances[i]`, undefined when it was not
 * stored; `allowed: false` stores none, and the caller decides again from the database.
 */
export async function insertInstancesIfStillAllowed(
  db: DbOrTx,
  instances: readonly NewInstance[],
  facts: SubmitFacts,
): Promise<{ allowed: boolean; ids: Array<number | undefined> }> {
  const { form } = facts;
  if (instances.some((instance) => instance.form_id !== form.id)) throw new Error('a batch of submissions is for one form');
  // Each value is a parameter of its own, a row of VALUES per record: arrays of texts were
  // escaped element by element by the driver and parsed again by the database. The rows are
  // padded with empty ones to a power of two, so that a few statements serve every batch size.
  const size = batchStatementSize(instances.length);
  const rows = Array.from({ length: size }, (_, n) => {
    const i = instances[n];
    return sql`(${i?.uuid ?? null}::text, ${i?.xml ?? null}::text, ${i?.json ?? null}::text, ${i?.version ?? null}::text, ${i?.submitted_by ?? null}::int,
      ${i?.date_created ?? null}::timestamptz, ${i?.total_media ?? null}::int, ${i?.has_geopoint ?? null}::bool, ${i?.repeat_counts ?? null}::text, ${sql.raw(String(n))})`;
  });
  const result = await sql<{ allowed: boolean; stored: Array<{ uuid: string; id: number }> | null }>`${sql.raw(preparedMarker(`insert_instances_if_still_allowed_${size}`))}
    WITH still AS (${stillAllowed(facts)}), batch AS (
      SELECT * FROM (VALUES ${sql.join(rows)}) AS b(uuid, xml, json, version, submitted_by, date_created, total_media, has_geopoint, repeat_counts, n)
      WHERE b.uuid IS NOT NULL
    ), ins AS (
      INSERT INTO instances (form_id, uuid, xml, json, version, submitted_by, date_created, date_modified, total_media, has_geopoint, repeat_counts)
      SELECT ${form.id}::int, b.uuid, b.xml, b.json::jsonb, b.version, b.submitted_by, b.date_created, b.date_created, b.total_media, b.has_geopoint, b.repeat_counts::jsonb
      FROM batch b, still WHERE still.allowed AND gather_uuid_never_archived(${form.id}::int, b.uuid)
      ORDER BY b.n
      ON CONFLICT (form_id, uuid) DO NOTHING
      RETURNING id, form_id, uuid, date_created, has_geopoint
    ), counted AS (
      -- Shards in one order: two batches stored at once (PostgreSQL) lock the shard rows they
      -- update in the same order, so neither waits on the other for a row it already holds.
      INSERT INTO form_stats AS s (form_id, shard, submissions, geopoints, last_submission_time)
      SELECT form_id, id % ${STAT_SHARDS}::int, count(*)::int, (count(*) FILTER (WHERE has_geopoint))::int, max(date_created) FROM ins GROUP BY 1, 2 ORDER BY 2
      ON CONFLICT (form_id, shard) DO UPDATE SET
        submissions = s.submissions + EXCLUDED.submissions,
        geopoints = s.geopoints + EXCLUDED.geopoints,
        last_submission_time = GREATEST(coalesce(s.last_submission_time, EXCLUDED.last_submission_time), EXCLUDED.last_submission_time)
    ), queued AS (${QUEUE_INSERTED_RECORD})
    SELECT still.allowed, (SELECT json_agg(json_build_object('uuid', uuid, 'id', id)) FROM ins) AS stored FROM still`.execute(db);
  const row = result.rows[0];
  const byUuid = new Map((row?.stored ?? []).map((stored) => [stored.uuid, stored.id]));
  // Only the first record of an instanceID was stored: later ones in the batch are its duplicates.
  const ids = instances.map((instance) => {
    const id = byUuid.get(instance.uuid);
    byUuid.delete(instance.uuid);
    return id;
  });
  return { allowed: row?.allowed === true, ids };
}

/** Records stored before their repeat counts were kept (migration 0013), deleted ones included. */
export async function countUncountedRecords(db: DbOrTx): Promise<number> {
  const result = await sql<{ n: number }>`SELECT count(*)::int AS n FROM instances WHERE repeat_counts IS NULL`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

/**
 * Stores the repeat counts of up to `limit` such records, counted from their record by the SQL
 * twin of src/lib/writers/layout/repeat-counts.ts; rows another worker holds are skipped. Returns how many were stored.
 */
export async function storeRepeatCountsOfOldRecords(db: DbOrTx, limit: number): Promise<number> {
  const result = await sql`UPDATE instances SET repeat_counts = gather_repeat_counts(json)
    WHERE id IN (SELECT id FROM instances WHERE repeat_counts IS NULL ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED)`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
