// Record imports as the API offers them (onadata-data.md §5): a small file is imported within the
// request; a larger one (by size, as onadata decides) is stored with a job that imports it, and
// the client polls the job. Either way an import is applied all at once or not at all.
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { RequestContext } from '../../context.ts';
import { AppError, errors, importRefusals } from '../../errors.ts';
import { requireUser } from '../../access/index.ts';
import { enqueueJob, findJobByUuid, type JobRow } from '../../jobs/queue.ts';
import { requireForm, type FormGrant } from '../../access/load.ts';
import { findFormDefinition } from '../forms/repository.ts';
import * as repo from './repository.ts';
import type { AppDeps } from '../../context.ts';
import { inTransaction, type DbOrTx } from '../../platform/db.ts';
import { importDirectly, ImportRefused, readRows, type ImportFileKind, type ImportSummary, type ImportTarget } from './pipeline.ts';
import { sniffFile } from './readers/sniff.ts';
import type { SpooledFile, SpooledUpload } from './upload.ts';

export const IMPORT_JOB = 'imports.run';
/** Pieces in which a job's file is kept in the database. */
const FILE_PIECE_BYTES = 1024 * 1024;

export type ImportEndpoint = 'csv_import' | 'import';

export interface ImportJobPayload {
  importId: string;
  formId: number;
  actorId: number;
  kind: ImportFileKind;
  overwrite: boolean;
  fileName: string;
}

/** onadata's answer to a refused import: `{"job_status": "FAILURE", "error": "…"}`, 400. */
export function refusal(error: ImportRefused): AppError {
  return errors.importFailed(error.message, error.rowErrors.length > 0 ? { errors: error.rowErrors } : {});
}

async function loadImportableForm(ctx: RequestContext, rawId: string): Promise<FormGrant> {
  requireUser(ctx.actor);
  // onadata: POST on the form's view set needs add_xform on the form (managers and owners).
  return requireForm(ctx, rawId, 'add_xform');
}

function notValidated(file: SpooledFile): AppError {
  return errors.importFileNotValidated(file.fileName);
}

/** Which spooled file to import and what it holds, checked by content as onadata's upload validation does. */
async function chooseFile(upload: SpooledUpload, endpoint: ImportEndpoint): Promise<{ file: SpooledFile; kind: ImportFileKind }> {
  const xls = endpoint === 'import' ? upload.files.get('xls_file') : undefined;
  const csv = upload.files.get('csv_file');
  const file = xls ?? csv;
  if (!file) throw errors.importFileMissing(endpoint === 'import');
  if (file.tooLarge) throw notValidated(file);
  const sniffed = await sniffFile(file.path);
  if (sniffed === 'empty') throw refusal(new ImportRefused(importRefusals.fileEmpty));
  if (file === xls) {
    if (sniffed !== 'xlsx' && sniffed !== 'xls') throw notValidated(file);
    return { file, kind: sniffed };
  }
  if (sniffed !== 'csv') throw notValidated(file);
  return { file, kind: 'csv' };
}

async function importTarget(ctx: RequestContext, visible: FormGrant, actorId: number, overwrite: boolean, importId: string): Promise<ImportTarget> {
  const form = visible.form;
  if (form.encrypted) throw refusal(new ImportRefused(importRefusals.encryptedForm));
  const definition = await findFormDefinition(ctx.db, form.id);
  return {
    importId,
    form: { id: form.id, id_string: form.id_string, version: form.version, uuid: form.uuid },
    formJson: definition.json,
    actorId,
    overwrite,
    maxInstanceBytes: ctx.config.uploadLimitBytes,
  };
}

/**
 * The connection an import in transaction `trx` looks existing records up on: on PostgreSQL the
 * pool (the look-ups then run while the transaction writes), on PGlite the transaction itself,
 * its single session being busy with it.
 */
export function lookupConnection(deps: AppDeps, trx: DbOrTx): DbOrTx {
  return deps.config.databaseUrl === undefined ? trx : deps.db;
}

export async function startImport(
  ctx: RequestContext,
  rawId: string,
  upload: SpooledUpload,
  options: { endpoint: ImportEndpoint; overwrite: boolean },
): Promise<ImportSummary | { task_id: string }> {
  const actor = requireUser(ctx.actor);
  const visible = await loadImportableForm(ctx, rawId);
  const { file, kind } = await chooseFile(upload, options.endpoint);
  const importId = randomUUID();
  const target = await importTarget(ctx, visible, actor.id, options.overwrite, importId);
  if (file.size >= ctx.config.importAsyncThresholdBytes) {
    const payload: ImportJobPayload = { importId, formId: visible.form.id, actorId: actor.id, kind, overwrite: options.overwrite, fileName: file.fileName };
    const job = await inTransaction(ctx.db, async (trx) => {
      await repo.preferFastCompression(trx);
      let seq = 0;
      for await (const piece of createReadStream(file.path, { highWaterMark: FILE_PIECE_BYTES }) as AsyncIterable<Buffer>) {
        await repo.saveImportFilePiece(trx, importId, seq++, piece);
      }
      return enqueueJob(trx, { type: IMPORT_JOB, payload, createdBy: actor.id });
    });
    ctx.jobWakeup?.wake();
    return { task_id: job.uuid };
  }
  try {
    return await inTransaction(ctx.db, (trx) => importDirectly(trx, lookupConnection(ctx, trx), target, readRows(kind, file.path), ctx.clock.now()));
  } catch (error) {
    if (error instanceof ImportRefused) throw refusal(error);
    throw error;
  }
}

function failure(message: string): { status: number; body: Record<string, unknown> } {
  return { status: 400, body: { job_status: 'FAILURE', error: message, error_message: message } };
}

function statusOf(job: JobRow): { status: number; body: Record<string, unknown> } {
  switch (job.status) {
    case 'SUCCESS':
      return { status: 200, body: { job_status: 'SUCCESS', ...(job.result as Record<string, unknown>) } };
    case 'FAILURE':
      return failure(job.error ?? 'The import failed.');
    case 'PENDING':
      return { status: 200, body: { job_status: 'PENDING' } };
    case 'STARTED': {
      // The spec's {current, total}; onadata's own names for the same counts beside them.
      const current = job.progress?.current ?? 0;
      const total = job.progress?.total ?? 0;
      return { status: 200, body: { job_status: 'PROGRESS', current, total, progress: current } };
    }
  }
}

/** GET …/csv_import?job_uuid= and …/import?job_uuid=: how the import job is doing. */
export async function importStatus(ctx: RequestContext, rawId: string, jobUuid: string | undefined): Promise<{ status: number; body: Record<string, unknown> }> {
  const actor = requireUser(ctx.actor);
  const visible = await requireForm(ctx, rawId, 'view_xform');
  if (!jobUuid) return failure('Empty job uuid');
  const job = await findJobByUuid(ctx.db, jobUuid);
  const payload = job?.payload as Partial<ImportJobPayload> | null | undefined;
  const mayWatch = job !== undefined && (job.created_by === actor.id || visible.allows('add_xform'));
  if (!job || job.type !== IMPORT_JOB || payload?.formId !== visible.form.id || !mayWatch) return failure(`Unknown job_uuid "${jobUuid}".`);
  return statusOf(job);
}
