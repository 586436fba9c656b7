// onadata's JSON data query → a parameterised SQL condition on the instances table (alias i).
// Field names travel as parameters (`i.json ->> $1`), never as SQL text.
import { sql, type RawBuilder } from 'kysely';
import { errors } from '../../errors.ts';
import { lookupTable } from '../../platform/lookup.ts';

export type Condition = RawBuilder<unknown>;

/** Meta keys stored in columns rather than in the record JSON. */
const COLUMN_FIELDS = lookupTable<{ column: RawBuilder<unknown>; type: 'int' | 'timestamp' | 'text' }>({
  _id: { column: sql`i.id`, type: 'int' },
  _submission_time: { column: sql`i.date_created`, type: 'timestamp' },
  _date_modified: { column: sql`i.date_modified`, type: 'timestamp' },
  _last_edited: { column: sql`i.last_edited`, type: 'timestamp' },
  _version: { column: sql`i.version`, type: 'text' },
  _uuid: { column: sql`i.uuid`, type: 'text' },
  _status: { column: sql`i.status`, type: 'text' },
  _submitted_by: { column: sql`(SELECT username FROM users WHERE id = i.submitted_by)`, type: 'text' },
});

const DATE_FORMATS = [/^\d{4}-\d{2}-\d{2}$/, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:?\d{2}|Z)$/];
const NUMBER_TEXT = '^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$';

function dateValue(field: string, value: unknown): string {
  if (typeof value !== 'string' || !DATE_FORMATS.some((f) => f.test(value)) || Number.isNaN(Date.parse(value))) {
    throw errors.queryDateInvalid(value, field);
  }
  return value;
}

function columnComparison(field: string, op: string, value: unknown): Condition {
  const spec = COLUMN_FIELDS[field];
  if (!spec) throw new Error(`no column for ${field}`);
  const operator = sql.raw(op);
  if (spec.type === 'timestamp') return sql`${spec.column} ${operator} ${dateValue(field, value)}::timestamptz`;
  if (spec.type === 'int') {
    const n = Number(value);
    if (!Number.isFinite(n)) throw errors.queryValueInvalid(value, field);
    return sql`${spec.column} ${operator} ${n}`;
  }
  return sql`${spec.column} ${operator} ${String(value)}`;
}

function answerComparison(field: string, op: string, value: unknown): Condition {
  const operator = sql.raw(op);
  if (typeof value === 'number') {
    return sql`(CASE WHEN (i.json ->> ${field}) ~ ${NUMBER_TEXT} THEN (i.json ->> ${field})::numeric END) ${operator} ${value}`;
  }
  return sql`(i.json ->> ${field}) ${operator} ${String(value)}`;
}

const OPERATORS = lookupTable<string>({ $gt: '>', $gte: '>=', $lt: '<', $lte: '<=', $ne: '<>' });

