// create_async and delete_async: the same publish and delete, run by a background job that the
// client polls with its job_uuid.
import type { RequestContext } from '../../context.ts';
import { errors, isAppError } from '../../errors.ts';
import { anonymous, requireUser } from '../../access/index.ts';
import { requireForm } from '../../access/load.ts';
import type { ParsedBody } from '../../lib/uploaded-body.ts';
import { isoTimestamp } from '../../platform/clock.ts';
import { findActiveUserById } from '../accounts/repository.ts';
import { getBlob, putBlob } from '../blobs/repository.ts';
import { enqueueJob, findJobByUuid, type JobRow } from '../../jobs/queue.ts';
import type { JobContext } from '../../jobs/registry.ts';
import * as repo from './repository.ts';
import { publishNewForm } from './publish.ts';
import { formDetail, projectToPublishInto, publishTarget, softDeleteFormWithExports } from './service.ts';
import { inTransaction } from '../../platform/db.ts';

export const PUBLISH_JOB = 'forms.publish';
export const DELETE_JOB = 'forms.delete';

interface PublishPayload {
  ownerId: number;
  createdById: number;
  projectId: number | null;
  fileName: string;
  contentType: string;
  blob: string;
}

interface DeletePayload {
  formId: number;
  userId: number;
}

export async function startAsyncPublish(ctx: RequestContext, body: ParsedBody): Promise<{ job_uuid: string }> {
  const actor = requireUser(ctx.actor);
  const file = body.files.get('xls_file');
  if (!file || file.bytes.byteLength === 0) throw errors.xlsFileEmpty();
  const owner = await publishTarget(ctx, body.fields['owner']);
  const projectId = (await projectToPublishInto(ctx, body.fields['project'])) ?? null;
  const job = await inTransaction(ctx.db, async (trx) => {
    const blob = await putBlob(trx, file.bytes, file.contentType);
    const payload: PublishPayload = { ownerId: owner.id, createdById: actor.id, projectId, fileName: file.fileName, contentType: file.contentType, blob };
    return enqueueJob(trx, { type: PUBLISH_JOB, payload, createdBy: actor.id, maxAttempts: 1 });
  });
  ctx.jobWakeup?.wake();
  return { job_uuid: job.uuid };
}

export async function startAsyncDelete(ctx: RequestContext, rawId: string): Promise<{ job_uuid: string; time_async_triggered: string }> {
  const actor = requireUser(ctx.actor);
  const { form } = await requireForm(ctx, rawId, 'delete_xform');
  const payload: DeletePayload = { formId: form.id, userId: actor.id };
  const job = await enqueueJob(ctx.db, { type: DELETE_JOB, payload, createdBy: actor.id });
  ctx.jobWakeup?.wake();
  return { job_uuid: job.uuid, time_async_triggered: isoTimestamp(ctx.clock.now()) };
}

/** The caller's own job of this type, or a 400: unknown ids and other people's jobs look the same. */
async function callersJob(ctx: RequestContext, jobUuid: string | undefined, type: string): Promise<JobRow> {
  const actor = requireUser(ctx.actor);
  if (!jobUuid) throw errors.jobUuidMissing();
  const job = await findJobByUuid(ctx.db, jobUuid);
  if (!job || job.type !== type || job.created_by !== actor.id) throw errors.unknownJob(jobUuid);
  return job;
}

function statusBody(job: JobRow): Record<string, unknown> {
  // onadata answers JOB_STATUS; the spec writes job_status: send both.
  const body: Record<string, unknown> = { job_status: job.status, JOB_STATUS: job.status };
  if (job.status === 'FAILURE') body['error'] = job.error ?? 'The job failed.';
  return body;
}

export async function asyncPublishStatus(ctx: RequestContext, jobUuid: string | undefined): Promise<{ status: number; body: Record<string, unknown> }> {
  const job = await callersJob(ctx, jobUuid, PUBLISH_JOB);
  const result = job.result as { formId?: number } | null;
  if (job.status === 'SUCCESS' && typeof result?.formId === 'number') {
    const form = await repo.findLiveForm(ctx.db, result.formId);
    if (form) return { status: 201, body: await formDetail(ctx, form.id) };
  }
  return { status: 202, body: statusBody(job) };
}

export async function asyncDeleteStatus(ctx: RequestContext, jobUuid: string | undefined): Promise<Record<string, unknown>> {
  return statusBody(await callersJob(ctx, jobUuid, DELETE_JOB));
}

/** A request context for work done on a user's behalf outside a request. */
async function jobContext(job: JobContext, userId: number): Promise<RequestContext> {
  const user = await findActiveUserById(job.deps.db, userId);
  return { ...job.deps, actor: user ? { kind: 'user', user, scheme: 'token' } : anonymous, baseUrl: job.deps.config.baseUrl ?? '', ip: '', challenge: '' };
}

/** Publishing errors are the user's (a bad XLSForm): the job fails with their text, no retry. */
function userFacingError(error: unknown): Error {
  if (isAppError(error)) {
    const body = error.body as Record<string, unknown>;
    const text = body['text'] ?? body['detail'] ?? body['message'] ?? JSON.stringify(body);
    return new Error(String(text));
  }
  return error instanceof Error ? error : new Error(String(error));
}

export async function runPublishJob(job: JobContext, payload: PublishPayload): Promise<{ formId: number }> {
  const ctx = await jobContext(job, payload.createdById);
  const owner = await findActiveUserById(ctx.db, payload.ownerId);
  const creator = ctx.actor.kind === 'user' ? ctx.actor.user : undefined;
  const blob = await getBlob(ctx.db, payload.blob);
  if (!owner || !creator || !blob) throw new Error('The account or the uploaded file no longer exists.');
  try {
    const projectId = payload.projectId ?? undefined;
    const { formId } = await publishNewForm(ctx, {
      source: { fileName: payload.fileName, bytes: blob.data, contentType: payload.contentType },
      owner,
      projectId,
      createdBy: creator,
    });
    return { formId };
  } catch (error) {
    throw userFacingError(error);
  }
}

export async function runDeleteJob(job: JobContext, payload: DeletePayload): Promise<{ formId: number }> {
  await softDeleteFormWithExports(job.deps, payload.formId, payload.userId);
  return { formId: payload.formId };
}
