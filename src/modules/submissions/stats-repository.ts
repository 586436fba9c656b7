// Submission counts the form representations show (onadata's form_versions and
// submission_count_for_today), computed from the live records.
import { sql } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';

/** Live submissions per form received at or after `since`. */
export async function countSubmissionsSince(db: DbOrTx, formIds: readonly number[], since: Date): Promise<Map<number, number>> {
  if (formIds.length === 0) return new Map();
  const result = await sql<{ form_id: number; n: number }>`SELECT form_id, count(*)::int AS n FROM instances
    WHERE form_id = ANY(${[...formIds]}::int[]) AND deleted_at IS NULL AND date_created >= ${since.toISOString()}::timestamptz
    GROUP BY form_id`.execute(db);
  return new Map(result.rows.map((r) => [Number(r.form_id), Number(r.n)]));
}

/** Live submissions per form and version, versions in order. */
export async function countSubmissionsByVersion(db: DbOrTx, formIds: readonly number[]): Promise<Map<number, Array<{ version: string; total: number }>>> {
  const counts = new Map<number, Array<{ version: string; total: number }>>();
  if (formIds.length === 0) return counts;
  const result = await sql<{ form_id: number; version: string; n: number }>`SELECT form_id, version, count(*)::int AS n FROM instances
    WHERE form_id = ANY(${[...formIds]}::int[]) AND deleted_at IS NULL
    GROUP BY form_id, version ORDER BY form_id, version`.execute(db);
  for (const row of result.rows) {
    const list = counts.get(Number(row.form_id)) ?? [];
    list.push({ version: row.version, total: Number(row.n) });
    counts.set(Number(row.form_id), list);
  }
  return counts;
}
