// The OData feed's own reads: light ones, the stored record text and the few columns an entity
// shows (not the data API's full record), for the records and for a repeat's rows unnested in SQL.
import { sql, type RawBuilder } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';
import { BinaryRows, copyBinaryRows, type CopyBuffers } from '../../platform/pg-copy.ts';
import { ordinals, rowsAreObjects, type Scope } from './scope.ts';

/** Which rows of a scope: a form's live records (only the submitter's, when set), and a condition. */
export interface RowFilter {
  readonly formId: number;
  readonly submittedBy: number | undefined;
  readonly condition: RawBuilder<unknown>;
}

export interface RowRead extends RowFilter {
  readonly order: RawBuilder<unknown>;
  /** Each row's order terms as text (for the keyset token of the next page). */
  readonly terms: readonly RawBuilder<unknown>[];
  readonly limit: number;
  readonly offset: number;
}

/** A record's stored answers (JSON text) and its meta columns. */
export interface RecordRow {
  readonly id: number;
  readonly uuid: string;
  /** Null when the read was told that the caller has the record's entity for this `stamp`. */
  readonly json: string | null;
  /** The row version's stamp (the transaction that wrote it): any change to the record changes it. */
  readonly stamp: string;
  readonly submitted: string;
  readonly modified: string;
  readonly submitter: string | null;
  readonly edited: boolean;
  readonly media_count: number;
  readonly total_media: number;
  readonly status: string;
  readonly version: string;
  /** The order terms' values, as texts in a JSON array (termValues): read only for the row a chunk ends on. */
  readonly terms: string | null;
}

/**
 * A record whose version the caller named as known (readRecords): its id, stamp, order terms and
 * its submitter's name only. Every other column is of the record's own row, which the version
 * stamps, so the caller has them already; the submitter's name is another table's.
 */
export type KnownRecordRow = { readonly [K in keyof RecordRow]: K extends 'id' | 'stamp' | 'submitter' | 'terms' ? RecordRow[K] : null };

/** A repeat item (JSON text), its record, and its position at each level from the record down. */
export interface RepeatRow {
  readonly id: number;
  readonly uuid: string;
  readonly item: string;
  readonly positions: readonly number[];
  readonly terms: string | null;
}

/** A row's order terms' values, from its `terms` column. */
export function termValues(terms: string | null): ReadonlyArray<string | null> {
  return terms === null ? [] : (JSON.parse(terms) as ReadonlyArray<string | null>);
}

function live(rows: Pick<RowFilter, 'formId' | 'submittedBy'>): RawBuilder<unknown> {
  const own = rows.submittedBy === undefined ? sql`TRUE` : sql`i.submitted_by = ${rows.submittedBy}`;
  return sql`i.form_id = ${rows.formId} AND i.deleted_at IS NULL AND ${own}`;
}

function where(scope: Scope, rows: RowFilter): RawBuilder<unknown> {
  return sql`${live(rows)} AND ${rowsAreObjects(scope)} AND (${rows.condition})`;
}

function termsColumn(read: RowRead): RawBuilder<unknown> {
  // As text: the driver would parse every row's JSON, and only a chunk's last row needs its terms.
  return read.terms.length === 0 ? sql`NULL::text` : sql`json_build_array(${sql.join([...read.terms])})::text`;
}

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"'`;

/** A record version as `id:stamp`, as the caller names the versions it has written (readRecords' `known`). */
const VERSION = sql`(i.id::text || ':' || i.xmin::text)`;

/**
 * `known`: the record versions (`id:stamp`, comma-separated) whose entities the caller already
 * has; such a record comes as a KnownRecordRow: its stored text, the bulk of a row, is neither
 * read from its out-of-line storage nor sent, nor are the columns the caller has (a page read
 * again and again is then mostly ids and stamps, for the driver to parse and the collector to
 * sweep). One text rather than an array parameter: the driver would quote and escape each of the
 * thousands of versions into an array literal on every read. The planner makes the array once
 * (a constant of the statement), not once per row.
 */
