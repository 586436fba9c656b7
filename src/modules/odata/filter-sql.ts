// A parsed $filter or $orderby → parameterised SQL for the OData repository: on the instances
// table (alias i) for Submissions, and on a repeat's rows (the aliases of scope.ts) for a repeat
// set. Record keys and literal values travel as bound parameters; the only SQL text made here is
// from fixed fragments. A path or function this feed cannot answer is a FilterError.
import { sql, type RawBuilder } from 'kysely';
import { FilterError, type CompareOp, type FilterNode, type Literal } from './filter.ts';
import { findProperty, type SystemField } from './model.ts';
import type { OrderItem } from './options.ts';
import type { Scope } from './scope.ts';

export type SqlType = 'text' | 'number' | 'date' | 'timestamp' | 'boolean' | 'null';

export interface Operand {
  readonly sql: RawBuilder<unknown>;
  readonly type: SqlType;
  /** Never NULL (a column with a NOT NULL constraint): keyset conditions skip their NULL cases. */
  readonly notNull?: boolean;
}

const NUMBER_TEXT = '^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$';
const TIMESTAMP_TEXT = '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]+)?)?(Z|[+-][0-9]{2}(:?[0-9]{2})?)?$';

const SYSTEM_COLUMNS: Readonly<Record<SystemField, Operand>> = {
  submissionDate: { sql: sql`i.date_created`, type: 'timestamp', notNull: true },
  updatedAt: { sql: sql`i.date_modified`, type: 'timestamp', notNull: true },
  submitterName: { sql: sql`(SELECT username FROM users WHERE id = i.submitted_by)`, type: 'text' },
  attachmentsPresent: { sql: sql`i.media_count`, type: 'number' },
  attachmentsExpected: { sql: sql`i.total_media`, type: 'number' },
  status: { sql: sql`i.status`, type: 'text' },
  reviewState: {
    sql: sql`(CASE i.json ->> '_review_status' WHEN '1' THEN 'approved' WHEN '2' THEN 'rejected' WHEN '3' THEN 'pending' END)`,
    type: 'text',
  },
  edited: { sql: sql`i.edited`, type: 'boolean' },
  formVersion: { sql: sql`i.version`, type: 'text' },
  recordId: { sql: sql`i.id`, type: 'number', notNull: true },
};

function pathOperand(scope: Scope, segments: readonly string[]): Operand {
  const name = segments.join('/');
  const key = segments.length === 1 ? scope.keys.get(name) : undefined;
  if (key) return { sql: key, type: 'text', notNull: true };
  if (scope.entity.parents.length === 0 && segments[0] === '__system' && segments.length === 2) {
    const field = segments[1] ?? '';
    if (Object.hasOwn(SYSTEM_COLUMNS, field)) return SYSTEM_COLUMNS[field as SystemField];
  }
  const property = findProperty(scope.entity, segments);
  if (!property) throw new FilterError(`Unknown property ${name} of ${scope.entity.setName}.`);
  if (property.kind !== 'answer') throw new FilterError(`${name} is a ${property.kind}: compare one of its answers.`);
  const text = sql`(${scope.answers} ->> ${property.key})`;
  switch (property.type) {
    case 'Edm.Int64':
    case 'Edm.Decimal':
      return { sql: sql`(CASE WHEN ${text} ~ ${NUMBER_TEXT} THEN ${text}::numeric END)`, type: 'number' };
    case 'Edm.Date':
      // ISO dates compare as text; parsing them could fail on an impossible day.
      return { sql: text, type: 'date' };
    case 'Edm.DateTimeOffset':
      return { sql: sql`(CASE WHEN ${text} ~ ${TIMESTAMP_TEXT} THEN ${text}::timestamptz END)`, type: 'timestamp' };
    case 'Edm.GeographyPoint':
      throw new FilterError(`${name} is a geopoint, which $filter and $orderby cannot compare.`);
    default:
      return { sql: text, type: 'text' };
  }
}

