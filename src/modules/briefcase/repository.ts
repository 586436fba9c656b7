// SQL for the Briefcase API: a page of a form's live record ids by key, and a record's files.
import { sql } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';

export interface RecordIdPage {
  formId: number;
  /** Records with a greater id are listed. */
  after: number;
  limit: number;
  /** Only records this user submitted (roles that read only their own). */
  submittedBy: number | undefined;
  /** Encrypted forms list a record only once all its files have arrived, as onadata does. */
  completeMediaOnly: boolean;
}

/**
 * The next page of live records by id: an index range scan of instances_form_live_idx that starts
 * at `after`, so the thousandth page costs what the first does.
 */
export async function listRecordIdPage(db: DbOrTx, page: RecordIdPage): Promise<Array<{ id: number; uuid: string }>> {
  const own = page.submittedBy === undefined ? sql`TRUE` : sql`i.submitted_by = ${page.submittedBy}::int`;
  const media = page.completeMediaOnly ? sql`i.media_count >= i.total_media` : sql`TRUE`;
  const result = await sql<{ id: number; uuid: string }>`SELECT i.id, i.uuid FROM instances i
    WHERE i.form_id = ${page.formId}::int AND i.deleted_at IS NULL AND i.id > ${page.after}::int AND ${own} AND ${media}
    ORDER BY i.id LIMIT ${page.limit}::int`.execute(db);
  return result.rows;
}

export interface LiveRecord {
  id: number;
  uuid: string;
  xml: string;
  submitted_by: number | null;
  date_created: Date;
}

export async function findLiveRecordByUuid(db: DbOrTx, formId: number, uuid: string): Promise<LiveRecord | undefined> {
  return db
    .selectFrom('instances')
    .select(['id', 'uuid', 'xml', 'submitted_by', 'date_created'])
    .where('form_id', '=', formId)
    .where('uuid', '=', uuid)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export interface RecordFile {
  id: number;
  name: string;
  blob: string;
  size: number;
}

/** A record's attachments, in the order they arrived. */
export async function listRecordFiles(db: DbOrTx, instanceId: number): Promise<RecordFile[]> {
  return db.selectFrom('attachments').select(['id', 'name', 'blob', 'size']).where('instance_id', '=', instanceId).orderBy('id').execute();
}
