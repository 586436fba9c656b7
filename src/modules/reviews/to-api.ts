// Review rows → onadata's SubmissionReviewSerializer shape.
import { isoTimestamp } from '../../platform/clock.ts';
import type { ReviewRow } from './repository.ts';

export function reviewToApi(row: ReviewRow): Record<string, unknown> {
  return {
    id: row.id,
    instance: row.instance_id,
    created_by: row.created_by,
    status: row.status,
    date_created: isoTimestamp(row.date_created),
    note: row.note,
    date_modified: isoTimestamp(row.date_modified),
  };
}
