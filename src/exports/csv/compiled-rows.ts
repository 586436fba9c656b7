// Flat CSV rows from a function made for the layout. Reading a record through one closure per
// column made every property read a megamorphic lookup (the closures share their code) and cost a
// call, a cell array and a quoting pass per cell: about 8.5 µs a record of the bench form. A
// function whose source names each column's key reads each with a monomorphic load and writes the
// line as it goes (the technique fast-json-stringify uses for Fastify's replies).
//
// Only column keys and indices reach the generated source: keys as JSON string literals (valid
// JavaScript for any text) and indices as checked integers. Columns without a ValueRule are read
// through their own `read`, so the text of every column is still decided in the layout alone.
import { NA, text, type FlatColumn, type ItemStep, type ValueRule } from '../layout/flat.ts';
import { pythonFloat, sanitizeText } from '../layout/values.ts';
import type { ExportRecord } from '../layout/types.ts';
import { csvLine } from './writer.ts';

/** One record's CSV line, with its `\n`. */
export type CsvRowWriter = (record: ExportRecord) => string;

/** Columns per generated function: V8 stops optimising functions past a size, and a form may have thousands. */
const COLUMNS_PER_FUNCTION = 200;

const NEEDS_QUOTES = /[",\r\n]/;
/** Characters that make sanitizeText or the CSV quoting change a text. */
const MAY_CHANGE = /[",\r\n|]/;

/** A CSV field of text that has been through sanitizeText. */
function field(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** The CSV field of a text answer: sanitizeText, then quoted where needed (most need neither). */
function textField(value: string): string {
  if (value.length === 0) return value;
  const first = value.charCodeAt(0);
  // = + - @ % TAB CR LF: sanitizeText's risky first characters.
  const risky = first === 61 || first === 43 || first === 45 || first === 64 || first === 37 || first === 9 || first === 13 || first === 10;
  return !risky && !MAY_CHANGE.test(value) ? value : field(sanitizeText(value));
}

function otherField(value: unknown): string {
  return field(text(value));
}

function asItem(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

const HELPERS = { field, textField, otherField, asItem, pythonFloat, NA } as const;
type Helpers = typeof HELPERS;
type Readers = readonly FlatColumn['read'][];
type Part = (record: ExportRecord, h: Helpers, read: Readers) => string;

function literal(key: string): string {
  return JSON.stringify(key);
}

function index(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a column index: ${n}`);
  return String(n);
}

/** The source of one group of columns; `offset` is the first one's position in the row. */
function partSource(columns: readonly FlatColumn[], offset: number): string {
  const containers = new Map<string, string>();
  const lines: string[] = [];
  /** The variable holding the container `steps` lead to, declared on first use. */
  const container = (steps: readonly ItemStep[]): string => {
    if (steps.length === 0) return 'r';
    const id = JSON.stringify(steps);
    const known = containers.get(id);
    if (known) return known;
    const parent = container(steps.slice(0, -1));
    const step = steps[steps.length - 1] as ItemStep;
    const name = `c${containers.size}`;
    const items = `${name}i`;
    const read = parent === 'r' ? `r[${literal(step.key)}]` : `${parent} === undefined ? undefined : ${parent}[${literal(step.key)}]`;
    lines.push(`const ${items} = ${read};`, `const ${name} = Array.isArray(${items}) ? h.asItem(${items}[${index(step.index)}]) : undefined;`);
    containers.set(id, name);
    return name;
  };
  const value = (rule: ValueRule): string => {
    const from = container(rule.steps);
    const read = from === 'r' ? `r[${literal(rule.key)}]` : `${from} === undefined ? undefined : ${from}[${literal(rule.key)}]`;
    const number = rule.decimal ? 'h.pythonFloat(v)' : '"" + v';
    return `v = ${read}; line += v === undefined ? h.NA : typeof v === "string" ? h.textField(v) : typeof v === "number" ? ${number} : h.otherField(v);`;
  };
  const body: string[] = [];
  columns.forEach((column, i) => {
    if (i > 0) body.push('line += ",";');
    body.push(column.rule ? value(column.rule) : `line += h.field(read[${index(offset + i)}](r));`);
  });
  return ['"use strict";', 'let v;', 'let line = "";', ...lines, ...body, 'return line;'].join('\n');
}

/**
 * A writer of the layout's rows as CSV lines, equal to `csvLine(layout.row(record))` for every
 * record (compiled-rows.test.ts holds it to that).
 */
export function compileCsvRows(columns: readonly FlatColumn[]): CsvRowWriter {
  const readers: Readers = columns.map((c) => c.read);
  // A single empty field is written `""` (csvLine): not worth a compiled path.
  if (columns.length < 2) return (record) => csvLine(readers.map((read) => read(record)));
  const parts: Part[] = [];
  for (let start = 0; start < columns.length; start += COLUMNS_PER_FUNCTION) {
    const source = partSource(columns.slice(start, start + COLUMNS_PER_FUNCTION), start);
    parts.push(new Function('r', 'h', 'read', source) as Part);
  }
  if (parts.length === 1) {
    const [only] = parts as [Part];
    return (record) => `${only(record, HELPERS, readers)}\n`;
  }
  return (record) => {
    let line = '';
    for (let i = 0; i < parts.length; i++) line += (i > 0 ? ',' : '') + (parts[i] as Part)(record, HELPERS, readers);
    return `${line}\n`;
  };
}
