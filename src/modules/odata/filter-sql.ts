// A parsed $filter or $orderby → parameterised SQL on the instances table (alias i), for the OData
// repository. Record keys and literal values travel as bound parameters; the only SQL text made
// here is from fixed fragments. A path or function this feed cannot answer is a FilterError.
import { sql, type RawBuilder } from 'kysely';
import { FilterError, type CompareOp, type FilterNode, type Literal } from './filter.ts';
import { findProperty, type EntityModel, type SystemField } from './model.ts';
import type { OrderItem } from './options.ts';

type SqlType = 'text' | 'number' | 'date' | 'timestamp' | 'boolean' | 'null';

interface Operand {
  readonly sql: RawBuilder<unknown>;
  readonly type: SqlType;
}

const NUMBER_TEXT = '^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$';
const TIMESTAMP_TEXT = '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]+)?)?(Z|[+-][0-9]{2}(:?[0-9]{2})?)?$';

const SYSTEM_COLUMNS: Readonly<Record<SystemField, Operand>> = {
  submissionDate: { sql: sql`i.date_created`, type: 'timestamp' },
  updatedAt: { sql: sql`i.date_modified`, type: 'timestamp' },
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
  recordId: { sql: sql`i.id`, type: 'number' },
};

function pathOperand(root: EntityModel, segments: readonly string[]): Operand {
  const name = segments.join('/');
  if (name === '__id') return { sql: sql`('uuid:' || i.uuid)`, type: 'text' };
  if (segments[0] === '__system' && segments.length === 2) {
    const field = segments[1] ?? '';
    if (Object.hasOwn(SYSTEM_COLUMNS, field)) return SYSTEM_COLUMNS[field as SystemField];
  }
  const property = findProperty(root, segments);
  if (!property) throw new FilterError(`Unknown property ${name}.`);
  if (property.kind !== 'answer') throw new FilterError(`${name} is a ${property.kind}: compare one of its answers.`);
  const text = sql`(i.json ->> ${property.key})`;
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
    private readonly root: EntityModel,
    private readonly now: Date,
  ) {}

  operand(node: FilterNode): Operand {
    switch (node.kind) {
      case 'literal':
        return literalOperand(node);
      case 'path':
        return pathOperand(this.root, node.segments);
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

/** The records' condition for a $filter on Submissions. */
export function filterCondition(root: EntityModel, filter: FilterNode, now: Date): RawBuilder<unknown> {
  return new Compiler(root, now).condition(filter);
}

/** ORDER BY for $orderby on Submissions: nulls sort lowest, as OData orders them; `_id` breaks ties. */
export function orderClause(root: EntityModel, items: readonly OrderItem[]): RawBuilder<unknown> {
  const parts = items.map((item) => {
    const operand = pathOperand(root, item.path);
    return sql`${operand.sql} ${sql.raw(item.descending ? 'DESC NULLS LAST' : 'ASC NULLS FIRST')}`;
  });
  parts.push(sql`i.id ASC`);
  return sql.join(parts, sql`, `);
}