function literalOperand(literal: Literal): Operand {
  switch (literal.type) {
    case 'string':
      return { sql: sql`${literal.value}::text`, type: 'text' };
    case 'number':
      return { sql: sql`${String(literal.value)}::numeric`, type: 'number' };
    case 'date':
      return { sql: sql`${literal.value}::text`, type: 'date' };
    case 'datetime':
      return { sql: sql`${literal.value}::timestamptz`, type: 'timestamp' };
    case 'boolean':
      return { sql: sql`${literal.value}::boolean`, type: 'boolean' };
    case 'null':
      return { sql: sql`NULL`, type: 'null' };
  }
}

const PARTS = { year: 'YEAR', month: 'MONTH', day: 'DAY', hour: 'HOUR', minute: 'MINUTE', second: 'SECOND' } as const;
const DATE_PARTS = { year: [1, 4], month: [6, 2], day: [9, 2] } as const;

class Compiler {
  constructor(
    private readonly scope: Scope,
    private readonly now: Date,
  ) {}

  operand(node: FilterNode): Operand {
    switch (node.kind) {
      case 'literal':
        return literalOperand(node);
      case 'path':
        return pathOperand(this.scope, node.segments);
      case 'call':
        return this.call(node.name, node.args);
      default:
        return { sql: this.condition(node), type: 'boolean' };
    }
  }

  condition(node: FilterNode): RawBuilder<unknown> {
    switch (node.kind) {
      case 'logical':
        return sql`(${this.condition(node.left)} ${sql.raw(node.op === 'and' ? 'AND' : 'OR')} ${this.condition(node.right)})`;
      case 'not':
        return sql`(NOT coalesce(${this.condition(node.operand)}, false))`;
      case 'compare':
        return this.compare(node.op, this.operand(node.left), this.operand(node.right));
      default: {
        const operand = this.operand(node);
        if (operand.type !== 'boolean') throw new FilterError('$filter must be a condition (a comparison, or a function that answers true or false).');
        return operand.sql;
      }
    }
  }

  private compare(op: CompareOp, leftIn: Operand, rightIn: Operand): RawBuilder<unknown> {
    let left = leftIn;
    let right = rightIn;
    if (left.type === 'null' || right.type === 'null') {
      const other = left.type === 'null' ? right : left;
      if (op === 'eq') return sql`(${other.sql} IS NULL)`;
      if (op === 'ne') return sql`(${other.sql} IS NOT NULL)`;
      throw new FilterError(`null can only be compared with eq or ne.`);
    }
    // A text answer compared with a number compares as a number (text that is not one never matches).
    if (left.type === 'text' && right.type === 'number') left = asNumber(left);
    if (right.type === 'text' && left.type === 'number') right = asNumber(right);
    // A date compared with a date-time: the date's midnight, UTC.
    if (left.type === 'date' && right.type === 'timestamp') left = dateAsTimestamp(left);
    if (right.type === 'date' && left.type === 'timestamp') right = dateAsTimestamp(right);
    // A text answer compared with a date or a date-time literal compares as its text.
    if (left.type === 'text' && (right.type === 'date' || right.type === 'timestamp')) right = { sql: sql`${right.sql}::text`, type: 'text' };
    if (left.type !== right.type) throw new FilterError(`Cannot compare a ${left.type} with a ${right.type}.`);
    if (op === 'eq') return sql`(${left.sql} = ${right.sql})`;
    if (op === 'ne') return sql`(${left.sql} IS DISTINCT FROM ${right.sql})`;
    const symbol = { gt: '>', ge: '>=', lt: '<', le: '<=' }[op];
    return sql`(${left.sql} ${sql.raw(symbol)} ${right.sql})`;
  }

