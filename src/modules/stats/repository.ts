// Counts of a form's live records grouped by one field, for the submission stats.
import { sql } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';

/** What the records are grouped by: the day received, the submitter, or an answer's text. */
export type StatsGroup = { kind: 'day' } | { kind: 'submitter' } | { kind: 'answer'; field: string };

export interface StatsRow {
  value: string | null;
  count: number;
}

export async function countRecordsBy(db: DbOrTx, formId: number, group: StatsGroup, submittedBy: number | undefined): Promise<StatsRow[]> {
  const own = submittedBy === undefined ? sql`TRUE` : sql`i.submitted_by = ${submittedBy}`;
  // Days are UTC days, as the records' _submission_time is written.
  const value =
    group.kind === 'day'
      ? sql`to_char(i.date_created AT TIME ZONE 'UTC', 'YYYY-MM-DD')`
      : group.kind === 'submitter'
        ? sql`(SELECT u.username FROM users u WHERE u.id = i.submitted_by)`
        : sql`(i.json ->> ${group.field})`;
  const result = await sql<{ value: string | null; n: number }>`SELECT ${value} AS value, count(*)::int AS n FROM instances i
    WHERE i.form_id = ${formId} AND i.deleted_at IS NULL AND ${own}
    GROUP BY 1 ORDER BY 1 NULLS FIRST`.execute(db);
  return result.rows.map((r) => ({ value: r.value, count: Number(r.n) }));
}
