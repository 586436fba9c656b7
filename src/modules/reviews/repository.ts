// SQL for submission reviews, their comments (notes on the reviewed record), and the review and
// note keys kept in each record's stored JSON.
import { sql, type RawBuilder } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';

export const REVIEW_STATUSES = ['1', '2', '3'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

/** The record keys a review sets (onadata's common_tags REVIEW_*). */
export const RECORD_REVIEW_KEYS = ['_review_status', '_review_comment', '_review_date'] as const;

/** onadata's instance_field of a review's note. */
export const REVIEW_NOTE_FIELD = '_review_status';

const ISO = (column: RawBuilder<unknown>) => sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"')`;

/**
 * The keys notes and reviews keep in the record of instance `instanceId` (an SQL expression):
 * `_notes` when the record has notes, and its latest live review's `_review_status`,
 * `_review_date` and (when it has one) `_review_comment`. An empty object when it has neither,
 * so that `new_json || recordReviewKeys(i.id)` keeps a new version's own `_notes: []`.
 */
export function recordReviewKeys(instanceId: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(coalesce((SELECT jsonb_build_object('_notes', jsonb_agg(jsonb_build_object(
        'id', n.id, 'owner', coalesce(u.username, ''), 'note', n.note, 'instance_field', n.instance_field,
        'created_by', coalesce(to_jsonb(n.created_by), '""'::jsonb)) ORDER BY n.id))
      FROM instance_notes n LEFT JOIN users u ON u.id = n.created_by
      WHERE n.instance_id = ${instanceId} HAVING count(*) > 0), '{}'::jsonb)
    || coalesce((SELECT jsonb_build_object('_review_status', r.status, '_review_date', ${ISO(sql`r.date_created`)})
        || CASE WHEN coalesce(rn.note, '') <> '' THEN jsonb_build_object('_review_comment', rn.note) ELSE '{}'::jsonb END
      FROM submission_reviews r LEFT JOIN instance_notes rn ON rn.id = r.note_id
      WHERE r.instance_id = ${instanceId} AND r.deleted_at IS NULL
      ORDER BY r.date_modified DESC, r.id DESC LIMIT 1), '{}'::jsonb))`;
}

/**
 * Rewrites the review and note keys of these records from the tables (after a review write), and
 * marks them modified as onadata's save does.
 */
export async function refreshRecordReviewKeys(db: DbOrTx, instanceIds: readonly number[], now: Date): Promise<void> {
  if (instanceIds.length === 0) return;
  await sql`UPDATE instances i
    SET json = (i.json - ${[...RECORD_REVIEW_KEYS]}::text[]) || jsonb_build_object('_notes', '[]'::jsonb) || ${recordReviewKeys(sql.ref('i.id'))},
      date_modified = ${now}::timestamptz
    WHERE i.id = ANY(${[...instanceIds]}::int[])`.execute(db);
}

/**
 * Whether the form has review enabled: a live `submission_review` metadata entry whose value is
 * true (onadata's MetaData.submission_review, checked as str_to_bool reads it).
 */
export async function isReviewEnabled(db: DbOrTx, formId: number): Promise<boolean> {
  const result = await sql<{ enabled: boolean }>`SELECT EXISTS (SELECT 1 FROM form_metadata
      WHERE form_id = ${formId} AND data_type = 'submission_review' AND deleted_at IS NULL
        AND lower(trim(data_value)) IN ('true', 't', '1')) AS enabled`.execute(db);
  return result.rows[0]?.enabled === true;
}

/** What deciding on a record's reviews needs: its form, and the caller's role on that form. */
export interface ReviewTarget {
  instance_id: number;
  form_id: number;
  submitted_by: number | null;
  shared: boolean;
  shared_data: boolean;
  role: string | null;
}

/** Live records of live forms among `instanceIds`, with the caller's form role. */
export async function findReviewTargets(db: DbOrTx, instanceIds: readonly number[], userId: number | undefined): Promise<ReviewTarget[]> {
  if (instanceIds.length === 0) return [];
  const result = await sql<ReviewTarget>`SELECT i.id AS instance_id, i.form_id, i.submitted_by, f.shared, f.shared_data, fr.role
    FROM instances i
    JOIN forms f ON f.id = i.form_id AND f.deleted_at IS NULL
    LEFT JOIN form_roles fr ON fr.form_id = f.id AND fr.user_id = ${userId ?? null}::int
    WHERE i.id = ANY(${[...instanceIds]}::int[]) AND i.deleted_at IS NULL`.execute(db);
  return result.rows;
}

export interface ReviewRow {
  id: number;
  instance_id: number;
  note_id: number | null;
  note: string | null;
  status: ReviewStatus;
  created_by: number | null;
  date_created: Date;
  date_modified: Date;
}

/** Who reads reviews: the records each form role may read (decided by the access module). */
export interface ReviewReader {
  userId: number | undefined;
  /** Roles that read every record of a form. */
  allRecordsRoles: readonly string[];
  /** Roles that read only the records they submitted. */
  ownRecordsRoles: readonly string[];
}

export interface ReviewFilter {
  ids?: readonly number[];
  instanceId?: number;
  formId?: number;
  status?: ReviewStatus;
  createdBy?: number;
}

/**
 * Live reviews of live records the reader may read, in id order (the access module's
 * recordReadScope): records of forms with public data, or on which they hold a role reading all
 * records, or one reading their own and the record is theirs.
 */
export async function listReadableReviews(db: DbOrTx, reader: ReviewReader, filter: ReviewFilter): Promise<ReviewRow[]> {
  const conditions: RawBuilder<unknown>[] = [sql`r.deleted_at IS NULL`];
  if (filter.ids !== undefined) conditions.push(sql`r.id = ANY(${[...filter.ids]}::int[])`);
  if (filter.instanceId !== undefined) conditions.push(sql`r.instance_id = ${filter.instanceId}`);
  if (filter.formId !== undefined) conditions.push(sql`i.form_id = ${filter.formId}`);
  if (filter.status !== undefined) conditions.push(sql`r.status = ${filter.status}`);
  if (filter.createdBy !== undefined) conditions.push(sql`r.created_by = ${filter.createdBy}`);
  const user = reader.userId ?? null;
  const result = await sql<ReviewRow>`SELECT r.id, r.instance_id, r.note_id, n.note, r.status, r.created_by, r.date_created, r.date_modified
    FROM submission_reviews r
    JOIN instances i ON i.id = r.instance_id AND i.deleted_at IS NULL
    JOIN forms f ON f.id = i.form_id AND f.deleted_at IS NULL
    LEFT JOIN form_roles fr ON fr.form_id = f.id AND fr.user_id = ${user}::int
    LEFT JOIN instance_notes n ON n.id = r.note_id
    WHERE ${sql.join(conditions, sql` AND `)}
      AND (f.shared_data OR fr.role = ANY(${[...reader.allRecordsRoles]}::text[])
        OR (fr.role = ANY(${[...reader.ownRecordsRoles]}::text[]) AND i.submitted_by = ${user}::int))
    ORDER BY r.id`.execute(db);
  return result.rows;
}

export async function insertNote(db: DbOrTx, note: { instanceId: number; text: string; instanceField: string; createdBy: number; now: Date }): Promise<number> {
  const result = await sql<{ id: number }>`INSERT INTO instance_notes (instance_id, note, instance_field, created_by, date_created, date_modified)
    VALUES (${note.instanceId}, ${note.text}, ${note.instanceField}, ${note.createdBy}, ${note.now}::timestamptz, ${note.now}::timestamptz)
    RETURNING id`.execute(db);
  const row = result.rows[0];
  if (!row) throw new Error('inserting a note returned no row');
  return row.id;
}

export async function updateNoteText(db: DbOrTx, noteId: number, text: string, now: Date): Promise<void> {
  await sql`UPDATE instance_notes SET note = ${text}, date_modified = ${now}::timestamptz WHERE id = ${noteId}`.execute(db);
}

export async function deleteNote(db: DbOrTx, noteId: number): Promise<void> {
  await sql`DELETE FROM instance_notes WHERE id = ${noteId}`.execute(db);
}

export async function insertReview(
  db: DbOrTx,
  review: { instanceId: number; noteId: number | null; status: ReviewStatus; createdBy: number; now: Date },
): Promise<number> {
  const result = await sql<{ id: number }>`INSERT INTO submission_reviews (instance_id, note_id, status, created_by, date_created, date_modified)
    VALUES (${review.instanceId}, ${review.noteId}, ${review.status}, ${review.createdBy}, ${review.now}::timestamptz, ${review.now}::timestamptz)
    RETURNING id`.execute(db);
  const row = result.rows[0];
  if (!row) throw new Error('inserting a review returned no row');
  return row.id;
}

/** Locks these records (FOR UPDATE) so that concurrent review writes rewrite their keys in turn. */
export async function lockInstances(db: DbOrTx, instanceIds: readonly number[]): Promise<void> {
  await sql`SELECT id FROM instances WHERE id = ANY(${[...instanceIds]}::int[]) ORDER BY id FOR UPDATE`.execute(db);
}

/** Changes a live review; false when it is gone (deleted meanwhile). */
export async function updateReview(db: DbOrTx, reviewId: number, change: { status: ReviewStatus; noteId: number | null; now: Date }): Promise<boolean> {
  const result = await sql`UPDATE submission_reviews SET status = ${change.status}, note_id = ${change.noteId}, date_modified = ${change.now}::timestamptz
    WHERE id = ${reviewId} AND deleted_at IS NULL`.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
}

/** Marks a live review deleted; false when it already was. */
export async function softDeleteReview(db: DbOrTx, reviewId: number, userId: number, now: Date): Promise<boolean> {
  const result = await sql`UPDATE submission_reviews SET deleted_at = ${now}::timestamptz, deleted_by = ${userId}, date_modified = ${now}::timestamptz
    WHERE id = ${reviewId} AND deleted_at IS NULL`.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
}

/** Locks a live review for a change (FOR UPDATE); undefined when there is none. */
export async function lockLiveReview(db: DbOrTx, reviewId: number): Promise<{ id: number; instance_id: number; note_id: number | null } | undefined> {
  const result = await sql<{ id: number; instance_id: number; note_id: number | null }>`SELECT id, instance_id, note_id FROM submission_reviews
    WHERE id = ${reviewId} AND deleted_at IS NULL FOR UPDATE`.execute(db);
  return result.rows[0];
}
