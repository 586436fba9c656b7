// SQL for form metadata entries (onadata's MetaData on an XForm) read and written through
// /api/v1/metadata. The form representation's own reads stay in the forms repository.
import { sql } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';
import type { MetadataRow } from '../forms/repository.ts';
import { findBlob, type BlobInfo } from '../blobs/repository.ts';

const COLUMNS = ['id', 'form_id', 'data_type', 'data_value', 'extra_data', 'data_file', 'data_file_type', 'file_hash', 'date_created'] as const;

export async function findLiveMetadata(db: DbOrTx, id: number): Promise<MetadataRow | undefined> {
  return db.selectFrom('form_metadata').select([...COLUMNS]).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}

/** The form's live entry of this type (the first, for types a form may hold several of). */
export async function findLiveMetadataOfType(db: DbOrTx, formId: number, dataType: string): Promise<MetadataRow | undefined> {
  return db.selectFrom('form_metadata').select([...COLUMNS]).where('form_id', '=', formId).where('data_type', '=', dataType).where('deleted_at', 'is', null).orderBy('id').executeTakeFirst();
}

/** Whether the form already has a live entry of this type (and value, when given). */
export async function hasLiveMetadata(db: DbOrTx, formId: number, dataType: string, dataValue?: string): Promise<boolean> {
  let query = db.selectFrom('form_metadata').select('id').where('form_id', '=', formId).where('data_type', '=', dataType).where('deleted_at', 'is', null);
  if (dataValue !== undefined) query = query.where('data_value', '=', dataValue);
  return (await query.executeTakeFirst()) !== undefined;
}

/** An uploaded file of a media or supporting_doc entry. */
export interface StoredFile {
  /** Where onadata would keep it (`<owner>/formid-media/<name>`), shown as data_file. */
  readonly path: string;
  readonly contentType: string;
  /** `md5:<hex>`, the OpenRosa manifest's hash. */
  readonly md5: string;
  readonly blobSha256: string;
}

export async function insertMetadata(
  db: DbOrTx,
  entry: { formId: number; dataType: string; dataValue: string; now: Date; file?: StoredFile | undefined },
): Promise<MetadataRow> {
  const file = entry.file;
  return db
    .insertInto('form_metadata')
    .values({
      form_id: entry.formId,
      data_type: entry.dataType,
      data_value: entry.dataValue,
      extra_data: '{}',
      data_file: file?.path ?? null,
      data_file_type: file?.contentType ?? null,
      file_hash: file?.md5 ?? null,
      blob_sha256: file?.blobSha256 ?? null,
      date_created: entry.now,
    })
    .returning([...COLUMNS])
    .executeTakeFirstOrThrow();
}

/** A live media entry of a form, with its stored file when it has one. */
export async function findFormMediaFile(db: DbOrTx, formId: number, id: number): Promise<{ row: MetadataRow; file: BlobInfo | undefined } | undefined> {
  const row = await db
    .selectFrom('form_metadata')
    .select([...COLUMNS, 'blob_sha256'])
    .where('id', '=', id)
    .where('form_id', '=', formId)
    .where('data_type', '=', 'media')
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const { blob_sha256: sha256, ...entry } = row;
  const file = sha256 === null ? undefined : await findBlob(db, sha256);
  return { row: entry, file };
}

/** An entry's uploaded file (any type), or undefined when it has none. */
export async function findMetadataFile(db: DbOrTx, id: number): Promise<BlobInfo | undefined> {
  const row = await db.selectFrom('form_metadata').select('blob_sha256').where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  return row?.blob_sha256 ? findBlob(db, row.blob_sha256) : undefined;
}

/** The live media entries of a form, oldest first. */
export async function listFormMedia(db: DbOrTx, formId: number): Promise<MetadataRow[]> {
  return db.selectFrom('form_metadata').select([...COLUMNS]).where('form_id', '=', formId).where('data_type', '=', 'media').where('deleted_at', 'is', null).orderBy('id').execute();
}

/** Which of these forms have live media entries. */
export async function formsWithMedia(db: DbOrTx, formIds: readonly number[]): Promise<number[]> {
  if (formIds.length === 0) return [];
  const rows = await db
    .selectFrom('form_metadata')
    .select('form_id')
    .distinct()
    .where(sql<boolean>`form_id = ANY(${[...formIds]}::int[])`)
    .where('data_type', '=', 'media')
    .where('deleted_at', 'is', null)
    .execute();
  return rows.map((r) => r.form_id);
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
