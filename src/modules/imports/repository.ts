// SQL for record imports: writing checked rows into the form's records (straight, or staged first
// and applied in one statement per kind), remembering applied imports, and the uploaded files of
// import jobs.
import { sql, type RawBuilder } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';
import { preparedMarker } from '../../platform/prepared-marker.ts';
import { recordReviewKeys } from '../reviews/repository.ts';
import { QUEUE_EDITED_RECORDS, QUEUE_INSERTED_RECORD } from '../restservices/repository.ts';

export interface StagedRow {
  seq: number;
  targetUuid: string | null;
  uuid: string;
  xml: string;
  json: string;
  version: string;
  submittedBy: number;
  dateCreated: string | null;
  totalMedia: number;
  /** JSON array of the attachment names the record references. */
  media: string;
  hasGeopoint: boolean;
  /** Items of each repeat as JSON object text (src/lib/writers/layout/repeat-counts.ts). */
  repeatCounts: string;
}

/**
 * Which of these uuids are live records of the form, leaving out records this transaction wrote
 * (an import writing straight into instances asks about the form as it was before the import).
 */
export async function findLiveUuids(db: DbOrTx, formId: number, uuids: readonly string[]): Promise<Set<string>> {
  if (uuids.length === 0) return new Set();
  // One probe of the (form_id, uuid) key per uuid, whatever the statistics say. Asked as one
  // `uuid = ANY(…)` with `deleted_at IS NULL`, a plan from statistics taken before the import
  // scanned every record of the form per batch, the rows the import is writing included (4 s of
  // PostgreSQL CPU over 100,000 rows). LIMIT 1 keeps the subquery a per-uuid probe; deleted_at is
  // read rather than filtered on, as a condition it would let a partial index on form_id win.
  const result = await sql<{ uuid: string; live: boolean }>`SELECT i.uuid, i.live FROM unnest(${[...uuids]}::text[]) AS wanted(uuid)
    CROSS JOIN LATERAL (SELECT uuid, deleted_at IS NULL AS live FROM instances
      WHERE form_id = ${formId} AND uuid = wanted.uuid AND coalesce(xmin <> pg_current_xact_id_if_assigned()::xid, true) LIMIT 1) i`.execute(db);
  return new Set(result.rows.filter((r) => r.live).map((r) => r.uuid));
}

/** Whether the form has a live record (one this transaction wrote aside, as in findLiveUuids). */
export async function formHasLiveRecords(db: DbOrTx, formId: number): Promise<boolean> {
  const result = await sql<{ found: boolean }>`SELECT EXISTS (SELECT 1 FROM instances
    WHERE form_id = ${formId} AND deleted_at IS NULL AND coalesce(xmin <> pg_current_xact_id_if_assigned()::xid, true)) AS found`.execute(db);
  return result.rows[0]?.found === true;
}

/** Active accounts by lower-cased username. */
export async function findUserIdsByUsername(db: DbOrTx, usernames: readonly string[]): Promise<Map<string, number>> {
  if (usernames.length === 0) return new Map();
  const lower = usernames.map((u) => u.toLowerCase());
  const result = await sql<{ id: number; username: string }>`SELECT id, lower(username) AS username FROM users
    WHERE is_active AND lower(username) = ANY(${lower}::text[])`.execute(db);
  return new Map(result.rows.map((r) => [r.username, r.id]));
}

/** One statement for a whole batch: each column travels as one array parameter. */
export async function stageRows(db: DbOrTx, importId: string, rows: readonly StagedRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`INSERT INTO import_rows (import_id, seq, target_uuid, uuid, xml, json, version, submitted_by, date_created, total_media, media, has_geopoint,
      repeat_counts)
    SELECT ${importId}, * FROM unnest(
      ${rows.map((r) => r.seq)}::int[], ${rows.map((r) => r.targetUuid)}::text[], ${rows.map((r) => r.uuid)}::text[],
      ${rows.map((r) => r.xml)}::text[], ${rows.map((r) => r.json)}::text[], ${rows.map((r) => r.version)}::text[],
      ${rows.map((r) => r.submittedBy)}::int[], ${rows.map((r) => r.dateCreated)}::text[], ${rows.map((r) => r.totalMedia)}::int[],
      ${rows.map((r) => r.media)}::text[], ${rows.map((r) => r.hasGeopoint)}::bool[], ${rows.map((r) => r.repeatCounts)}::text[])`.execute(db);
}

