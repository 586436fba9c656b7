// SQL for exports: a form's live records in `_id` order by keyset pages (PGlite has one
// connection, so no cursor stays open between pages), and the aggregates the layouts need.
import { sql, type RawBuilder } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';
import { BinaryRows, copyBinaryRows, type CopiedBytes, type CopyBuffers } from '../../platform/pg-copy.ts';

/** Which records an export reads. */
export interface RecordScope {
  readonly formId: number;
  /** The data API's query condition on alias `i` (src/modules/submissions/query.ts). */
  readonly condition: RawBuilder<unknown>;
  /** Only this submitter's records (roles that see their own data only). */
  readonly submittedBy?: number | undefined;
  /** `_submission_time` range (start/end options), inclusive. */
  readonly start?: Date | undefined;
  readonly end?: Date | undefined;
}

function scopeCondition(scope: RecordScope): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [sql`i.form_id = ${scope.formId}`, sql`i.deleted_at IS NULL`, sql`(${scope.condition})`];
  if (scope.submittedBy !== undefined) parts.push(sql`i.submitted_by = ${scope.submittedBy}`);
  if (scope.start) parts.push(sql`i.date_created >= ${scope.start.toISOString()}::timestamptz`);
  if (scope.end) parts.push(sql`i.date_created <= ${scope.end.toISOString()}::timestamptz`);
  return sql.join(parts, sql` AND `);
}


/**
 * A stored record's JSON text as UTF-8 bytes, src[start..end) (read by COPY, never decoded to a
 * string). `src` is a buffer of the CopyBuffers given to listExportRecords, shared by the rows read
 * together, which the reader tells the CopyBuffers when it has used them.
 */
export interface RecordBytes {
  readonly src: Buffer;
  readonly start: number;
  readonly end: number;
}

/** A stored record and the meta values kept in its row's columns (the record itself is not parsed here). */
export interface ExportRecordRow {
  id: number;
  /** The stored record's JSON text (instances.json_text): a string, or its bytes when read by COPY. */
  json_text: string | RecordBytes;
  uuid: string;
  /** Seconds since 1970 (date_part: to_char cost PostgreSQL about 0.7 s per 1,000,000 records per column). */
  submission_time: number;
  date_modified: number;
  version: string;
  /** User ids: the caller names them (listUsernames), once per export rather than by a join per record. */
  submitted_by: number | null;
  last_edited_by: number | null;
  total_media: number;
  media_count: number;
  /** `{name: attachment id}` as JSON text, when asked for (media links). */
  attachments: string | null;
}

/**
 * The records' columns, in the order copiedRows reads them. Users are named by the caller: joining
 * users twice per record cost PostgreSQL about 2.7 s of CPU per 1,000,000 records, 40% of the
 * export's database time.
 */
const RECORD_COLUMNS = sql`i.id, i.json_text, i.uuid, date_part('epoch', i.date_created) AS submission_time,
      date_part('epoch', i.date_modified) AS date_modified, i.version, i.submitted_by, i.last_edited_by, i.total_media, i.media_count`;
const RECORD_FIELDS = 10;

/** The rows of a binary COPY of RECORD_COLUMNS (the columns' types: instances' own, date_part's float8). */
function copiedRows({ bytes, length: end }: CopiedBytes): ExportRecordRow[] {
  const rows: ExportRecordRow[] = [];
  const row = new BinaryRows(bytes, end, RECORD_FIELDS);
  while (row.next()) {
    rows.push({
      id: row.int32(0),
      json_text: { src: bytes, start: row.start[1] as number, end: row.fieldEnd(1) },
      uuid: row.text(2),
      submission_time: row.float64(3),
      date_modified: row.float64(4),
      version: row.text(5),
      submitted_by: row.isNull(6) ? null : row.int32(6),
      last_edited_by: row.isNull(7) ? null : row.int32(7),
      total_media: row.int32(8),
      media_count: row.int32(9),
      attachments: null,
    });
  }
  return rows;
}

/**
 * The records after `afterId`: up to `limit` of them, or with no limit all those up to
 * `throughId`. The meta keys are added by the caller from the columns: building them into each
 * record's text in SQL cost PostgreSQL about 65 µs a record. On PostgreSQL the rows are read by
 * COPY (platform/pg-copy.ts), the records' text as bytes in a buffer of `buffers`, for the caller
 * to give back once it has used the rows.
 */
