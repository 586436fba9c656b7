// Submission reviews (onadata's /api/v1/submissionreview): create one or a list, list with
// filters, read, change and delete (a mark, as onadata does). Each write rewrites the reviewed
// records' `_review_*` and `_notes` keys in the same transaction.
//
// Unlike onadata, which lists and shows every review to every caller, a caller sees the reviews
// of the records they may read through the data API.
import type { RequestContext } from '../../context.ts';
import { errors, type FieldErrors } from '../../errors.ts';
import { isAuthenticated, isRole, recordReadingRoles, requireUser } from '../../access/index.ts';
import { formStanding, type FormStanding } from '../../access/load.ts';
import * as repo from './repository.ts';
import { queueReviewedRecords } from '../restservices/repository.ts';
import { reviewToApi } from './to-api.ts';
import { fieldErrorsOf } from '../shared/field-errors.ts';
import { inTransaction } from '../../platform/db.ts';

/** The most reviews one bulk request may create. */
export const MAX_BULK_REVIEWS = 1000;

/** One review as a request gave it (reviews/inputs.ts reads it). */
export interface ReviewInput {
  /** Set on create; an update keeps the review's record. */
  instanceId?: number;
  status?: repo.ReviewStatus;
  /** Absent: not given; '' or null given: no comment. */
  note?: string | null;
  /** What was wrong with the fields as read; the service adds its lookups' and answers all in one 400. */
  fieldErrors: FieldErrors;
}

/** A create request: one review (an object) or several (a list). */
export interface CreateReviewsInput {
  bulk: boolean;
  /** How many items the request gave. */
  count: number;
  /** Each item read; none when there are more than MAX_BULK_REVIEWS. */
  reviews: ReviewInput[];
}

export function isReviewStatus(value: string): value is repo.ReviewStatus {
  return (repo.REVIEW_STATUSES as readonly string[]).includes(value);
}

function reader(ctx: RequestContext): repo.ReviewReader {
  const roles = recordReadingRoles();
  return { userId: isAuthenticated(ctx.actor) ? ctx.actor.user.id : undefined, allRecordsRoles: roles.all, ownRecordsRoles: roles.own };
}

/** Whether the caller may read this record at all (else it does not exist for them). */
function readsRecord(ctx: RequestContext, target: repo.ReviewTarget): boolean {
  return standingOn(ctx, target).reads(target.submitted_by);
}

/** The caller's standing on the target's form, from the role the target's query read with it. */
function standingOn(ctx: RequestContext, target: repo.ReviewTarget): FormStanding {
  return formStanding(ctx.actor, target, target.role !== null && isRole(target.role) ? target.role : undefined);
}

/**
 * POST /api/v1/submissionreview: one review (an object) or several (a list), all or none. Every
 * record must be one the caller reviews (owner or manager of its form), else 403 for the lot.
 */
export async function createReviews(ctx: RequestContext, request: CreateReviewsInput): Promise<{ bulk: boolean; items: Record<string, unknown>[] }> {
  const actor = requireUser(ctx.actor);
  const { bulk, count } = request;
  if (bulk && count === 0) throw errors.reviewListEmpty();
  if (count > MAX_BULK_REVIEWS) throw errors.reviewListTooLong(MAX_BULK_REVIEWS);

  const read = request.reviews;
  const ids = [...new Set(read.flatMap((r) => (r.instanceId === undefined ? [] : [r.instanceId])))];
  const targets = new Map((await repo.findReviewTargets(ctx.db, ids, actor.id)).filter((t) => readsRecord(ctx, t)).map((t) => [t.instance_id, t]));
  const problems = read.map((input) => {
    const found = fieldErrorsOf(input);
    if (input.instanceId !== undefined && !targets.has(input.instanceId)) {
      (found['instance'] ??= []).push(`Invalid pk "${input.instanceId}" - object does not exist.`);
    }
    return found;
  });
  if (problems.some((p) => Object.keys(p).length > 0)) {
    throw bulk ? errors.invalidItems(problems) : errors.invalidFields(problems[0] ?? {});
  }
  if (![...targets.values()].every((t) => standingOn(ctx, t).reviews)) throw errors.permissionDenied();

  const now = ctx.clock.now();
  const created = await inTransaction(ctx.db, async (trx) => {
    await repo.lockInstances(trx, ids);
    const reviewIds: number[] = [];
    for (const input of read) {
      const instanceId = input.instanceId;
      if (instanceId === undefined) throw new Error('a validated review has no record');
      const noteId = input.note
        ? await repo.insertNote(trx, { instanceId, text: input.note, instanceField: repo.REVIEW_NOTE_FIELD, createdBy: actor.id, now })
        : null;
      reviewIds.push(await repo.insertReview(trx, { instanceId, noteId, status: input.status ?? '3', createdBy: actor.id, now }));
    }
    await repo.refreshRecordReviewKeys(trx, ids, now);
    await queueReviewedRecords(trx, ids);
    return reviewIds;
  });
  const rows = new Map((await repo.listReadableReviews(ctx.db, reader(ctx), { ids: created })).map((r) => [r.id, r]));
  return { bulk, items: created.flatMap((id) => { const row = rows.get(id); return row ? [reviewToApi(row)] : []; }) };
}

