// Custom XLS report templates: a workbook whose cells may hold `{{placeholders}}`. This file
// turns the template into a plan: which rows are copied once, which are repeated per record, and
// what each cell is made of. Every mistake in the template is found here, before any record is read.
//
// Syntax (documented in the README, "Custom XLS reports"):
// - `{{column}}`: a record's value under a flat CSV export column (`grp/q`, `rep[2]/q`, `_id`…);
// - `{{@title}}`, `{{@id_string}}`, `{{@form_id}}`, `{{@date}}`: the form and the report itself;
// - a row holding a `{{#records}}` cell opens a block of rows repeated once per record, a row
//   holding `{{/records}}` closes it (both marker rows are dropped). A sheet without markers
//   repeats each row that holds a record placeholder once per record, on its own.
import type { ExportDate } from '../layout/types.ts';

export type TemplateCell = string | number | boolean | ExportDate | null;

export interface TemplateSheet {
  readonly name: string;
  readonly rows: readonly (readonly TemplateCell[])[];
}

export interface TemplateWorkbook {
  readonly sheets: readonly TemplateSheet[];
}

/** A template that cannot be used; the message names the sheet and cell. */
export class TemplateError extends Error {}

export const REPORT_FIELDS = ['@title', '@id_string', '@form_id', '@date'] as const;
export type ReportField = (typeof REPORT_FIELDS)[number];

const OPEN_MARKER = '#records';
const CLOSE_MARKER = '/records';

export type Part = { readonly text: string } | { readonly field: string } | { readonly report: ReportField };

/** One cell of the plan: a copied value, a single placeholder (its value keeps its type) or text with placeholders. */
export type PlannedCell =
  | { readonly kind: 'static'; readonly value: TemplateCell }
  | { readonly kind: 'single'; readonly part: Exclude<Part, { text: string }> }
  | { readonly kind: 'text'; readonly parts: readonly Part[] };

export interface PlannedRow {
  readonly cells: readonly PlannedCell[];
  /** The row reads a record (holds at least one column placeholder). */
  readonly perRecord: boolean;
}

export type Segment = { readonly kind: 'once' | 'per-record'; readonly rows: readonly PlannedRow[] };

export interface PlannedSheet {
  readonly name: string;
  readonly segments: readonly Segment[];
  /** Rows before the first repeated segment: repeated atop continuation sheets. */
  readonly headerRows: number;
}

export interface ReportPlan {
  readonly sheets: readonly PlannedSheet[];
  /** Every column placeholder of the template, once each. */
  readonly fields: readonly string[];
}

const PLACEHOLDER = /\{\{\s*(.*?)\s*\}\}/g;

export function cellAddress(row: number, column: number): string {
  let letters = '';
  for (let n = column + 1; n > 0; n = Math.floor((n - 1) / 26)) letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  return `${letters}${row + 1}`;
}