export async function readRecords(db: DbOrTx, scope: Scope, read: RowRead, known?: string): Promise<Array<RecordRow | KnownRecordRow>> {
  const iso = (column: RawBuilder<unknown>) => sql<string>`to_char(${column} AT TIME ZONE 'UTC', ${sql.raw(ISO)})`;
  const some = known !== undefined && known !== '';
  // Whether the row's version is known, once per row (OFFSET 0 keeps it from being inlined into each column).
  const knownJoin = some ? sql`CROSS JOIN LATERAL (SELECT ${VERSION} = ANY(string_to_array(${known}::text, ',')) AS known OFFSET 0) AS k` : sql``;
  const unlessKnown = (column: RawBuilder<unknown>): RawBuilder<unknown> => (some ? sql`CASE WHEN k.known THEN NULL ELSE ${column} END` : column);
  const result = await sql<RecordRow | KnownRecordRow>`SELECT i.id, ${unlessKnown(sql`i.uuid`)} AS uuid, ${unlessKnown(sql`i.json_text`)} AS json, i.xmin::text AS stamp,
      ${unlessKnown(iso(sql`i.date_created`))} AS submitted, ${unlessKnown(iso(sql`i.date_modified`))} AS modified,
      (SELECT username FROM users WHERE id = i.submitted_by) AS submitter,
      ${unlessKnown(sql`i.edited`)} AS edited, ${unlessKnown(sql`i.media_count`)} AS media_count, ${unlessKnown(sql`i.total_media`)} AS total_media,
      ${unlessKnown(sql`i.status`)} AS status, ${unlessKnown(sql`i.version`)} AS version, ${termsColumn(read)} AS terms
    FROM instances i ${knownJoin} ${scope.joins} WHERE ${where(scope, read)}
    ORDER BY ${read.order} LIMIT ${read.limit} OFFSET ${read.offset}`.execute(db);
  return result.rows;
}

/** A record read by COPY: its stored text as UTF-8 bytes, src[start..end), and its columns. */
export interface CopiedRecordRow extends Omit<RecordRow, 'json'> {
  readonly src: Buffer;
  readonly start: number;
  readonly end: number;
}

const COPIED_FIELDS = 13;

/**
 * readRecords without `known`, its rows read by binary COPY on PostgreSQL (platform/pg-copy.ts):
 * each record's stored text stays bytes in a buffer of `buffers`, which the caller gives back
 * (`buffers.used(src, 1)`) once it has written the rows; the other columns are read now. Through
 * the driver, every row's text was decoded into a string, which the feed then parsed. Undefined
 * when `db` cannot COPY (PGlite, a transaction): the caller reads with readRecords.
 */
export async function copyRecords(db: DbOrTx, scope: Scope, read: RowRead, buffers: CopyBuffers): Promise<CopiedRecordRow[] | undefined> {
  const iso = (column: RawBuilder<unknown>) => sql<string>`to_char(${column} AT TIME ZONE 'UTC', ${sql.raw(ISO)})`;
  const query = sql`SELECT i.id, i.json_text, i.uuid, i.xmin::text, ${iso(sql`i.date_created`)}, ${iso(sql`i.date_modified`)},
      (SELECT username FROM users WHERE id = i.submitted_by), i.edited, i.media_count, i.total_media, i.status, i.version, ${termsColumn(read)}
    FROM instances i ${scope.joins} WHERE ${where(scope, read)}
    ORDER BY ${read.order} LIMIT ${read.limit} OFFSET ${read.offset}`.compile(db);
  const copied = await copyBinaryRows(db, query, buffers);
  if (!copied) return undefined;
  const { bytes } = copied;
  const rows: CopiedRecordRow[] = [];
  const row = new BinaryRows(bytes, copied.length, COPIED_FIELDS);
  const { start } = row;
  while (row.next()) {
    rows.push({
      id: row.int32(0),
      src: bytes,
      start: start[1] as number,
      end: row.fieldEnd(1),
      uuid: row.text(2),
      stamp: row.text(3),
      submitted: row.text(4),
      modified: row.text(5),
      submitter: row.isNull(6) ? null : row.text(6),
      edited: bytes[start[7] as number] === 1,
      media_count: row.int32(8),
      total_media: row.int32(9),
      status: row.text(10),
      version: row.text(11),
      terms: row.isNull(12) ? null : row.text(12),
    });
  }
  buffers.hold(bytes, 1);
  return rows;
}

