// GET /api/v1/stats/submissions/{pk}?group=…&name=…: how many of a form's records share each value
// of one field (onadata's submission stats). `_submission_time` groups by day, `_submitted_by` by
// account, anything else by the answer's text (a select_multiple answer's text is its choices
// joined by spaces, so each combination counts apart, as in onadata).
import type { RequestContext } from '../../context.ts';
import { errors } from '../../errors.ts';
import { requireForm } from '../../access/load.ts';
import { countRecordsBy, type StatsGroup } from './repository.ts';

export interface StatsQuery {
  group?: string | undefined;
  name?: string | undefined;
}

function groupOf(field: string): StatsGroup {
  if (field === '_submission_time') return { kind: 'day' };
  if (field === '_submitted_by') return { kind: 'submitter' };
  return { kind: 'answer', field };
}

export async function submissionStats(ctx: RequestContext, rawId: string, query: StatsQuery): Promise<Array<Record<string, unknown>>> {
  const field = (query.group ?? '').trim();
  if (!field) throw errors.statsGroupMissing();
  if (field.length > 255) throw errors.statsGroupTooLong();
  const { form, submittedBy } = await requireForm(ctx, rawId, 'view_xform_data');
  const name = (query.name ?? '').trim() || field;
  const rows = await countRecordsBy(ctx.db, form.id, groupOf(field), submittedBy);
  return rows.map((row) => ({ [name]: row.value, count: row.count }));
}