export interface ReviewListQuery {
  instance?: string | undefined;
  instance__xform?: string | undefined;
  status?: string | undefined;
  created_by?: string | undefined;
}

const INVALID_CHOICE = 'Select a valid choice. That choice is not one of the available choices.';

/** GET /api/v1/submissionreview: the reviews the caller may read, filtered as onadata's filterset does. */
export async function listReviews(ctx: RequestContext, query: ReviewListQuery): Promise<Record<string, unknown>[]> {
  const problems: FieldErrors = {};
  const filter: repo.ReviewFilter = {};
  const id = (field: keyof ReviewListQuery): number | undefined => {
    const raw = query[field];
    if (raw === undefined || raw === '') return undefined;
    if (/^\d{1,9}$/.test(raw)) return Number(raw);
    problems[field] = [INVALID_CHOICE];
    return undefined;
  };
  const instanceId = id('instance');
  const formId = id('instance__xform');
  const createdBy = id('created_by');
  if (instanceId !== undefined) filter.instanceId = instanceId;
  if (formId !== undefined) filter.formId = formId;
  if (createdBy !== undefined) filter.createdBy = createdBy;
  const status = query.status;
  if (status !== undefined && status !== '') {
    if (isReviewStatus(status)) filter.status = status;
    else problems['status'] = [`Select a valid choice. ${status} is not one of the available choices.`];
  }
  if (Object.keys(problems).length > 0) throw errors.invalidFields(problems);
  return (await repo.listReadableReviews(ctx.db, reader(ctx), filter)).map(reviewToApi);
}

function parseReviewId(raw: string): number {
  if (!/^\d{1,9}$/.test(raw)) throw errors.noMatch('SubmissionReview');
  return Number(raw);
}

async function loadReadableReview(ctx: RequestContext, rawId: string): Promise<repo.ReviewRow> {
  const [row] = await repo.listReadableReviews(ctx.db, reader(ctx), { ids: [parseReviewId(rawId)] });
  if (!row) throw errors.noMatch('SubmissionReview');
  return row;
}

export async function getReview(ctx: RequestContext, rawId: string): Promise<Record<string, unknown>> {
  return reviewToApi(await loadReadableReview(ctx, rawId));
}

/** A review the caller reads and may change (owner or manager of its form): else 404 / 403. */
async function loadChangeableReview(ctx: RequestContext, rawId: string): Promise<repo.ReviewRow> {
  const actor = requireUser(ctx.actor);
  const row = await loadReadableReview(ctx, rawId);
  const [target] = await repo.findReviewTargets(ctx.db, [row.instance_id], actor.id);
  if (!target || !standingOn(ctx, target).reviews) throw errors.permissionDenied();
  return row;
}

/**
 * PATCH (or PUT) /api/v1/submissionreview/{id}: a new status and/or comment. An empty or null
 * note removes the comment; the record stays the review's own.
 */
export async function updateReview(ctx: RequestContext, rawId: string, input: ReviewInput): Promise<Record<string, unknown>> {
  const actor = requireUser(ctx.actor);
  const row = await loadChangeableReview(ctx, rawId);
  if (Object.keys(input.fieldErrors).length > 0) throw errors.invalidFields(fieldErrorsOf(input));
  const now = ctx.clock.now();
  const changed = await inTransaction(ctx.db, async (trx) => {
    await repo.lockInstances(trx, [row.instance_id]);
    const current = await repo.lockLiveReview(trx, row.id);
    if (!current) return false;
    let noteId = current.note_id;
    if (input.note !== undefined) {
      if (input.note && noteId !== null) await repo.updateNoteText(trx, noteId, input.note, now);
      else if (input.note) noteId = await repo.insertNote(trx, { instanceId: row.instance_id, text: input.note, instanceField: repo.REVIEW_NOTE_FIELD, createdBy: actor.id, now });
      else if (noteId !== null) {
        await repo.deleteNote(trx, noteId);
        noteId = null;
      }
    }
    await repo.updateReview(trx, row.id, { status: input.status ?? row.status, noteId, now });
    await repo.refreshRecordReviewKeys(trx, [row.instance_id], now);
    await queueReviewedRecords(trx, [row.instance_id]);
    return true;
  });
  if (!changed) throw errors.noMatch('SubmissionReview');
  return getReview(ctx, String(row.id));
}

/** DELETE /api/v1/submissionreview/{id}: marks it deleted; the record shows its latest live review again. */
export async function deleteReview(ctx: RequestContext, rawId: string): Promise<void> {
  const actor = requireUser(ctx.actor);
  const row = await loadChangeableReview(ctx, rawId);
  const now = ctx.clock.now();
  const deleted = await inTransaction(ctx.db, async (trx) => {
    await repo.lockInstances(trx, [row.instance_id]);
    if (!(await repo.softDeleteReview(trx, row.id, actor.id, now))) return false;
    await repo.refreshRecordReviewKeys(trx, [row.instance_id], now);
    await queueReviewedRecords(trx, [row.instance_id]);
    return true;
  });
  if (!deleted) throw errors.noMatch('SubmissionReview');
}
