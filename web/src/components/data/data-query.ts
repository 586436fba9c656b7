// The data table's filters, search and sort as the data API's `query` and `sort` parameters
// (onadata's JSON query: `{"field": value}`, `$gt`/`$gte`/`$lt`/`$lte`/`$ne`, `$i` for "contains").
import { NUMBER_TYPES, type Field } from './form-fields.ts';

export type FilterOperator = 'eq' | 'ne' | 'contains' | 'gt' | 'lt';

export interface AnswerFilter {
  field: string;
  operator: FilterOperator;
  value: string;
}

export interface TableFilters {
  answers: AnswerFilter[];
  /** `YYYY-MM-DD`, inclusive, on _submission_time. */
  from: string;
  to: string;
  /** '' for any, else 1 approved, 2 rejected, 3 pending. */
  review: string;
  submittedBy: string;
  search: string;
}

export function emptyFilters(): TableFilters {
  return { answers: [], from: '', to: '', review: '', submittedBy: '', search: '' };
}

const OPERATORS: Readonly<Record<Exclude<FilterOperator, 'eq' | 'contains'>, string>> = { ne: '$ne', gt: '$gt', lt: '$lt' };

function nextDay(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + 1);
  return date.toISOString().slice(0, 10);
}

function answerCondition(filter: AnswerFilter, field: Field | undefined): Record<string, unknown> {
  const numeric = field !== undefined && NUMBER_TYPES.has(field.type) && filter.value.trim() !== '' && Number.isFinite(Number(filter.value));
  const value: string | number = numeric ? Number(filter.value) : filter.value;
  if (filter.operator === 'contains') return { [filter.field]: { $i: filter.value } };
  if (filter.operator === 'eq') return { [filter.field]: numeric ? { $gte: value, $lte: value } : value };
  return { [filter.field]: { [OPERATORS[filter.operator]]: value } };
}

/**
 * The `query` parameter for these filters, or '' for none. Plain text alone is the API's own
 * whole-record search; with other filters it becomes "contains" on any of the searchable fields.
 */
export function buildQuery(filters: TableFilters, fields: readonly Field[]): string {
  const parts: Record<string, unknown>[] = [];
  for (const filter of filters.answers) {
    if (!filter.field || (filter.value.trim() === '' && filter.operator !== 'ne')) continue;
    parts.push(answerCondition(filter, fields.find((f) => f.path === filter.field)));
  }
  if (filters.from || filters.to) {
    const range: Record<string, string> = {};
    if (filters.from) range['$gte'] = filters.from;
    if (filters.to) range['$lt'] = nextDay(filters.to);
    parts.push({ _submission_time: range });
  }
  if (filters.review) parts.push({ _review_status: filters.review });
  if (filters.submittedBy.trim()) parts.push({ _submitted_by: filters.submittedBy.trim() });
  const search = filters.search.trim();
  if (parts.length === 0) return search;
  if (search) {
    const searchable = fields.filter((f) => !f.inRepeat).map((f) => ({ [f.path]: { $i: search } }));
    if (searchable.length) parts.push({ $or: searchable });
  }
  return JSON.stringify(parts.length === 1 ? parts[0] : { $and: parts });
}

export function filtersActive(filters: TableFilters): boolean {
  return buildQuery(filters, []) !== '' || filters.answers.some((f) => f.field && f.value.trim() !== '');
}
