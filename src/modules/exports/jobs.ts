// export_async: an export made by a background job into a file under DATA_DIR/exports, an
// Export record the client polls by job_uuid, and reuse of an up-to-date export made with the
// same form, format and options. Custom reports (xls/xlsx with meta or token) are Exports of type
// `external`, made anew on every request: their template may have changed.
import type { RequestContext } from '../../context.ts';
import { errors, isAppError } from '../../errors.ts';
import { anonymous, requireUser } from '../../access/index.ts';
import { enqueueJob, findJobByUuid } from '../../jobs/queue.ts';
import type { JobContext } from '../../jobs/registry.ts';
import { findActiveUserById } from '../accounts/repository.ts';
import { findLiveForm } from '../forms/repository.ts';
import { exportOptionsFor, loadExportTarget, renderExport, type ExportTarget } from './render.ts';
import { optionsFromStored, optionsKey as keyOf, storedOptions } from './stored-exports-options.ts';
import { exportFileExists, exportFilePath, removeExportFile, writeExportFile } from './files.ts';
import * as stored from './stored-exports-repository.ts';
import { exportTypeOf, exportUrl, formatOfExportType, type ExportType } from './stored-exports.ts';
import { requireSpreadsheetCredential, writeGoogleSheet } from './gsheets.ts';
import { isXlsReportRequest, parseReportRequest, renderReport, reportExportOptions, reportRequestFromStored, reportTemplateUrl, storedReportRequest } from './xls-report.ts';
import { inTransaction } from '../../platform/db.ts';

export const EXPORT_JOB = 'exports.generate';
/** onadata keeps this many exports per form and type; the oldest goes when another is made. */
const EXPORTS_KEPT = 10;

interface ExportJobPayload {
  exportId: number;
  /** The requesting address, for links inside the file (media URLs) when BASE_URL is unset. */
  baseUrl: string;
}

export type Query = Record<string, string | undefined>;

export interface AsyncReply {
  status: number;
  body: Record<string, unknown>;
}

/** GET /forms/{pk}/export_async?format=…: a job, or an existing export that is still up to date. */
export async function startExport(ctx: RequestContext, rawFormId: string, query: Query): Promise<AsyncReply> {
  const actor = requireUser(ctx.actor);
  const requested = exportTypeOf(query['format']);
  if (!requested || (requested === 'gsheets' && !ctx.config.googleClientId)) throw errors.exportFormatNotSupported();
  // meta or token turn an Excel export into a custom report; other formats ignore them.
  const exportType: ExportType = (requested === 'xls' || requested === 'xlsx') && isXlsReportRequest(query) ? 'external' : requested;
  const target = await loadExportTarget(ctx, rawFormId);
  if (exportType === 'gsheets') await requireSpreadsheetCredential(ctx, actor.id, query['redirect_uri']);
  let options: Record<string, string | boolean | string[]>;
  if (exportType === 'external') {
    // What the direct download refuses at once is refused here too (a bad or unknown meta id,
    // data_id, an empty URL); the template itself is fetched and checked by the job.
    const report = parseReportRequest(query);
    await reportTemplateUrl(ctx.db, target.formId, report);
    options = { ...storedOptions(reportExportOptions(query), query), ...storedReportRequest(report) };
  } else {
    options = storedOptions(await exportOptionsFor(ctx, target, query), query);
  }
  const optionsKey = keyOf(options);
  const submittedBy = target.submittedBy ?? null;

  const outcome = await inTransaction(ctx.db, async (trx): Promise<{ reply: AsyncReply; removed: Array<string | null> }> => {
    await stored.lockFormExports(trx, target.formId);
    // Deleting the form takes the same lock: an export is never recorded for a deleted form.
    if (!(await findLiveForm(trx, target.formId))) throw errors.notFound();
    const dataVersion = await stored.formDataVersion(trx, target.formId);
    // External reports always regenerate (onadata's process_async_export).
    const newest = exportType === 'external' ? undefined : await stored.findNewestMatchingExport(trx, { formId: target.formId, exportType, optionsKey, submittedBy });
    if (newest && newest.data_version === dataVersion) {
      // A finished export is reused while its file is there (a sheet lives elsewhere).
      const usable = newest.external_url !== null || (newest.file_path !== null && (await exportFileExists(ctx.config.dataDir, newest.file_path)));
      if (newest.status === 'SUCCESS' && usable) {
        return { reply: { status: 202, body: { job_status: 'SUCCESS', export_url: exportUrl(ctx.baseUrl, newest, false) } }, removed: [] };
      }
      const job = newest.task_id ? await findJobByUuid(trx, newest.task_id) : undefined;
      if (job && (job.status === 'PENDING' || job.status === 'STARTED')) {
        return { reply: { status: 202, body: { job_uuid: job.uuid } }, removed: [] };
      }
    }
    const row = await stored.insertExport(trx, {
      formId: target.formId,
      exportType,
      options,
      optionsKey,
      submittedBy,
      dataVersion,
      createdBy: actor.id,
      createdAt: ctx.clock.now(),
    });
    const payload: ExportJobPayload = { exportId: row.id, baseUrl: ctx.baseUrl };
    const job = await enqueueJob(trx, { type: EXPORT_JOB, payload, createdBy: actor.id });
    await stored.setExportTask(trx, row.id, job.uuid);
    const pruned = await stored.pruneExports(trx, target.formId, exportType, EXPORTS_KEPT);
    return { reply: { status: 202, body: { job_uuid: job.uuid } }, removed: pruned.map((p) => p.file_path) };
  });
  for (const path of outcome.removed) await removeExportFile(ctx.config.dataDir, path);
  ctx.jobWakeup?.wake();
  return outcome.reply;
}