function markerOf(cell: TemplateCell): string | undefined {
  if (typeof cell !== 'string') return undefined;
  const match = /^\{\{\s*([#/]records)\s*\}\}$/.exec(cell.trim());
  return match?.[1];
}

function planCell(cell: TemplateCell, where: string): PlannedCell {
  if (typeof cell !== 'string' || !cell.includes('{{')) return { kind: 'static', value: cell };
  const parts: Part[] = [];
  let at = 0;
  for (const match of cell.matchAll(PLACEHOLDER)) {
    const name = match[1] ?? '';
    if (match.index > at) parts.push({ text: cell.slice(at, match.index) });
    at = match.index + match[0].length;
    if (name === '') throw new TemplateError(`${where}: an empty placeholder {{}}.`);
    if (name === OPEN_MARKER || name === CLOSE_MARKER) throw new TemplateError(`${where}: {{${name}}} must be alone in its cell.`);
    if (name.startsWith('#') || name.startsWith('/')) throw new TemplateError(`${where}: unknown marker {{${name}}}; only {{#records}} and {{/records}} exist.`);
    if (name.includes('{') || name.includes('}')) throw new TemplateError(`${where}: a placeholder cannot contain braces.`);
    if (name.startsWith('@')) {
      if (!(REPORT_FIELDS as readonly string[]).includes(name)) throw new TemplateError(`${where}: unknown placeholder {{${name}}}; the report placeholders are ${REPORT_FIELDS.map((f) => `{{${f}}}`).join(', ')}.`);
      parts.push({ report: name as ReportField });
    } else {
      parts.push({ field: name });
    }
  }
  if (at < cell.length) parts.push({ text: cell.slice(at) });
  const [only] = parts;
  if (parts.length === 1 && only !== undefined && !('text' in only)) return { kind: 'single', part: only };
  return { kind: 'text', parts };
}

function fieldsOf(cell: PlannedCell): string[] {
  const parts = cell.kind === 'static' ? [] : cell.kind === 'single' ? [cell.part] : cell.parts;
  return parts.flatMap((p) => ('field' in p ? [p.field] : []));
}

function planSheet(sheet: TemplateSheet, fields: Set<string>): PlannedSheet {
  const hasMarkers = sheet.rows.some((row) => row.some((cell) => markerOf(cell) !== undefined));
  const segments: { kind: Segment['kind']; rows: PlannedRow[] }[] = [];
  const push = (kind: Segment['kind'], row: PlannedRow): void => {
    const last = segments[segments.length - 1];
    if (last && last.kind === kind && (kind === 'once' || hasMarkers)) last.rows.push(row);
    else segments.push({ kind, rows: [row] });
  };
  let blockStart: number | undefined;
  sheet.rows.forEach((row, r) => {
    const marker = row.map(markerOf).find((m) => m !== undefined);
    if (marker === OPEN_MARKER) {
      if (blockStart !== undefined) throw new TemplateError(`Sheet "${sheet.name}" row ${r + 1}: {{#records}} inside the block opened at row ${blockStart + 1}.`);
      blockStart = r;
      segments.push({ kind: 'per-record', rows: [] });
      return;
    }
    if (marker === CLOSE_MARKER) {
      if (blockStart === undefined) throw new TemplateError(`Sheet "${sheet.name}" row ${r + 1}: {{/records}} without a {{#records}} above it.`);
      blockStart = undefined;
      segments.push({ kind: 'once', rows: [] });
      return;
    }
    const cells = row.map((cell, c) => planCell(cell, `Sheet "${sheet.name}" cell ${cellAddress(r, c)}`));
    const rowFields = cells.flatMap(fieldsOf);
    for (const field of rowFields) fields.add(field);
    const planned: PlannedRow = { cells, perRecord: rowFields.length > 0 };
    if (hasMarkers) {
      if (blockStart === undefined && planned.perRecord) {
        const c = cells.findIndex((cell) => fieldsOf(cell).length > 0);
        throw new TemplateError(`Sheet "${sheet.name}" cell ${cellAddress(r, c)}: {{${rowFields[0] ?? ''}}} is outside the {{#records}} … {{/records}} block.`);
      }
      // A fresh segment was pushed by the last marker: rows go into it.
      const current = segments[segments.length - 1];
      if (current) current.rows.push(planned);
      else segments.push({ kind: 'once', rows: [planned] });
    } else {
      push(planned.perRecord ? 'per-record' : 'once', planned);
    }
  });
  if (blockStart !== undefined) throw new TemplateError(`Sheet "${sheet.name}" row ${blockStart + 1}: {{#records}} is never closed by {{/records}}.`);
  const kept = segments.filter((s) => s.rows.length > 0);
  const firstRepeated = kept.findIndex((s) => s.kind === 'per-record');
  const headerRows = firstRepeated < 0 ? 0 : kept.slice(0, firstRepeated).reduce((n, s) => n + s.rows.length, 0);
  return { name: sheet.name, segments: kept, headerRows };
}

/** The plan of a template; throws TemplateError for a template that cannot be filled. */
export function planReport(workbook: TemplateWorkbook): ReportPlan {
  const fields = new Set<string>();
  const sheets = workbook.sheets.map((sheet) => planSheet(sheet, fields));
  return { sheets, fields: [...fields] };
}
