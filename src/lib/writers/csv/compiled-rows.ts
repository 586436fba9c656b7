// Flat CSV rows from a function made for the layout. Reading a record through one closure per
// column made every property read a megamorphic lookup (the closures share their code) and cost a
// call, a cell array and a quoting pass per cell: about 8.5 µs a record of the bench form (by hand,
// records in memory). A function whose source names each column's key reads each with a
// monomorphic load and writes the line as it goes (the technique fast-json-stringify uses for
// Fastify's replies).
//
// Only column keys and indices reach the generated source: keys as JSON string literals (valid
// JavaScript for any text) and indices as checked integers; constant cell texts go in as JSON
// string literals too. Columns without a ColumnRule are read through their own `read`, and the
// rules restate what `read` does (compiled-rows.test.ts compares the two).
import { asObject, NA, text, type ColumnRule, type FlatColumn, type ItemStep } from '../layout/flat.ts';
import { choiceNames, flatTags, mediaValue, pointParts, pythonFloat, riskyFirst, sanitizeText } from '../layout/values.ts';
import type { ExportRecord } from '../layout/types.ts';
import { csvField, csvLine } from './writer.ts';

/** One record's CSV line, with its `\n`. */
export type CsvRowWriter = (record: ExportRecord) => string;

/** Columns per generated function: V8 stops optimising functions past a size, and a form may have thousands. */
const COLUMNS_PER_FUNCTION = 200;

/** Characters that make sanitizeText or the CSV quoting change a text. */
const MAY_CHANGE = /[",\r\n|]/;

/** The CSV field of a text answer: sanitizeText, then quoted where needed (most need neither). */
export function textField(value: string): string {
  return value.length === 0 || (!riskyFirst(value.charCodeAt(0)) && !MAY_CHANGE.test(value)) ? value : csvField(sanitizeText(value));
}

function otherField(value: unknown): string {
  return csvField(text(value));
}

function mediaField(value: unknown, attachments: unknown, baseUrl: string): string {
  if (value === undefined) return NA;
  return typeof value === 'string' ? csvField(sanitizeText(mediaValue(value, { _attachments: attachments }, { baseUrl }))) : otherField(value);
}

function tagsField(value: unknown): string {
  return value === undefined ? NA : csvField(flatTags(value));
}

/**
 * The cells of the rules, for one value each: what the generated code writes inline, for writers
 * that read values some other way (raw-rows.ts). compiled-rows.test.ts holds both to `read`.
 */
export const RULE_CELLS = {
  value: (v: unknown, decimal: boolean): string =>
    v === undefined ? NA : typeof v === 'string' ? textField(v) : typeof v === 'number' ? (decimal ? pythonFloat(v) : '' + v) : otherField(v),
  choice: (names: readonly string[] | undefined, rule: { readonly choice: string; readonly chosen: string; readonly unchosen: string }): string =>
    names === undefined ? NA : names.includes(rule.choice) ? csvField(rule.chosen) : csvField(rule.unchosen),
  part: (parts: readonly string[] | undefined, part: number): string => (parts === undefined ? NA : csvField(parts[part] ?? '')),
  media: mediaField,
  tags: tagsField,
} as const;

const HELPERS = { field: csvField, textField, otherField, mediaField, tagsField, asObject, pythonFloat, choiceNames, pointParts, NA } as const;
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
    lines.push(`const ${items} = ${read};`, `const ${name} = Array.isArray(${items}) ? h.asObject(${items}[${index(step.index)}]) : undefined;`);
    containers.set(id, name);
    return name;
  };
  const valueAt = (rule: ColumnRule): string => {
    const from = container(rule.steps);
    return from === 'r' ? `r[${literal(rule.key)}]` : `${from} === undefined ? undefined : ${from}[${literal(rule.key)}]`;
  };
  /** A variable holding `split(value)` for the columns of one answer that share it, declared on first use. */
  const splits = new Map<string, string>();
  const shared = (rule: ColumnRule, split: 'choiceNames' | 'pointParts'): string => {
    const id = `${split} ${JSON.stringify(rule.steps)} ${rule.key}`;
    const known = splits.get(id);
    if (known) return known;
    const name = `s${splits.size}`;
    lines.push(`const ${name} = h.${split}(${valueAt(rule)});`);
    splits.set(id, name);
    return name;
  };
  const cell = (rule: ColumnRule): string => {
    switch (rule.kind) {
      case 'value': {
        const number = rule.decimal ? 'h.pythonFloat(v)' : '"" + v';
        return `v = ${valueAt(rule)}; line += v === undefined ? h.NA : typeof v === "string" ? h.textField(v) : typeof v === "number" ? ${number} : h.otherField(v);`;
      }
      case 'choice': {
        const names = shared(rule, 'choiceNames');
        return `line += ${names} === undefined ? h.NA : ${names}.includes(${literal(rule.choice)}) ? ${literal(csvField(rule.chosen))} : ${literal(csvField(rule.unchosen))};`;
      }
      case 'part': {
        const parts = shared(rule, 'pointParts');
        return `line += ${parts} === undefined ? h.NA : h.field(${parts}[${index(rule.part)}] ?? "");`;
      }
      case 'media':
        return `line += h.mediaField(${valueAt(rule)}, r["_attachments"], ${literal(rule.baseUrl)});`;
      case 'tags':
        return `line += h.tagsField(${valueAt(rule)});`;
      case 'empty':
        return '';
    }
  };
  const body: string[] = [];
  columns.forEach((column, i) => {
    if (i > 0) body.push('line += ",";');
    body.push(column.rule ? cell(column.rule) : `line += h.field(read[${index(offset + i)}](r));`);
  });
  return ['"use strict";', 'let v;', 'let line = "";', ...lines, ...body, 'return line;'].join('\n');
}

/**
 * A writer of the layout's rows as CSV lines, equal to `csvLine(layout.row(record))` for every
 * record (compiled-rows.test.ts holds it to that).
 */
export function compileCsvRows(columns: readonly FlatColumn[]): CsvRowWriter {
  const readers: Readers = columns.map((c) => c.read);
  const uncompiled: CsvRowWriter = (record) => csvLine(readers.map((read) => read(record)));
  // A single empty field is written `""` (csvLine): not worth a compiled path.
  if (columns.length < 2) return uncompiled;
  const parts: Part[] = [];
  try {
    for (let start = 0; start < columns.length; start += COLUMNS_PER_FUNCTION) {
      const source = partSource(columns.slice(start, start + COLUMNS_PER_FUNCTION), start);
      parts.push(new Function('r', 'h', 'read', source) as Part);
    }
  } catch (error) {
    // A process run with --disallow-code-generation-from-strings: the same lines, column by column.
    if (!(error instanceof EvalError)) throw error;
    return uncompiled;
  }
  return (record) => {
    let line = '';
    for (let i = 0; i < parts.length; i++) line += (i > 0 ? ',' : '') + (parts[i] as Part)(record, HELPERS, readers);
    return `${line}\n`;
  };
}
