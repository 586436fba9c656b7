// SQL for exports: a form's live records in `_id` order by keyset pages (PGlite has one
// connection, so no cursor stays open between pages), and the aggregates the layouts need.
import { sql, type RawBuilder } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';

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

const ISO = (column: RawBuilder<unknown>) => sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"')`;

/** A stored record and the meta values kept in its row's columns (the record itself is not parsed here). */
export interface ExportRecordRow {
  id: number;
  /** The stored record as JSON text (instances.json_text). */
  json_text: string;
  uuid: string;
  submission_time: string;
  date_modified: string;
  version: string;
  submitted_by: string | null;
  last_edited_by: string | null;
  total_media: number;
  media_count: number;
  /** `{name: attachment id}` as JSON text, when asked for (media links). */
  attachments: string | null;
}

/**
 * The records after `afterId`: up to `limit` of them, or with no limit all those up to
 * `throughId`. The meta keys are added by the caller from the columns: building them into each
 * record's text in SQL cost PostgreSQL about 65 µs a record.
 */
export async function listExportRecords(
  db: DbOrTx,
  scope: RecordScope,
  afterId: number,
  bound: { limit: number } | { throughId: number },
  withAttachments: boolean,
): Promise<ExportRecordRow[]> {
  const attachments = withAttachments
    ? sql`(SELECT jsonb_object_agg(a.name, a.id) FROM attachments a WHERE a.instance_id = i.id)::text`
    : sql`NULL::text`;
  // The page's ids are chosen first (index scan on form_id, id) and only they are joined.
  const result = await sql<ExportRecordRow>`WITH page AS (
      SELECT i.id, i.json_text, i.uuid, i.date_created, i.date_modified, i.version, i.submitted_by,
        i.last_edited_by, i.total_media, i.media_count
      FROM instances i
      WHERE ${scopeCondition(scope)} AND i.id > ${afterId} ${'throughId' in bound ? sql`AND i.id <= ${bound.throughId}` : sql``}
      ORDER BY i.id
      ${'limit' in bound ? sql`LIMIT ${bound.limit}` : sql``})
    SELECT i.id, i.json_text, i.uuid, ${ISO(sql`i.date_created`)} AS submission_time, ${ISO(sql`i.date_modified`)} AS date_modified,
      i.version, su.username AS submitted_by, le.username AS last_edited_by, i.total_media, i.media_count, ${attachments} AS attachments
    FROM page i
    LEFT JOIN users su ON su.id = i.submitted_by
    LEFT JOIN users le ON le.id = i.last_edited_by
    ORDER BY i.id`.execute(db);
  return result.rows;
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

export interface RepeatCount {
  /** 1-based positions in the enclosing repeats, outermost first. */
  indices: number[];
  count: number;
}

/**
 * The largest number of items of a repeat per position of its enclosing repeats. `chain` is
 * the record keys of the enclosing repeats, outermost first, then the repeat's own key.
 */
export async function listRepeatCounts(db: DbOrTx, scope: RecordScope, chain: readonly string[]): Promise<RepeatCount[]> {
  const target = chain[chain.length - 1];
  if (target === undefined) return [];
  const enclosing = chain.slice(0, -1);
  if (enclosing.length === 0) {
    // A top-level repeat: one jsonpath call per record (a key that is missing or not an array
    // reads NULL), which PostgreSQL can spread over parallel workers. The key is quoted as a
    // JSON string, which is jsonpath's syntax for a quoted key, and travels as a parameter.
    const path = `strict $.${JSON.stringify(target)}.size()`;
    const result = await sql<{ n: number | null }>`SELECT max((jsonb_path_query_first(i.json, ${path}::jsonpath, '{}', true))::int) AS n
      FROM instances i WHERE ${scopeCondition(scope)}`.execute(db);
    const n = result.rows[0]?.n;
    return n === null || n === undefined ? [] : [{ indices: [], count: Number(n) }];
  }
  // Each level's value is taken out once, in a LATERAL subquery (OFFSET 0 keeps the planner from
  // folding it back in): every `json -> key` written out again would fetch and decompress the
  // whole stored record again (it is TOASTed), which made this scan about 40% slower.
  const joins: RawBuilder<unknown>[] = [sql`CROSS JOIN LATERAL (SELECT i.json -> ${enclosing[0] ?? target} AS v OFFSET 0) AS l0`];
  const ordinals: RawBuilder<unknown>[] = [];
  enclosing.forEach((_, level) => {
    // Aliases are generated here (l0, t0…), never taken from input.
    const items = sql.raw(`l${level}.v`);
    const item = sql.raw(`t${level}`);
    const next = enclosing[level + 1] ?? target;
    joins.push(sql`CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(${items}) = 'array' THEN ${items} ELSE '[]'::jsonb END) WITH ORDINALITY AS ${item}(e, o)`);
    joins.push(sql`CROSS JOIN LATERAL (SELECT ${item}.e -> ${next} AS v OFFSET 0) AS ${sql.raw(`l${level + 1}`)}`);
    ordinals.push(sql`${item}.o`);
  });
  const value = sql.raw(`l${enclosing.length}.v`);
  const positions = ordinals.length ? sql`ARRAY[${sql.join(ordinals.map((o) => sql`${o}::int`))}]` : sql`ARRAY[]::int[]`;
  const groupBy = ordinals.length ? sql`GROUP BY ${sql.join(ordinals)}` : sql``;
  const result = await sql<{ indices: number[]; n: number }>`SELECT ${positions} AS indices, max(jsonb_array_length(${value}))::int AS n
    FROM instances i ${sql.join(joins, sql` `)}
    WHERE ${scopeCondition(scope)} AND jsonb_typeof(${value}) = 'array'
    ${groupBy}`.execute(db);
  return result.rows.filter((r) => r.n !== null).map((r) => ({ indices: r.indices.map(Number), count: Number(r.n) }));
}

/** The `<field>:<tag>` keys that records of osm questions carry (not the `:way:id` references). */
export async function listOsmTagKeys(db: DbOrTx, scope: RecordScope, fieldPaths: readonly string[]): Promise<string[]> {
  if (fieldPaths.length === 0) return [];
  const prefixes = fieldPaths.map((p) => `${p}:`);
  const result = await sql<{ k: string }>`SELECT DISTINCT k FROM instances i, jsonb_object_keys(i.json) AS k
    WHERE ${scopeCondition(scope)} AND EXISTS (SELECT 1 FROM unnest(${prefixes}::text[]) AS p WHERE starts_with(k, p))
      AND k !~ ':(way|node|relation):id$'
    ORDER BY k`.execute(db);
  return result.rows.map((r) => r.k);
}

/** How many records an export of this scope reads: the total of an export job's progress. */
export async function countExportRecords(db: DbOrTx, scope: RecordScope): Promise<number> {
  const result = await sql<{ n: number }>`SELECT count(*)::int AS n FROM instances i WHERE ${scopeCondition(scope)}`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}
