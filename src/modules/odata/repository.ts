// SQL the OData feed needs beyond the data API's own record reads (src/modules/submissions/repository.ts).
import { sql } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';

/** A JSON path string literal: the key in double quotes, with `"` and `\` escaped. */
function quotedKey(key: string): string {
  return `"${key.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * How many rows a repeat's entity set has: the items of the repeat at the end of `keys` (the record
 * keys of the repeats from the outermost down), counted in every live record the caller reads.
 */
export async function countRepeatRows(db: DbOrTx, formId: number, keys: readonly string[], submittedBy: number | undefined): Promise<number> {
  // The path is bound as a parameter; `silent` skips records whose answers are not arrays.
  const path = `strict $${keys.map((k) => `.${quotedKey(k)}[*]`).join('')}`;
  const own = submittedBy === undefined ? sql`TRUE` : sql`i.submitted_by = ${submittedBy}`;
  const result = await sql<{ n: number }>`SELECT count(*)::int AS n FROM instances i
    CROSS JOIN LATERAL jsonb_path_query(i.json, ${path}::jsonpath, '{}'::jsonb, true) AS item
    WHERE i.form_id = ${formId} AND i.deleted_at IS NULL AND ${own}`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}