export async function listExportRecords(
  db: DbOrTx,
  scope: RecordScope,
  afterId: number,
  bound: { limit: number } | { throughId: number },
  withAttachments: boolean,
  buffers: CopyBuffers,
): Promise<ExportRecordRow[]> {
  const from = sql`FROM instances i
    WHERE ${scopeCondition(scope)} AND i.id > ${afterId} ${'throughId' in bound ? sql`AND i.id <= ${bound.throughId}` : sql``}
    ORDER BY i.id
    ${'limit' in bound ? sql`LIMIT ${bound.limit}` : sql``}`;
  const copied = await copyBinaryRows(db, sql`SELECT ${RECORD_COLUMNS} ${from}`.compile(db), buffers);
  const rows = copied ? copiedRows(copied) : (await sql<ExportRecordRow>`SELECT ${RECORD_COLUMNS}, NULL::text AS attachments ${from}`.execute(db)).rows;
  if (copied) buffers.hold(copied.bytes, rows.length);
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (withAttachments && first && last) {
    const lists = await attachmentsInRange(db, first.id, last.id);
    for (const row of rows) row.attachments = lists.get(Number(row.id)) ?? null;
  }
  return rows;
}

/**
 * `{name: attachment id}` as JSON text for each record in [first, last] that has attachments,
 * from one scan of that range of the attachments' index: an aggregate per record cost PostgreSQL
 * about 10 µs a record, most of them with no attachment (bench/RESULTS.md, 2026-11-28).
 */
async function attachmentsInRange(db: DbOrTx, first: number, last: number): Promise<Map<number, string>> {
  const result = await sql<{ instance_id: number; list: string }>`SELECT a.instance_id, jsonb_object_agg(a.name, a.id)::text AS list
    FROM attachments a WHERE a.instance_id >= ${first}::int AND a.instance_id <= ${last}::int GROUP BY a.instance_id`.execute(db);
  return new Map(result.rows.map((row) => [Number(row.instance_id), row.list]));
}

/** A file attached to a record in scope (its bytes are read apart, one file at a time). */
export interface ScopedAttachment {
  id: number;
  record_id: number;
  record_uuid: string;
  name: string;
  mimetype: string;
  blob: string;
}

/** The attached files of up to `limit` records in scope after `afterId`, without reading the records. */
export interface AttachmentPage {
  /** Records the page covers, with files or not (an export job's progress). */
  readonly count: number;
  /** The last of them, where the next page starts. */
  readonly lastId: number;
  /** Their files, by record and then in the order they arrived. */
  readonly files: ScopedAttachment[];
}

export async function listAttachmentPage(db: DbOrTx, scope: RecordScope, afterId: number, limit: number): Promise<AttachmentPage> {
  const result = await sql<{ record_id: number; record_uuid: string; id: number | null; name: string | null; mimetype: string | null; blob: string | null }>`
    WITH page AS (
      SELECT i.id, i.uuid FROM instances i WHERE ${scopeCondition(scope)} AND i.id > ${afterId} ORDER BY i.id LIMIT ${limit})
    SELECT p.id AS record_id, p.uuid AS record_uuid, a.id, a.name, a.mimetype, a.blob
    FROM page p LEFT JOIN attachments a ON a.instance_id = p.id
    ORDER BY p.id, a.id`.execute(db);
  const files: ScopedAttachment[] = [];
  let count = 0;
  let lastId = afterId;
  for (const row of result.rows) {
    if (row.record_id !== lastId) {
      count += 1;
      lastId = row.record_id;
    }
    if (row.id !== null && row.name !== null && row.mimetype !== null && row.blob !== null) {
      files.push({ id: row.id, record_id: row.record_id, record_uuid: row.record_uuid, name: row.name, mimetype: row.mimetype, blob: row.blob });
    }
  }
  return { count, lastId, files };
}

/** The usernames of these user ids (deleted users are missing). */
export async function listUsernames(db: DbOrTx, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'username']).where('id', 'in', [...ids]).execute();
  return new Map(rows.map((row) => [Number(row.id), row.username]));
}

/**
 * The `_id` of every `every`-th record in scope after `afterId`, in order: the last ids of
 * consecutive runs of `every` records (a shorter final run is not listed). An index-only scan
 * for a form's records.
 */