/** Records' stored texts and stamps by `_id` (for rows read without their text). */
export async function readRecordTexts(db: DbOrTx, ids: readonly number[]): Promise<Map<number, { json: string; stamp: string }>> {
  const result = await sql<{ id: number; json: string; stamp: string }>`SELECT i.id, i.json_text AS json, i.xmin::text AS stamp
    FROM instances i WHERE i.id = ANY(${[...ids]}::int[])`.execute(db);
  return new Map(result.rows.map((r) => [r.id, { json: r.json, stamp: r.stamp }]));
}

/**
 * Records taken in `_id` order from a position (a batch), when a repeat's rows are read in their
 * own order: each chunk then unnests and sorts a bounded number of records, whatever the planner
 * believes about the form's size, instead of all of them.
 */
export interface RecordBatch {
  /** The first record's `_id` is at least this one. */
  readonly from: number;
  readonly size: number;
  /** Only records meeting this (a key's record). */
  readonly condition: RawBuilder<unknown>;
}

function batchRecords(rows: RowFilter, batch: RecordBatch): RawBuilder<unknown> {
  return sql`(SELECT i.id, i.uuid, i.json FROM instances i WHERE ${live(rows)} AND i.id >= ${batch.from} AND (${batch.condition})
    ORDER BY i.id LIMIT ${batch.size})`;
}

export async function readRepeatRows(db: DbOrTx, scope: Scope, read: RowRead, batch: RecordBatch | undefined): Promise<RepeatRow[]> {
  const from = batch ? sql`${batchRecords(read, batch)} AS i` : sql`instances i`;
  const condition = batch ? sql`${rowsAreObjects(scope)} AND (${read.condition})` : where(scope, read);
  const result = await sql<RepeatRow>`SELECT i.id, i.uuid, (${scope.answers})::text AS item,
      json_build_array(${sql.join(ordinals(scope))}) AS positions, ${termsColumn(read)} AS terms
    FROM ${from} ${scope.joins} WHERE ${condition}
    ORDER BY ${read.order} LIMIT ${read.limit} OFFSET ${read.offset}`.execute(db);
  return result.rows;
}

/** How many records a batch holds, and its last record's `_id`. */
export async function measureBatch(db: DbOrTx, rows: RowFilter, batch: RecordBatch): Promise<{ size: number; last: number }> {
  const result = await sql<{ size: number; last: number | null }>`SELECT count(*)::int AS size, max(b.id) AS last
    FROM ${batchRecords(rows, batch)} AS b`.execute(db);
  const row = result.rows[0];
  return { size: Number(row?.size ?? 0), last: Number(row?.last ?? 0) };
}

/** How many rows of the scope match. */
export async function countRows(db: DbOrTx, scope: Scope, rows: RowFilter): Promise<number> {
  const result = await sql<{ n: number }>`SELECT count(*)::int AS n FROM instances i ${scope.joins} WHERE ${where(scope, rows)}`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

/** The `_id` of a live record by its uuid (the form's unique index), if the caller reads it. */
export async function findRecordId(db: DbOrTx, rows: Pick<RowFilter, 'formId' | 'submittedBy'>, uuid: string): Promise<number | undefined> {
  const result = await sql<{ id: number }>`SELECT i.id FROM instances i WHERE ${live(rows)} AND i.uuid = ${uuid}`.execute(db);
  return result.rows[0]?.id;
}