  private call(name: string, args: readonly FilterNode[]): Operand {
    const [first, second] = args.map((a) => this.operand(a));
    switch (name) {
      case 'now':
        return { sql: sql`${this.now.toISOString()}::timestamptz`, type: 'timestamp' };
      case 'date':
        if (first?.type === 'timestamp') return { sql: sql`to_char(${first.sql} AT TIME ZONE 'UTC', 'YYYY-MM-DD')`, type: 'date' };
        if (first?.type === 'date') return first;
        throw new FilterError('date() takes a date-time.');
      case 'year':
      case 'month':
      case 'day':
      case 'hour':
      case 'minute':
      case 'second': {
        if (first?.type === 'timestamp') {
          const part = sql.raw(PARTS[name]);
          return { sql: sql`floor(EXTRACT(${part} FROM ${first.sql} AT TIME ZONE 'UTC'))::numeric`, type: 'number' };
        }
        if (first?.type === 'date' && (name === 'year' || name === 'month' || name === 'day')) {
          const [from, length] = DATE_PARTS[name];
          return { sql: sql`(CASE WHEN ${first.sql} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' THEN substr(${first.sql}, ${from}::int, ${length}::int)::numeric END)`, type: 'number' };
        }
        throw new FilterError(`${name}() takes a ${name === 'year' || name === 'month' || name === 'day' ? 'date or ' : ''}date-time.`);
      }
      case 'contains':
      case 'startswith':
      case 'endswith': {
        if (first?.type !== 'text' || second?.type !== 'text') throw new FilterError(`${name}() takes two texts.`);
        if (name === 'contains') return { sql: sql`(strpos(${first.sql}, ${second.sql}) > 0)`, type: 'boolean' };
        if (name === 'startswith') return { sql: sql`(left(${first.sql}, length(${second.sql})) = ${second.sql})`, type: 'boolean' };
        return { sql: sql`(right(${first.sql}, length(${second.sql})) = ${second.sql})`, type: 'boolean' };
      }
      case 'tolower':
      case 'toupper':
        if (first?.type !== 'text') throw new FilterError(`${name}() takes a text.`);
        return { sql: name === 'tolower' ? sql`lower(${first.sql})` : sql`upper(${first.sql})`, type: 'text' };
      default:
        throw new FilterError(`The function ${name}() is not supported in $filter.`);
    }
  }
}

function asNumber(operand: Operand): Operand {
  return { sql: sql`(CASE WHEN ${operand.sql} ~ ${NUMBER_TEXT} THEN (${operand.sql})::numeric END)`, type: 'number' };
}

function dateAsTimestamp(operand: Operand): Operand {
  return { sql: sql`(CASE WHEN ${operand.sql} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' THEN (${operand.sql} || 'T00:00:00Z')::timestamptz END)`, type: 'timestamp' };
}

/** The condition of a $filter on the entity set of a scope. */
export function filterCondition(scope: Scope, filter: FilterNode, now: Date): RawBuilder<unknown> {
  return new Compiler(scope, now).condition(filter);
}

export interface OrderTerm extends Operand {
  readonly descending: boolean;
}

/** The terms of a $orderby; nulls sort lowest, as OData orders them. */
export function orderTerms(scope: Scope, items: readonly OrderItem[]): OrderTerm[] {
  return items.map((item) => ({ ...pathOperand(scope, item.path), descending: item.descending }));
}

/** Whether the tie-breaking key runs descending: it follows the first term, so that one index range can serve both. */
export function tiebreakDescending(terms: readonly OrderTerm[]): boolean {
  return terms[0]?.descending ?? false;
}

/**
 * ORDER BY for the terms, then the scope's tie-breaking key. A column that is never NULL is
 * ordered plainly (ASC, DESC), so that an index on it serves the order in either direction.
 */