export async function listRunEnds(db: DbOrTx, scope: RecordScope, every: number, afterId: number): Promise<number[]> {
  const result = await sql<{ id: number }>`SELECT id FROM (
      SELECT i.id, row_number() OVER (ORDER BY i.id) AS n FROM instances i WHERE ${scopeCondition(scope)} AND i.id > ${afterId}) AS numbered
    WHERE n % ${every} = 0
    ORDER BY id`.execute(db);
  return result.rows.map((r) => Number(r.id));
}

/**
 * Per run of `every` records after `afterId` (numbered as listRunEnds numbers them; runs from
 * 0), the items each repeat of `paths` (record keys) holds in them, every position summed, from
 * the records' stored repeat counts. Records stored without counts count none here: a reader of
 * the records checks what it finds against these.
 */
export async function listRunRepeatItems(
  db: DbOrTx,
  scope: RecordScope,
  every: number,
  afterId: number,
  paths: readonly string[],
): Promise<Array<{ run: number; path: string; items: number }>> {
  if (paths.length === 0) return [];
  const result = await sql<{ run: string; path: string; items: string }>`SELECT (numbered.n - 1) / ${every} AS run, split_part(c.key, ' ', 1) AS path, sum(c.value::int) AS items
    FROM (SELECT i.repeat_counts, row_number() OVER (ORDER BY i.id) AS n FROM instances i WHERE ${scopeCondition(scope)} AND i.id > ${afterId}) AS numbered
      CROSS JOIN LATERAL jsonb_each(numbered.repeat_counts) AS c
    WHERE split_part(c.key, ' ', 1) = ANY(${[...paths]}::text[])
    GROUP BY 1, 2`.execute(db);
  return result.rows.map((r) => ({ run: Number(r.run), path: r.path, items: Number(r.items) }));
}

/** The largest item count of one repeat key (src/lib/writers/layout/repeat-counts.ts) in scope. */
export interface RepeatCount {
  key: string;
  count: number;
}

/**
 * The largest number of items of every repeat, per position of its enclosing repeats, from the
 * records' repeat_counts column: an index-only scan that reads no stored record (migration 0013),
 * except for records stored before the column was kept, which gather_repeat_counts counts from
 * their record. The two kinds are asked for apart: a condition that names the record itself
 * (coalesce with the record) would make every record's row be read.
 */
export async function listRepeatCounts(db: DbOrTx, scope: RecordScope): Promise<RepeatCount[]> {
  const where = scopeCondition(scope);
  const result = await sql<{ key: string; n: number }>`SELECT counts.key, max(counts.n) AS n FROM (
      SELECT c.key, c.value::int AS n FROM instances i CROSS JOIN LATERAL jsonb_each(i.repeat_counts) AS c
      WHERE ${where} AND i.repeat_counts IS NOT NULL
      UNION ALL
      SELECT c.key, c.value::int FROM instances i CROSS JOIN LATERAL jsonb_each(gather_repeat_counts(i.json)) AS c
      WHERE ${where} AND i.repeat_counts IS NULL) AS counts
    GROUP BY counts.key`.execute(db);
  return result.rows.map((r) => ({ key: r.key, count: Number(r.n) }));
}

/**
 * The `<field>:<tag>` keys that records of osm questions carry, `<field>:way:id` included: onadata's
 * columns are the keys of its OsmData tags, which hold the feature's `<type>:id` (its osm.csv).
 */
export async function listOsmTagKeys(db: DbOrTx, scope: RecordScope, fieldPaths: readonly string[]): Promise<string[]> {
  if (fieldPaths.length === 0) return [];
  const prefixes = fieldPaths.map((p) => `${p}:`);
  const result = await sql<{ k: string }>`SELECT DISTINCT k FROM instances i, jsonb_object_keys(i.json) AS k
    WHERE ${scopeCondition(scope)} AND EXISTS (SELECT 1 FROM unnest(${prefixes}::text[]) AS p WHERE starts_with(k, p))
    ORDER BY k`.execute(db);
  return result.rows.map((r) => r.k);
}

/** How many records an export of this scope reads: the total of an export job's progress. */
export async function countExportRecords(db: DbOrTx, scope: RecordScope): Promise<number> {
  const result = await sql<{ n: number }>`SELECT count(*)::int AS n FROM instances i WHERE ${scopeCondition(scope)}`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}