/** GET /forms/{pk}/export_async?job_uuid=…: always 202, with the job's state. */
export async function exportStatus(ctx: RequestContext, rawFormId: string, jobUuid: string): Promise<AsyncReply> {
  requireUser(ctx.actor);
  const target = await loadExportTarget(ctx, rawFormId);
  const row = /^[0-9a-f-]{32,36}$/i.test(jobUuid) ? await stored.findExportByTask(ctx.db, jobUuid) : undefined;
  if (!row || row.form_id !== target.formId || (target.submittedBy !== undefined && row.submitted_by !== target.submittedBy)) {
    throw errors.unknownJob(jobUuid);
  }
  if (row.status === 'SUCCESS') return { status: 202, body: { job_status: 'SUCCESS', export_url: exportUrl(ctx.baseUrl, row, false) } };
  let message = row.error_message;
  if (row.status === 'PENDING') {
    const job = await findJobByUuid(ctx.db, jobUuid);
    if (job && job.status !== 'FAILURE') {
      const body: Record<string, unknown> = { job_status: 'PENDING' };
      if (job.progress) Object.assign(body, { progress: job.progress.current, total: job.progress.total });
      return { status: 202, body };
    }
    // The job ended without reaching its handler's bookkeeping (its worker died on every try).
    message = job?.error ?? 'The export job no longer exists.';
    await stored.markExportFailed(ctx.db, row.id, message, ctx.clock.now());
  }
  const text = message ?? 'The export failed.';
  return { status: 202, body: { job_status: 'FAILURE', job_uuid: jobUuid, error_message: text, error: text } };
}

/** A request context for the user who asked for the export, outside the request. */
async function contextFor(job: JobContext, userId: number | null, baseUrl: string): Promise<RequestContext> {
  const user = userId === null ? undefined : await findActiveUserById(job.deps.db, userId);
  return { ...job.deps, actor: user ? { kind: 'user', user, scheme: 'token' } : anonymous, baseUrl: job.deps.config.baseUrl ?? baseUrl, ip: '', challenge: '' };
}

/** What a user reads when an export fails: the error's own message, never a stack. */
function failureMessage(error: unknown): string {
  if (isAppError(error)) {
    const body = error.body;
    if (Array.isArray(body)) return body.map(String).join(' ');
    const text = body['detail'] ?? body['details'] ?? body['message'] ?? body['error'];
    return typeof text === 'string' ? text : JSON.stringify(body);
  }
  return error instanceof Error ? error.message : String(error);
}

async function produce(ctx: RequestContext, job: JobContext, target: ExportTarget, row: stored.ExportRow): Promise<void> {
  const { deps } = job;
  const exportType = row.export_type as ExportType;
  const options = optionsFromStored(row.options);
  if (exportType === 'gsheets') {
    const sheet = await writeGoogleSheet(ctx, target, options, job.signal);
    await stored.markExportSucceeded(deps.db, row.id, { filePath: null, filename: sheet.title, size: null, externalUrl: sheet.url, finishedAt: deps.clock.now() });
    return;
  }
  // Polling clients see the records written so far and the total (export_async?job_uuid=…).
  const progress = { onProgress: (records: number, total: number) => job.reportProgress(records, total) };
  const file =
    exportType === 'external'
      ? await renderReport(ctx, target, reportRequestFromStored(row.options), options, progress)
      : await renderExport(deps, target, formatOfExportType(exportType), options, ctx.baseUrl, progress);
  const path = exportFilePath(row.form_id, row.id, file.extension);
  const size = await writeExportFile(deps.config.dataDir, path, file.chunks, job.signal);
  const saved = await stored.markExportSucceeded(deps.db, row.id, { filePath: path, filename: file.fileName, size, finishedAt: deps.clock.now() });
  // The export was deleted while its file was being written.
  if (!saved) await removeExportFile(deps.config.dataDir, path);
}

export async function runExportJob(job: JobContext, payload: ExportJobPayload): Promise<{ exportId: number }> {
  const { deps } = job;
  const row = await stored.findExport(deps.db, payload.exportId);
  // Deleted before it ran, or finished by an earlier attempt.
  if (!row || row.status !== 'PENDING') return { exportId: payload.exportId };
  try {
    const ctx = await contextFor(job, row.created_by, payload.baseUrl);
    const target = await loadExportTarget(ctx, String(row.form_id));
    await produce(ctx, job, target, row);
  } catch (error) {
    // Shutdown or a lost lease: the job goes back to the queue and the export stays PENDING.
    if (job.signal.aborted) throw error;
    await stored.markExportFailed(deps.db, row.id, failureMessage(error).slice(0, 1000), deps.clock.now());
    throw new Error(failureMessage(error), { cause: error });
  }
  return { exportId: row.id };
}
