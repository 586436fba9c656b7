// The data API's column filters (onadata's InstanceFilter and tag filters: `?uuid=`,
// `?submitted_by__username=`, `?date_created__gte=`, `?media_all_received=false`, `?tags=a,b`,
// `?not_tagged=a`): each becomes a condition on the record, ANDed with the JSON `query`.
import { sql } from 'kysely';
import { errors } from '../../errors.ts';
import { lookupTable } from '../../platform/lookup.ts';
import { objectCondition, type Condition } from './query.ts';

const COMPARISONS = lookupTable<string>({ gt: '$gt', gte: '$gte', lt: '$lt', lte: '$lte' });
/** Filter names for the meta keys of the JSON query. */
const TEXT_FILTERS = lookupTable<string>({ uuid: '_uuid', version: '_version', status: '_status', submitted_by__username: '_submitted_by' });
const DATE_FILTERS = lookupTable<string>({ date_created: '_submission_time', date_modified: '_date_modified', last_edited: '_last_edited' });

function single(value: unknown): string | undefined {
  const first = Array.isArray(value) ? (value as unknown[])[0] : value;
  return typeof first === 'string' ? first : undefined;
}

function csv(value: string): string[] {
  return value.split(',').map((t) => t.trim()).filter(Boolean);
}

/** `date_created__year__lt=2020` and the like: a year as the range it spans. */
function yearCondition(key: string, op: string | undefined, value: string): Record<string, unknown> {
  if (!/^\d{4}$/.test(value)) throw errors.filterYearInvalid(key);
  const start = `${value}-01-01T00:00:00+00:00`;
  const next = `${Number(value) + 1}-01-01T00:00:00+00:00`;
  switch (op) {
    case undefined:
      return { $gte: start, $lt: next };
    case 'gt':
    case 'gte':
      return { $gte: op === 'gt' ? next : start };
    case 'lt':
    case 'lte':
      return { $lt: op === 'lt' ? start : next };
    default:
      throw errors.filterUnknown(key);
  }
}

/** The filters among a request's parameters: their condition, and a key naming them (for caches). */
export function recordFilters(params: Readonly<Record<string, unknown>>): { condition: Condition; key: string } {
  const query: Record<string, unknown>[] = [];
  const raw: Condition[] = [];
  const used: string[] = [];
  for (const [key, rawValue] of Object.entries(params).sort(([a], [b]) => a.localeCompare(b))) {
    const value = single(rawValue);
    if (value === undefined) continue;
    const known = key in TEXT_FILTERS || (DATE_FILTERS[key.split('__')[0] ?? ''] !== undefined) || key === 'media_all_received' || key === 'tags' || key === 'not_tagged';
    if (known) used.push(`${key}=${value}`);
    const textKey = TEXT_FILTERS[key];
    if (textKey) {
      query.push({ [textKey]: value });
      continue;
    }
    const [base = '', ...rest] = key.split('__');
    const dateKey = DATE_FILTERS[base];
    if (dateKey) {
      if (rest[0] === 'year') query.push({ [dateKey]: yearCondition(key, rest[1], value) });
      else if (rest.length === 0) query.push({ [dateKey]: value });
      else if (rest.length === 1 && COMPARISONS[rest[0] ?? '']) query.push({ [dateKey]: { [COMPARISONS[rest[0] ?? ''] ?? '$eq']: value } });
      else throw errors.filterUnknown(key);
      continue;
    }
    if (key === 'media_all_received') {
      const wanted = value.toLowerCase();
      if (wanted !== 'true' && wanted !== 'false') throw errors.mediaAllReceivedNotBoolean();
      raw.push(wanted === 'true' ? sql`i.media_count >= i.total_media` : sql`i.media_count < i.total_media`);
    } else if (key === 'tags' || key === 'not_tagged') {
      const tags = csv(value);
      if (tags.length === 0) continue;
      const tagged = sql`EXISTS (SELECT 1 FROM jsonb_array_elements_text(coalesce(i.json->'_tags', '[]'::jsonb)) AS t(tag) WHERE lower(t.tag) = ANY(${tags.map((t) => t.toLowerCase())}::text[]))`;
      raw.push(key === 'tags' ? tagged : sql`NOT ${tagged}`);
    }
  }
  const parts = [...query.map((q) => objectCondition(q)), ...raw];
  return { condition: parts.length === 0 ? sql`TRUE` : sql.join(parts, sql` AND `), key: used.join('&') };
}
