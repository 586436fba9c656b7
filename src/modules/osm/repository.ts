// SQL for OSM answers: the osm_data rows (migration 0025), the osm keys of a record's JSON, and
// the form's instances_with_osm flag.
import { sql } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';

export interface OsmDataRow {
  instance_id: number;
  field_name: string;
  filename: string;
  osm_id: string;
  osm_type: string;
  tags: string;
  geom: string | null;
}

/** One row per record and question: a file read again (late, or in an edit) replaces it. */
export async function upsertOsmData(db: DbOrTx, row: OsmDataRow, now: Date): Promise<void> {
  await db
    .insertInto('osm_data')
    .values({ ...row, date_created: now, date_modified: now })
    .onConflict((oc) =>
      oc.columns(['instance_id', 'field_name']).doUpdateSet({
        filename: row.filename, osm_id: row.osm_id, osm_type: row.osm_type, tags: row.tags, geom: row.geom, date_modified: now,
      }),
    )
    .execute();
}

export async function listOsmDataOfInstance(db: DbOrTx, instanceId: number): Promise<Array<{ field_name: string; osm_id: string; osm_type: string; tags: Record<string, unknown> }>> {
  return db.selectFrom('osm_data').select(['field_name', 'osm_id', 'osm_type', 'tags']).where('instance_id', '=', instanceId).orderBy('id').execute();
}

/**
 * Replaces the record's `<field>:…` keys of its osm questions with `keys`. The instances trigger
 * counts the change, so stored exports and cached matches of the form's data are not reused.
 */
export async function setRecordOsmKeys(db: DbOrTx, instanceId: number, fieldNames: readonly string[], keys: Readonly<Record<string, unknown>>): Promise<void> {
  const prefixes = fieldNames.map((f) => `${f}:`);
  await sql`UPDATE instances SET json = coalesce((SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(instances.json) AS e
      WHERE NOT EXISTS (SELECT 1 FROM unnest(${prefixes}::text[]) AS p WHERE starts_with(e.key, p))), '{}'::jsonb) || ${JSON.stringify(keys)}::jsonb
    WHERE id = ${instanceId}`.execute(db);
}

/** onadata sets the flag when a form's record first stores an `.osm` file. */
export async function markFormWithOsm(db: DbOrTx, formId: number): Promise<void> {
  await db.updateTable('forms').set({ instances_with_osm: true }).where('id', '=', formId).where('instances_with_osm', '=', false).execute();
}