export async function deleteStagedRows(db: DbOrTx, importId: string): Promise<void> {
  await sql`DELETE FROM import_rows WHERE import_id = ${importId}`.execute(db);
}

export interface ApplyOptions {
  importId: string;
  formId: number;
  actorId: number;
  now: Date;
  overwrite: boolean;
  status: string;
  /** Only the staged rows with from <= seq < to (a batch of a publish); all of them without. */
  seqRange?: { from: number; to: number };
}

function inRange(options: ApplyOptions): RawBuilder<unknown> {
  const range = options.seqRange;
  return range ? sql`AND r.seq >= ${range.from} AND r.seq < ${range.to}` : sql``;
}

/** Soft-deletes every live record of the form (`overwrite=true`). */
export async function softDeleteAllRecords(db: DbOrTx, formId: number, actorId: number, now: Date): Promise<void> {
  await sql`UPDATE instances SET deleted_at = ${now}, deleted_by = ${actorId}, date_modified = ${now}
    WHERE form_id = ${formId} AND deleted_at IS NULL`.execute(db);
}

/**
 * Staged edits replace the records they name, each earlier version kept in the history as an
 * edit through deprecatedID keeps it. Returns how many records were edited.
 */
export async function applyStagedEdits(db: DbOrTx, options: ApplyOptions): Promise<number> {
  const { importId, formId, actorId, now, status } = options;
  // Each target found by one probe of the (form_id, uuid) key (as in editRecords): joined as a
  // whole, a plan could read every record of the form for each batch of a publish.
  const target = sql`CROSS JOIN LATERAL (SELECT id, deleted_at FROM instances WHERE form_id = ${formId} AND uuid = r.target_uuid LIMIT 1) t`;
  await sql`INSERT INTO instance_history (instance_id, form_id, uuid, xml, date_created)
    SELECT i.id, i.form_id, i.uuid, i.xml, ${now}::timestamptz
    FROM import_rows r ${target} JOIN instances i ON i.id = t.id
    WHERE r.import_id = ${importId} AND r.target_uuid IS NOT NULL ${inRange(options)} AND t.deleted_at IS NULL
    ORDER BY r.seq`.execute(db);
  const result = await sql<{ n: number }>`WITH edited AS (UPDATE instances i SET
      uuid = r.uuid, xml = r.xml, json = r.json::jsonb || ${recordReviewKeys(sql.ref('i.id'))}, version = r.version, status = ${status},
      total_media = r.total_media, has_geopoint = r.has_geopoint, repeat_counts = r.repeat_counts::jsonb, edited = true,
      last_edited = ${now}::timestamptz, last_edited_by = ${actorId}, date_modified = ${now}::timestamptz,
      media_count = (SELECT count(*)::int FROM attachments a
        WHERE a.instance_id = i.id AND a.name IN (SELECT jsonb_array_elements_text(r.media::jsonb)))
    FROM import_rows r ${target}
    WHERE r.import_id = ${importId} AND r.target_uuid IS NOT NULL ${inRange(options)}
      AND i.id = t.id AND t.deleted_at IS NULL
    RETURNING i.id, i.form_id
    ), queued AS (${QUEUE_EDITED_RECORDS})
    SELECT count(*)::int AS n FROM edited`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

/**
 * Staged additions become records in file order. A uuid the form already has (live, deleted or in
 * an edit history) is a duplicate, as a re-sent submission is. Returns how many were added.
 */
export async function applyStagedAdditions(db: DbOrTx, options: ApplyOptions): Promise<number> {
  const { importId, formId, now, status } = options;
  const result = await sql<{ n: number }>`WITH ins AS (INSERT INTO instances
      (form_id, uuid, xml, json, version, status, submitted_by, date_created, date_modified, total_media, has_geopoint, repeat_counts)
    SELECT ${formId}, r.uuid, r.xml, r.json::jsonb, r.version, ${status}, r.submitted_by,
      coalesce(r.date_created::timestamptz, ${now}::timestamptz), ${now}::timestamptz, r.total_media, r.has_geopoint, r.repeat_counts::jsonb
    FROM import_rows r
    WHERE r.import_id = ${importId} AND r.target_uuid IS NULL ${inRange(options)}
      AND NOT EXISTS (SELECT 1 FROM instance_history h WHERE h.form_id = ${formId} AND h.uuid = r.uuid)
    ORDER BY r.seq
    ON CONFLICT (form_id, uuid) DO NOTHING
    RETURNING id, form_id
    ), queued AS (${QUEUE_INSERTED_RECORD})
    SELECT count(*)::int AS n FROM ins`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

/**
 * For the rest of this transaction, large values are compressed with lz4 where the server has it
 * (PostgreSQL 14+ built with lz4; PGlite is not): it compresses an imported record's XML and JSON
 * for about half the CPU of the default pglz. Reading needs nothing: each value names its method.
 */
export async function preferFastCompression(db: DbOrTx): Promise<void> {
  await sql`SELECT set_config('default_toast_compression', 'lz4', true)
    WHERE EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals))`.execute(db);
}

/**
 * Rows per statement of an import's writes. A statement of exactly this many new records has one
 * text, so it is prepared once per connection (platform/db.ts) rather than parsed and planned for
 * every batch: a fifth of PostgreSQL's CPU per imported row.
 */
export const RECORD_BATCH_ROWS = 100;

/** Columns of one row of the multi-row statements below, in their order (named by RECORD_ROW). */
function recordValues(r: StagedRow) {
  return sql`(${r.seq}::int, ${r.uuid}, ${r.xml}, ${r.json}::jsonb, ${r.version}, ${r.submittedBy}::int,
    ${r.dateCreated}::timestamptz, ${r.totalMedia}::int, ${r.hasGeopoint}::bool, ${r.media}, ${r.targetUuid}, ${r.repeatCounts}::jsonb)`;
}

const RECORD_ROW = sql.raw('r (seq, uuid, xml, json, version, submitted_by, date_created, total_media, has_geopoint, media, target_uuid, repeat_counts)');

/**
 * New records, in this order, straight into instances (one statement for the lot). As in
 * applyStagedAdditions, a uuid the form already has is a duplicate. Returns how many were added.
 */
export async function insertRecords(db: DbOrTx, options: ApplyOptions, rows: readonly StagedRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const { formId, now, status } = options;
  const prepared = sql.raw(rows.length === RECORD_BATCH_ROWS ? preparedMarker(`import-insert-records-${RECORD_BATCH_ROWS}`) : '');
  const result = await sql<{ n: number }>`${prepared}WITH ins AS (INSERT INTO instances
      (form_id, uuid, xml, json, version, status, submitted_by, date_created, date_modified, total_media, has_geopoint, repeat_counts)
    SELECT ${formId}, r.uuid, r.xml, r.json, r.version, ${status}, r.submitted_by, coalesce(r.date_created, ${now}::timestamptz),
      ${now}::timestamptz, r.total_media, r.has_geopoint, r.repeat_counts
    FROM (VALUES ${sql.join(rows.map(recordValues))})
      AS ${RECORD_ROW}
    WHERE NOT EXISTS (SELECT 1 FROM instance_history h WHERE h.form_id = ${formId} AND h.uuid = r.uuid)
    ORDER BY r.seq
    ON CONFLICT (form_id, uuid) DO NOTHING
    RETURNING id, form_id
    ), queued AS (${QUEUE_INSERTED_RECORD})
    SELECT count(*)::int AS n FROM ins`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

/**
 * Edits straight into instances: each named record's current version goes to its history, then
 * the record takes the row's values (as applyStagedEdits does). Returns how many were edited.
 */
export async function editRecords(db: DbOrTx, options: ApplyOptions, rows: readonly StagedRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const { formId, actorId, now, status } = options;
  const targets = rows.map((r) => r.targetUuid);
  // Each target is found by one probe of the (form_id, uuid) key, as in findLiveUuids: joined on
  // `deleted_at IS NULL`, a plan from statistics taken before the import scanned every live
  // record of the form for each batch (20,000 edits: 0.3 ms of PostgreSQL CPU per row, growing).
  const target = (uuid: RawBuilder<unknown>) => sql`CROSS JOIN LATERAL (SELECT id, deleted_at FROM instances
      WHERE form_id = ${formId} AND uuid = ${uuid} LIMIT 1) t`;
  await sql`INSERT INTO instance_history (instance_id, form_id, uuid, xml, date_created)
    SELECT i.id, i.form_id, i.uuid, i.xml, ${now}::timestamptz
    FROM unnest(${targets}::text[]) WITH ORDINALITY AS r (target_uuid, n)
    ${target(sql.ref('r.target_uuid'))}
    JOIN instances i ON i.id = t.id
    WHERE t.deleted_at IS NULL
    ORDER BY r.n`.execute(db);
  const result = await sql<{ n: number }>`WITH edited AS (UPDATE instances i SET
      uuid = r.uuid, xml = r.xml, json = r.json || ${recordReviewKeys(sql.ref('i.id'))}, version = r.version, status = ${status},
      total_media = r.total_media, has_geopoint = r.has_geopoint, repeat_counts = r.repeat_counts::jsonb, edited = true,
      last_edited = ${now}::timestamptz, last_edited_by = ${actorId}, date_modified = ${now}::timestamptz,
      media_count = (SELECT count(*)::int FROM attachments a
        WHERE a.instance_id = i.id AND a.name IN (SELECT jsonb_array_elements_text(r.media::jsonb)))
    FROM (VALUES ${sql.join(rows.map(recordValues))})
      AS ${RECORD_ROW}
    ${target(sql.ref('r.target_uuid'))}
    WHERE i.id = t.id AND t.deleted_at IS NULL
    RETURNING i.id, i.form_id
    ), queued AS (${QUEUE_EDITED_RECORDS})
    SELECT count(*)::int AS n FROM edited`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

export async function recordImportResult(db: DbOrTx, importId: string, formId: number, result: unknown): Promise<void> {
  await sql`INSERT INTO import_results (import_id, form_id, result) VALUES (${importId}, ${formId}, ${JSON.stringify(result)}::jsonb)`.execute(db);
}

export async function findImportResult(db: DbOrTx, importId: string): Promise<unknown> {
  const result = await sql<{ result: unknown }>`SELECT result FROM import_results WHERE import_id = ${importId}`.execute(db);
  return result.rows[0]?.result;
}

export async function saveImportFilePiece(db: DbOrTx, importId: string, seq: number, data: Uint8Array): Promise<void> {
  await sql`INSERT INTO import_files (import_id, seq, data) VALUES (${importId}, ${seq}, ${data})`.execute(db);
}

/** One piece of an import job's file, read by key so that no cursor stays open. */
export async function findImportFilePiece(db: DbOrTx, importId: string, seq: number): Promise<Uint8Array | undefined> {
  const result = await sql<{ data: Uint8Array }>`SELECT data FROM import_files WHERE import_id = ${importId} AND seq = ${seq}`.execute(db);
  return result.rows[0]?.data;
}

export async function deleteImportFile(db: DbOrTx, importId: string): Promise<void> {
  await sql`DELETE FROM import_files WHERE import_id = ${importId}`.execute(db);
}

/**
 * Staged rows and files of import jobs that will not run again (failed, or killed on their last
 * attempt); the staged rows of an import being published stay until it is (import_publishes).
 */
export async function deleteAbandonedImports(db: DbOrTx, jobType: string): Promise<void> {
  const live = sql`SELECT j.payload->>'importId' FROM jobs j WHERE j.type = ${jobType} AND j.status IN ('PENDING', 'STARTED')
    AND j.payload->>'importId' IS NOT NULL`;
  await sql`DELETE FROM import_rows WHERE import_id NOT IN (${live}) AND import_id NOT IN (SELECT import_id FROM import_publishes)`.execute(db);
  await sql`DELETE FROM import_files WHERE import_id NOT IN (${live})`.execute(db);
}

export interface PublishRow {
  import_id: string;
  form_id: number;
  actor_id: number;
  overwrite: boolean;
  delete_through: number | null;
  staged: unknown;
  next_seq: number;
  additions: number;
  updates: number;
  started_at: Date;
}

/** How many of the staged edits' targets are live records of the form. */
export async function countLiveEditTargets(db: DbOrTx, importId: string, formId: number): Promise<number> {
  const result = await countLiveEditTargetsQuery(importId, formId).execute(db);
  return result.rows[0]?.n ?? 0;
}

/** countLiveEditTargets' statement (its plan is tested). */
export function countLiveEditTargetsQuery(importId: string, formId: number): RawBuilder<{ n: number }> {
  // One probe of the (form_id, uuid) key per staged edit, as in findLiveUuids: with `deleted_at
  // IS NULL` inside the subquery, the partial index on live records' form_id won and each edit
  // scanned every live record of the form (PGlite, 8,000 edits: 7.4 s in one transaction, which
  // held the server's only session and event loop; 30,000: minutes).
  return sql<{ n: number }>`SELECT count(*)::int AS n FROM import_rows r
    CROSS JOIN LATERAL (SELECT deleted_at FROM instances i WHERE i.form_id = ${formId} AND i.uuid = r.target_uuid LIMIT 1) t
    WHERE r.import_id = ${importId} AND r.target_uuid IS NOT NULL AND t.deleted_at IS NULL`;
}

export async function maxInstanceId(db: DbOrTx, formId: number): Promise<number | null> {
  const result = await sql<{ id: number | null }>`SELECT max(id) AS id FROM instances WHERE form_id = ${formId}`.execute(db);
  return result.rows[0]?.id ?? null;
}

export async function insertPublish(db: DbOrTx, row: Omit<PublishRow, 'next_seq' | 'additions' | 'updates'>): Promise<void> {
  await sql`INSERT INTO import_publishes (import_id, form_id, actor_id, overwrite, delete_through, staged, started_at)
    VALUES (${row.import_id}, ${row.form_id}, ${row.actor_id}, ${row.overwrite}, ${row.delete_through}, ${JSON.stringify(row.staged)}::jsonb,
      ${row.started_at})`.execute(db);
}

export async function findPublish(db: DbOrTx, importId: string): Promise<PublishRow | undefined> {
  const result = await sql<PublishRow>`SELECT * FROM import_publishes WHERE import_id = ${importId}`.execute(db);
  return result.rows[0];
}

export async function findPublishIds(db: DbOrTx): Promise<string[]> {
  const result = await sql<{ import_id: string }>`SELECT import_id FROM import_publishes ORDER BY started_at`.execute(db);
  return result.rows.map((r) => r.import_id);
}

/** Soft-deletes up to `limit` live records of the form with ids up to `through`; answers how many. */
export async function softDeleteRecordsThrough(db: DbOrTx, formId: number, through: number, actorId: number, now: Date, limit: number): Promise<number> {
  const result = await sql`UPDATE instances SET deleted_at = ${now}, deleted_by = ${actorId}, date_modified = ${now}
    WHERE id IN (SELECT id FROM instances WHERE form_id = ${formId} AND deleted_at IS NULL AND id <= ${through} ORDER BY id LIMIT ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

export async function setPublishDeleteThrough(db: DbOrTx, importId: string, through: number | null): Promise<void> {
  await sql`UPDATE import_publishes SET delete_through = ${through} WHERE import_id = ${importId}`.execute(db);
}

export async function deleteStagedRange(db: DbOrTx, importId: string, range: { from: number; to: number }): Promise<void> {
  await sql`DELETE FROM import_rows WHERE import_id = ${importId} AND seq >= ${range.from} AND seq < ${range.to}`.execute(db);
}

/** Counts a published batch and moves on past it. */
export async function addPublished(db: DbOrTx, importId: string, written: { nextSeq: number; additions: number; updates: number }): Promise<void> {
  await sql`UPDATE import_publishes SET next_seq = ${written.nextSeq}, additions = additions + ${written.additions},
    updates = updates + ${written.updates} WHERE import_id = ${importId}`.execute(db);
}

export async function deletePublish(db: DbOrTx, importId: string): Promise<void> {
  await sql`DELETE FROM import_publishes WHERE import_id = ${importId}`.execute(db);
}
