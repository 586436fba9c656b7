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

export interface RecordTextRow {
  id: number;
  record: string;
}

/**
 * Up to `limit` records after `afterId`, as JSON text: the stored record plus the meta keys
 * kept in columns, and `_attachments` as `{name: id}` when asked for (media links).
 */
export async function listExportRecordTexts(db: DbOrTx, scope: RecordScope, afterId: number, limit: number, withAttachments: boolean): Promise<RecordTextRow[]> {
  const attachments = withAttachments
    ? sql`coalesce((SELECT jsonb_object_agg(a.name, a.id) FROM attachments a WHERE a.instance_id = i.id), '{}'::jsonb)`
    : sql`'{}'::jsonb`;
  // The page's ids are chosen first (index scan on form_id, id) and only they are joined. The meta
  // keys are spliced into the stored record's text (json_text): merging them as jsonb and
  // printing the result cost 15 times as much as reading the text.
  const result = await sql<RecordTextRow>`WITH page AS (
      SELECT i.id, i.json_text, i.uuid, i.date_created, i.date_modified, i.version, i.submitted_by,
        i.last_edited_by, i.total_media, i.media_count
      FROM instances i
      WHERE ${scopeCondition(scope)} AND i.id > ${afterId}
      ORDER BY i.id
      LIMIT ${limit})
    SELECT i.id, CASE WHEN i.json_text = '{}' THEN '' ELSE left(i.json_text, -1) || ', ' END || substr(jsonb_build_object(
      '_id', i.id,
      '_uuid', i.uuid,
      '_submission_time', ${ISO(sql`i.date_created`)},
      '_date_modified', ${ISO(sql`i.date_modified`)},
      '_version', i.version,
      '_submitted_by', su.username,
      '_last_edited_by', le.username,
      '_total_media', i.total_media,
      '_media_count', i.media_count,
      '_media_all_received', i.media_count >= i.total_media,
      '_attachments', ${attachments})::text, CASE WHEN i.json_text = '{}' THEN 1 ELSE 2 END) AS record
    FROM page i
    LEFT JOIN users su ON su.id = i.submitted_by
    LEFT JOIN users le ON le.id = i.last_edited_by
    ORDER BY i.id`.execute(db);
  return result.rows.map((r) => ({ id: Number(r.id), record: r.record }));
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
  let element: RawBuilder<unknown> = sql`i.json`;
  const joins: RawBuilder<unknown>[] = [];
  const ordinals: RawBuilder<unknown>[] = [];
  enclosing.forEach((key, level) => {
    // Aliases are generated here (t0, t1…), never taken from input.
    const alias = sql.raw(`t${level}`);
    const items = sql`CASE WHEN jsonb_typeof(${element} -> ${key}) = 'array' THEN ${element} -> ${key} ELSE '[]'::jsonb END`;
    joins.push(sql`CROSS JOIN LATERAL jsonb_array_elements(${items}) WITH ORDINALITY AS ${alias}(e, o)`);
    element = sql`${alias}.e`;
    ordinals.push(sql`${alias}.o`);
  });
  const length = sql`jsonb_array_length(${element} -> ${target})`;
  const positions = ordinals.length ? sql`ARRAY[${sql.join(ordinals.map((o) => sql`${o}::int`))}]` : sql`ARRAY[]::int[]`;
  const groupBy = ordinals.length ? sql`GROUP BY ${sql.join(ordinals)}` : sql``;
  const result = await sql<{ indices: number[]; n: number }>`SELECT ${positions} AS indices, max(${length})::int AS n
    FROM instances i ${sql.join(joins, sql` `)}
    WHERE ${scopeCondition(scope)} AND jsonb_typeof(${element} -> ${target}) = 'array'
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
