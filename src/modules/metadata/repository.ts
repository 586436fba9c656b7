// SQL for form metadata entries (onadata's MetaData on an XForm) read and written through
// /api/v1/metadata. The form representation's own reads stay in the forms repository.
import { sql } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';
import type { MetadataRow } from '../forms/repository.ts';

const COLUMNS = ['id', 'form_id', 'data_type', 'data_value', 'extra_data', 'data_file', 'data_file_type', 'file_hash', 'date_created'] as const;

export async function findLiveMetadata(db: DbOrTx, id: number): Promise<MetadataRow | undefined> {
  return db.selectFrom('form_metadata').select([...COLUMNS]).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}

/** Whether the form already has a live entry of this type (and value, when given). */
export async function hasLiveMetadata(db: DbOrTx, formId: number, dataType: string, dataValue?: string): Promise<boolean> {
  let query = db.selectFrom('form_metadata').select('id').where('form_id', '=', formId).where('data_type', '=', dataType).where('deleted_at', 'is', null);
  if (dataValue !== undefined) query = query.where('data_value', '=', dataValue);
  return (await query.executeTakeFirst()) !== undefined;
}

export async function insertMetadata(db: DbOrTx, entry: { formId: number; dataType: string; dataValue: string; now: Date }): Promise<MetadataRow> {
  return db
    .insertInto('form_metadata')
    .values({ form_id: entry.formId, data_type: entry.dataType, data_value: entry.dataValue, extra_data: '{}', data_file: null, data_file_type: null, file_hash: null, date_created: entry.now })
    .returning([...COLUMNS])
    .executeTakeFirstOrThrow();
}

export async function updateMetadataValue(db: DbOrTx, id: number, dataValue: string): Promise<void> {
  await db.updateTable('form_metadata').set({ data_value: dataValue }).where('id', '=', id).where('deleted_at', 'is', null).execute();
}

/** Marks the entry deleted (onadata soft-deletes metadata); false when it already was. */
export async function softDeleteMetadata(db: DbOrTx, id: number, now: Date): Promise<boolean> {
  const result = await db.updateTable('form_metadata').set({ deleted_at: now }).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

const METADATA_LOCK_SPACE = 8014;

/** Serialises writes of one form's metadata (so "one submission_review per form" holds under concurrency). */
export async function lockFormMetadata(db: DbOrTx, formId: number): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${METADATA_LOCK_SPACE}::integer, ${formId}::integer)`.execute(db);
}
