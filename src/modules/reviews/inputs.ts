// Reading the review routes' bodies into the service's typed inputs, with DRF's per-field messages.
// Nothing here throws: the service adds the errors of its lookups (a record that does not exist for
// the caller) and answers one 400 after its access checks.
import type { FieldErrors } from '../../errors.ts';
import type { Payload } from '../../http/payload.ts';
import { isReviewStatus, MAX_BULK_REVIEWS, type CreateReviewsInput, type ReviewInput } from './service.ts';

const COMMENT_REQUIRED = 'Cannot reject a submission without a comment.';

function pythonTypeName(value: unknown): string {
  if (value === null) return 'NoneType';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  return 'dict';
}

function isPayload(value: unknown): value is Payload {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One review's fields, DRF's messages for bad ones. `withInstance`: the record is required (create). */
function readReview(item: unknown, withInstance: boolean): ReviewInput {
  const problems: FieldErrors = {};
  const input: ReviewInput = { fieldErrors: problems };
  const fail = (field: string, message: string): void => void (problems[field] ??= []).push(message);
  if (!isPayload(item)) {
    fail('non_field_errors', `Invalid data. Expected a dictionary, but got ${pythonTypeName(item)}.`);
    return input;
  }
  if (withInstance) {
    const raw = item['instance'];
    if (raw === undefined) fail('instance', 'This field is required.');
    else if (raw === null) fail('instance', 'This field may not be null.');
    else if (typeof raw === 'number' && Number.isSafeInteger(raw) && raw > 0) input.instanceId = raw;
    else if (typeof raw === 'string' && /^\d{1,9}$/.test(raw.trim())) input.instanceId = Number(raw.trim());
    else if (typeof raw === 'string' || typeof raw === 'number') fail('instance', `Invalid pk "${String(raw)}" - object does not exist.`);
    else fail('instance', `Incorrect type. Expected pk value, received ${pythonTypeName(raw)}.`);
  }
  const status = item['status'];
  if (status === null) fail('status', 'This field may not be null.');
  else if (status !== undefined) {
    const text = typeof status === 'string' || typeof status === 'number' ? String(status) : undefined;
    if (text !== undefined && isReviewStatus(text)) input.status = text;
    else fail('status', `"${text ?? JSON.stringify(status)}" is not a valid choice.`);
  }
  const note = item['note'];
  if (note === null) input.note = null;
  else if (note !== undefined) {
    if (typeof note === 'string' || typeof note === 'number') input.note = String(note).trim();
    else fail('note', 'Not a valid string.');
  }
  // Given in this request, as onadata's validate() sees it.
  if (input.status === '2' && !input.note && !problems['note']) fail('note', COMMENT_REQUIRED);
  return input;
}

/** POST /api/v1/submissionreview: one review (an object) or several (a list). */
export function createReviewsInput(body: unknown): CreateReviewsInput {
  const bulk = Array.isArray(body);
  const items: unknown[] = bulk ? body : [body];
  // A list over the limit is refused whole: its items are not worth reading.
  return { bulk, count: items.length, reviews: items.length > MAX_BULK_REVIEWS ? [] : items.map((item) => readReview(item, true)) };
}

/** PATCH or PUT /api/v1/submissionreview/{id}: the status and/or note given. */
export function updateReviewInput(body: unknown): ReviewInput {
  return readReview(body, false);
}
