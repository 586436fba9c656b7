// The system query options of a feed request ($top, $skip, $count, $select, $orderby, $expand,
// $filter, $skiptoken, $format), read and checked before anything is read from the database.
import { FilterError, parseFilter, type FilterNode } from './filter.ts';

export class OptionError extends Error {}

export interface OrderItem {
  readonly path: readonly string[];
  readonly descending: boolean;
}

/**
 * Where the next page starts: after record `_id` k (keyset, default order; for a repeat's rows, `rows`
 * rows of the next record were sent already), or at offset o of the ordered matches.
 */
export type SkipToken = { readonly after: number; readonly rows?: number } | { readonly offset: number };

export interface FeedOptions {
  readonly top: number | undefined;
  readonly skip: number;
  readonly count: boolean;
  /** Paths of the properties wanted; undefined: all. */
  readonly select: ReadonlyArray<readonly string[]> | undefined;
  readonly orderby: readonly OrderItem[];
  /** Names of the repeats to expand, or '*' for all of them (one level). */
  readonly expand: readonly string[] | '*';
  readonly filter: FilterNode | undefined;
  readonly filterText: string | undefined;
  readonly skiptoken: SkipToken | undefined;
}

const KNOWN = new Set(['$top', '$skip', '$count', '$select', '$orderby', '$expand', '$filter', '$skiptoken', '$format']);
const NOT_SUPPORTED = new Set(['$search', '$apply', '$compute', '$levels', '$index', '$schemaversion']);
const NAME_PATH = /^[A-Za-z_][\w.-]*(\/[A-Za-z_][\w.-]*)*$/;

function nonNegative(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,9}$/.test(raw.trim())) throw new OptionError(`${name} must be a non-negative integer.`);
  return Number(raw.trim());
}

function paths(name: string, raw: string): Array<readonly string[]> {
  return raw.split(',').map((item) => {
    const text = item.trim();
    if (!NAME_PATH.test(text)) throw new OptionError(`${name}: "${text}" is not a property path.`);
    return text.split('/');
  });
}

export function encodeSkipToken(token: SkipToken): string {
  const body = 'after' in token ? { k: token.after, ...(token.rows ? { r: token.rows } : {}) } : { o: token.offset };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

function decodeSkipToken(raw: string): SkipToken {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null) {
      const k = (parsed as Record<string, unknown>)['k'];
      const o = (parsed as Record<string, unknown>)['o'];
      const r = (parsed as Record<string, unknown>)['r'] ?? 0;
      if (Number.isSafeInteger(k) && (k as number) >= 0 && Number.isSafeInteger(r) && (r as number) >= 0) return { after: k as number, rows: r as number };
      if (Number.isSafeInteger(o) && (o as number) >= 0) return { offset: o as number };
    }
  } catch {
    // reported below
  }
  throw new OptionError('$skiptoken is not one this server gave.');
}

/** Reads the query string's system options; an OptionError names the first bad one. */
export function parseFeedOptions(query: Readonly<Record<string, string | undefined>>): FeedOptions {
  for (const key of Object.keys(query)) {
    if (!key.startsWith('$')) continue;
    if (NOT_SUPPORTED.has(key)) throw new OptionError(`${key} is not supported by this feed.`);
    if (!KNOWN.has(key)) throw new OptionError(`Unknown system query option ${key}.`);
  }
  const format = query['$format'];
  if (format !== undefined && !/^(json|application\/json)(;.*)?$/i.test(format.trim())) {
    throw new OptionError('$format: only json is supported.');
  }
  const countText = query['$count']?.trim().toLowerCase();
  if (countText !== undefined && countText !== 'true' && countText !== 'false') throw new OptionError('$count must be true or false.');
  const selectText = query['$select']?.trim();
  const select = selectText === undefined || selectText === '' || selectText === '*' ? undefined : paths('$select', selectText);
  const orderby: OrderItem[] = [];
  const orderText = query['$orderby']?.trim();
  if (orderText) {
    for (const item of orderText.split(',')) {
      const match = /^\s*(\S+)(?:\s+(asc|desc))?\s*$/.exec(item);
      if (!match?.[1] || !NAME_PATH.test(match[1])) throw new OptionError(`$orderby: "${item.trim()}" is not a property path with asc or desc.`);
      orderby.push({ path: match[1].split('/'), descending: match[2] === 'desc' });
    }
  }
  const expandText = query['$expand']?.trim();
  let expand: readonly string[] | '*' = [];
  if (expandText === '*') expand = '*';
  else if (expandText) {
    expand = expandText.split(',').map((name) => {
      const text = name.trim();
      if (!/^[A-Za-z_][\w.-]*$/.test(text)) throw new OptionError(`$expand: "${text}" is not supported (only repeat names or *, one level).`);
      return text;
    });
  }
  const filterText = query['$filter'];
  let filter: FilterNode | undefined;
  if (filterText !== undefined && filterText.trim() !== '') {
    try {
      filter = parseFilter(filterText);
    } catch (error) {
      if (error instanceof FilterError) throw new OptionError(error.message);
      throw error;
    }
  }
  const skiptoken = query['$skiptoken'];
  return {
    top: nonNegative('$top', query['$top']),
    skip: nonNegative('$skip', query['$skip']) ?? 0,
    count: countText === 'true',
    select,
    orderby,
    expand,
    filter,
    filterText: filter ? filterText : undefined,
    skiptoken: skiptoken === undefined || skiptoken === '' ? undefined : decodeSkipToken(skiptoken),
  };
}
