// SQL for stored exports (Export records), the form data version they are compared against, and
// the users' spreadsheet-provider credentials.
import { sql, type Selectable } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';
import type { ExportsTable } from '../../platform/schema.ts';

export type ExportRow = Selectable<ExportsTable>;

export interface NewExport {
  formId: number;
  exportType: string;
  options: Record<string, unknown>;
  optionsKey: string;
  submittedBy: number | null;
  dataVersion: string;
  createdBy: number | null;
  createdAt: Date;
}

export async function insertExport(db: DbOrTx, values: NewExport): Promise<ExportRow> {
  return db
    .insertInto('exports')
    .values({
      form_id: values.formId,
      export_type: values.exportType,
      options: JSON.stringify(values.options),
      options_key: values.optionsKey,
      submitted_by: values.submittedBy,
      data_version: values.dataVersion,
      created_by: values.createdBy,
      created_at: values.createdAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function setExportTask(db: DbOrTx, exportId: number, taskId: string): Promise<void> {
  await db.updateTable('exports').set({ task_id: taskId }).where('id', '=', exportId).execute();
}

export async function findExport(db: DbOrTx, exportId: number): Promise<ExportRow | undefined> {
  return db.selectFrom('exports').selectAll().where('id', '=', exportId).executeTakeFirst();
}

export async function findExportByTask(db: DbOrTx, taskId: string): Promise<ExportRow | undefined> {
  return db.selectFrom('exports').selectAll().where('task_id', '=', taskId).executeTakeFirst();
}

/** The newest export of this form, type and options that is finished or still being made. */
export async function findNewestMatchingExport(
  db: DbOrTx,
  match: { formId: number; exportType: string; optionsKey: string; submittedBy: number | null },
): Promise<ExportRow | undefined> {
  let query = db
    .selectFrom('exports')
    .selectAll()
    .where('form_id', '=', match.formId)
    .where('export_type', '=', match.exportType)
    .where('options_key', '=', match.optionsKey)
    .where('status', 'in', ['PENDING', 'SUCCESS']);
  query = match.submittedBy === null ? query.where('submitted_by', 'is', null) : query.where('submitted_by', '=', match.submittedBy);
  return query.orderBy('id', 'desc').limit(1).executeTakeFirst();
}

export async function listFormExports(db: DbOrTx, formId: number): Promise<ExportRow[]> {
  return db.selectFrom('exports').selectAll().where('form_id', '=', formId).orderBy('id').execute();
}

/** Exports a user asked for, on forms that still exist. */
export async function listExportsCreatedBy(db: DbOrTx, userId: number): Promise<ExportRow[]> {
  return db
    .selectFrom('exports as e')
    .innerJoin('forms as f', 'f.id', 'e.form_id')
    .selectAll('e')
    .where('e.created_by', '=', userId)
    .where('f.deleted_at', 'is', null)
    .orderBy('e.id')
    .execute();
}

export async function markExportSucceeded(
  db: DbOrTx,
  exportId: number,
  done: { filePath: string | null; filename: string; size: number | null; externalUrl?: string | null; finishedAt: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('exports')
    .set({
      status: 'SUCCESS',
      file_path: done.filePath,
      filename: done.filename,
      size: done.size,
      external_url: done.externalUrl ?? null,
      error_message: null,
      finished_at: done.finishedAt,
    })
    .where('id', '=', exportId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function markExportFailed(db: DbOrTx, exportId: number, message: string, finishedAt: Date): Promise<void> {
  await db.updateTable('exports').set({ status: 'FAILURE', error_message: message, finished_at: finishedAt }).where('id', '=', exportId).execute();
}

/** Deletes the export row and answers the file it pointed at, for the caller to remove. */
export async function deleteExport(db: DbOrTx, exportId: number): Promise<{ file_path: string | null } | undefined> {
  return db.deleteFrom('exports').where('id', '=', exportId).returning(['file_path']).executeTakeFirst();
}

/**
 * Deletes every export of a form, or of each form of a project (forms being deleted), answering
 * the files to remove once the transaction has committed.
 */
export async function deleteExportsOfForms(db: DbOrTx, where: { formId: number } | { projectId: number }): Promise<Array<string | null>> {
  const forms = 'formId' in where ? sql`${where.formId}::int` : sql`SELECT id FROM forms WHERE project_id = ${where.projectId}`;
  const result = await sql<{ file_path: string | null }>`DELETE FROM exports WHERE form_id IN (${forms}) RETURNING file_path`.execute(db);
  return result.rows.map((r) => r.file_path);
}

/**
 * Removes all but the newest `keep` exports of one form and type (onadata keeps ten), answering
 * the files to remove.
 */
export async function pruneExports(db: DbOrTx, formId: number, exportType: string, keep: number): Promise<Array<{ file_path: string | null }>> {
  const result = await sql<{ file_path: string | null }>`
    DELETE FROM exports WHERE id IN (
      SELECT id FROM exports WHERE form_id = ${formId} AND export_type = ${exportType}
      ORDER BY id DESC OFFSET ${keep})
    RETURNING file_path`.execute(db);
  return result.rows;
}

/**
 * The form's definition and data as one comparable text: its definition hash, its count of
 * new submissions (form_stats) and its count of other changes to records (forms.data_changes,
 * kept by the database on every edit and deletion). Two small reads, whatever the form's size.
 */
export async function formDataVersion(db: DbOrTx, formId: number): Promise<string> {
  const result = await sql<{ hash: string; changes: number; submissions: number | null }>`
    SELECT f.hash, f.data_changes AS changes,
           (SELECT sum(s.submissions) FROM form_stats s WHERE s.form_id = f.id) AS submissions
    FROM forms f WHERE f.id = ${formId}`.execute(db);
  const row = result.rows[0];
  return row ? `${row.hash}|${Number(row.changes)}|${Number(row.submissions ?? 0)}` : '';
}

// ---------------------------------------------------------------- spreadsheet provider credentials

export async function saveSpreadsheetCredential(db: DbOrTx, userId: number, sealed: string, now: Date): Promise<void> {
  await db
    .insertInto('spreadsheet_credentials')
    .values({ user_id: userId, sealed, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ sealed, updated_at: now }))
    .execute();
}

export async function findSpreadsheetCredential(db: DbOrTx, userId: number): Promise<string | undefined> {
  const row = await db.selectFrom('spreadsheet_credentials').select('sealed').where('user_id', '=', userId).executeTakeFirst();
  return row?.sealed;
}

/**
 * Serialises export decisions for one form (reuse or a new export) until the transaction ends,
 * so two rapid requests get the same job rather than two.
 */
export async function lockFormExports(db: DbOrTx, formId: number): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${EXPORTS_LOCK_SPACE}::integer, ${formId}::integer)`.execute(db);
}
const EXPORTS_LOCK_SPACE = 8008;