export function orderClause(scope: Scope, terms: readonly OrderTerm[]): RawBuilder<unknown> {
  const direction = (descending: boolean, notNull: boolean) => (descending ? (notNull ? 'DESC' : 'DESC NULLS LAST') : notNull ? 'ASC' : 'ASC NULLS FIRST');
  const parts = terms.map((t) => sql`${t.sql} ${sql.raw(direction(t.descending, t.notNull === true))}`);
  const tie = sql.raw(tiebreakDescending(terms) ? 'DESC' : 'ASC');
  parts.push(...scope.tiebreak.map((column) => sql`${column} ${tie}`));
  return sql.join(parts, sql`, `);
}

/** The value of a term as text, as a keyset token carries it. */
export function termText(term: Operand): RawBuilder<unknown> {
  return sql`(${term.sql})::text`;
}

const VALID_TEXT: Readonly<Record<SqlType, (text: string) => boolean>> = {
  text: () => true,
  date: () => true,
  number: (t) => new RegExp(NUMBER_TEXT).test(t),
  timestamp: (t) => !Number.isNaN(Date.parse(t.replace(' ', 'T').replace(/([+-]\d{2})$/, '$1:00'))),
  boolean: (t) => t === 'true' || t === 'false',
  null: () => false,
};

function literalOf(term: Operand, text: string): RawBuilder<unknown> {
  switch (term.type) {
    case 'number':
      return sql`${text}::numeric`;
    case 'timestamp':
      return sql`${text}::timestamptz`;
    case 'boolean':
      return sql`${text}::boolean`;
    default:
      return sql`${text}::text`;
  }
}

/**
 * The keyset condition "after the entity whose terms had `values` and whose tie-breaking key was
 * `key`", in the order of orderClause; undefined when the token cannot be one of this query's.
 */
export function afterCondition(scope: Scope, terms: readonly OrderTerm[], values: ReadonlyArray<string | null>, key: readonly number[]): RawBuilder<unknown> | undefined {
  if (values.length !== terms.length || key.length !== scope.tiebreak.length) return undefined;
  for (const [index, term] of terms.entries()) {
    const value = values[index] ?? null;
    if (value === null ? term.notNull === true : !VALID_TEXT[term.type](value)) return undefined;
  }
  const [firstColumn] = scope.tiebreak;
  const beyondKey = sql.raw(tiebreakDescending(terms) ? '<' : '>');
  const tuple =
    scope.tiebreak.length === 1
      ? sql`${firstColumn} ${beyondKey} ${key[0]}`
      : sql`(${sql.join([...scope.tiebreak])}) ${beyondKey} (${sql.join(key.map((k) => sql`${k}::int`))})`;
  let condition = tuple;
  for (let index = terms.length - 1; index >= 0; index -= 1) {
    const term = terms[index] as OrderTerm;
    const value = values[index] ?? null;
    if (value === null) {
      // Nulls come first ascending and last descending.
      condition = term.descending ? sql`(${term.sql} IS NULL AND ${condition})` : sql`(${term.sql} IS NOT NULL OR (${term.sql} IS NULL AND ${condition}))`;
      continue;
    }
    const literal = literalOf(term, value);
    const beyond = term.descending ? sql`${term.sql} < ${literal}${term.notNull ? sql`` : sql` OR ${term.sql} IS NULL`}` : sql`${term.sql} > ${literal}`;
    condition = sql`(${beyond} OR (${term.sql} = ${literal} AND ${condition}))`;
  }
  // A bound on the first term (or on the key) that an index range can start from.
  const first = terms[0];
  const firstValue = values[0];
  let bound: RawBuilder<unknown> = scope.tiebreak.length > 1 ? sql`${firstColumn} >= ${key[0]}` : sql`TRUE`;
  if (first && firstValue !== null && firstValue !== undefined && first.notNull) {
    bound = sql`${first.sql} ${sql.raw(first.descending ? '<=' : '>=')} ${literalOf(first, firstValue)}`;
  } else if (first) bound = sql`TRUE`;
  return sql`(${bound} AND ${condition})`;
}