function fieldCondition(field: string, value: unknown): Condition {
  const onColumn = field in COLUMN_FIELDS;
  const compare = (op: string, v: unknown): Condition => (onColumn ? columnComparison(field, op, v) : answerComparison(field, op, v));
  if (value === null) return onColumn ? sql`${COLUMN_FIELDS[field]?.column} IS NULL` : sql`(i.json ->> ${field}) IS NULL`;
  if (typeof value !== 'object' || Array.isArray(value)) {
    // Equality compares the text of the value, as onadata does.
    return onColumn ? compare('=', value) : sql`(i.json ->> ${field}) = ${typeof value === 'string' ? value : JSON.stringify(value)}`;
  }
  const parts: Condition[] = [];
  for (const [op, operand] of Object.entries(value as Record<string, unknown>)) {
    const sqlOp = OPERATORS[op];
    if (sqlOp) {
      parts.push(op === '$ne' && operand === null ? sql`(i.json ->> ${field}) IS NOT NULL` : compare(sqlOp, operand));
    } else if (op === '$in') {
      if (!Array.isArray(operand)) throw errors.queryInNeedsList(field);
      const values = operand.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
      parts.push(onColumn ? sql`${COLUMN_FIELDS[field]?.column}::text = ANY(${values}::text[])` : sql`(i.json ->> ${field}) = ANY(${values}::text[])`);
    } else if (op === '$i') {
      const pattern = `%${String(operand).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      parts.push(sql`(i.json ->> ${field}) ILIKE ${pattern}`);
    } else {
      throw errors.queryOperatorUnsupported(op, field);
    }
  }
  return parts.length ? sql.join(parts, sql` AND `) : sql`TRUE`;
}

export function objectCondition(query: Record<string, unknown>): Condition {
  const parts: Condition[] = [];
  for (const [key, value] of Object.entries(query)) {
    if (key === '$or' || key === '$and') {
      if (!Array.isArray(value) || value.length === 0) throw errors.queryNeedsList(key);
      const subs = value.map((v) => {
        if (typeof v !== 'object' || v === null || Array.isArray(v)) throw errors.queryNeedsObjects(key);
        return sql`(${objectCondition(v as Record<string, unknown>)})`;
      });
      parts.push(sql`(${sql.join(subs, key === '$or' ? sql` OR ` : sql` AND `)})`);
    } else {
      parts.push(fieldCondition(key, value));
    }
  }
  return parts.length ? sql.join(parts, sql` AND `) : sql`TRUE`;
}

/** Parses the `query` parameter: a JSON object, or plain text searched in the whole record. */
export function queryCondition(raw: string | undefined): Condition {
  if (raw === undefined || raw.trim() === '') return sql`TRUE`;
  const text = raw.trim();
  if (!text.startsWith('{')) {
    const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return sql`i.json::text ILIKE ${pattern}`;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw errors.queryNotJson((error as Error).message);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw errors.queryNotObject();
  return objectCondition(parsed as Record<string, unknown>);
}

function parseSort(raw: string | undefined): Array<[string, unknown]> {
  if (raw === undefined || raw.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw errors.sortNotJson((error as Error).message);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw errors.sortNotObject();
  return Object.entries(parsed as Record<string, unknown>);
}

/** One key of a sort order as a float8 whose JavaScript number orders exactly as the column does. */
export interface NumericSortKey {
  expression: Condition;
  descending: boolean;
}

/**
 * The `sort` parameter's keys (before the final `_id`) as numbers, when every one is a number or
 * time column (times as epoch microseconds, exact in a double; NULL comes back as NULL and sorts
 * as +Infinity, as PostgreSQL puts NULLs last ascending and first descending). Undefined when a
 * key is text or an answer, whose order (collation, jsonb's rules) only the database knows.
 */
export function numericSortKeys(raw: string | undefined): NumericSortKey[] | undefined {
  const keys: NumericSortKey[] = [];
  for (const [field, direction] of parseSort(raw)) {
    const spec = COLUMN_FIELDS[field];
    if (!spec || spec.type === 'text') return undefined;
    const expression = spec.type === 'int' ? sql`(${spec.column})::float8` : sql`(extract(epoch FROM ${spec.column}) * 1000000)::float8`;
    keys.push({ expression, descending: Number(direction) < 0 });
  }
  return keys;
}

/** The `sort` parameter: `{"field": 1}` or `{"field": -1}`. */
export function sortOrder(raw: string | undefined): Condition {
  const fields = parseSort(raw);
  if (fields.length === 0) return sql`i.id ASC`;
  const parts: Condition[] = [];
  for (const [field, direction] of fields) {
    const dir = sql.raw(Number(direction) < 0 ? 'DESC' : 'ASC');
    const column = COLUMN_FIELDS[field]?.column;
    parts.push(column ? sql`${column} ${dir}` : sql`(i.json -> ${field}) ${dir}`);
  }
  parts.push(sql`i.id ASC`);
  return sql.join(parts, sql`, `);
}
