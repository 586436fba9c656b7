// The system query options of a feed request ($top, $skip, $count, $select, $orderby, $expand,
// $filter, $skiptoken, $format), read and checked before anything is read from the database.
import type { ExpandTree } from './entities.ts';
import { FilterError, parseFilter, type FilterNode } from './filter.ts';

export class OptionError extends Error {}

export interface OrderItem {
  readonly path: readonly string[];
  readonly descending: boolean;
}

/**
 * Where the next page starts (a keyset): after the entity whose $orderby terms had `values` (as
 * text) and whose tie-breaking key was `key` (the record's `_id`, then a repeat row's positions).
 */
export interface SkipToken {
  readonly values: ReadonlyArray<string | null>;
  readonly key: readonly number[];
}

export interface FeedOptions {
  readonly top: number | undefined;
  readonly skip: number;
  readonly count: boolean;
  /** Paths of the properties wanted; undefined: all. */
  readonly select: ReadonlyArray<readonly string[]> | undefined;
  readonly orderby: readonly OrderItem[];
  /** The repeats to inline. */
  readonly expand: ExpandTree;
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
  const body = token.values.length === 0 ? { k: token.key } : { k: token.key, v: token.values };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

const MAX_INT = 2 ** 31 - 1;

function decodeSkipToken(raw: string): SkipToken {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null) {
      const k: unknown = (parsed as Record<string, unknown>)['k'];
      const v: unknown = (parsed as Record<string, unknown>)['v'] ?? [];
      const isKey = Array.isArray(k) && k.length > 0 && k.length < 10 && k.every((n) => Number.isSafeInteger(n) && (n as number) >= 0 && (n as number) <= MAX_INT);
      const isValues = Array.isArray(v) && v.length < 20 && v.every((x) => x === null || (typeof x === 'string' && x.length < 10_000));
      if (isKey && isValues) return { key: k as number[], values: v as Array<string | null> };
    }
  } catch {
    // reported below
  }
  throw new OptionError('$skiptoken is not one this server gave.');
}

/** Splits at the commas outside parentheses. */
function topLevelItems(text: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth += 1;
    else if (c === ')') depth -= 1;
    else if (c === ',' && depth === 0) {
      items.push(text.slice(start, i));
      start = i + 1;
    }
    if (depth < 0) throw new OptionError('$expand: unbalanced parentheses.');
  }
  if (depth !== 0) throw new OptionError('$expand: unbalanced parentheses.');
  items.push(text.slice(start));
  return items;
}

/** `*` (every repeat, at every level), or repeat names, each optionally with `($expand=…)` of its own repeats. */
export function parseExpand(text: string, depth = 0): ExpandTree {
  if (depth > 8) throw new OptionError('$expand is nested too deeply.');
  const tree = new Map<string, ExpandTree>();
  for (const raw of topLevelItems(text)) {
    const item = raw.trim();
    if (item === '*') return '*';
    const match = /^([A-Za-z_][\w.-]*)(?:\((.*)\))?$/s.exec(item);
    const name = match?.[1];
    if (!match || name === undefined) throw new OptionError(`$expand: "${item}" is not a repeat name, * or name($expand=…).`);
    const inner = match[2]?.trim();
    if (inner === undefined || inner === '') {
      tree.set(name, new Map());
      continue;
    }
    const nested = /^\$expand=(.+)$/s.exec(inner);
    if (!nested?.[1]) throw new OptionError(`$expand: only $expand is supported inside ${name}(…).`);
    tree.set(name, parseExpand(nested[1], depth + 1));
  }
  return tree;
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
  const expand: ExpandTree = expandText ? parseExpand(expandText) : new Map();
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
