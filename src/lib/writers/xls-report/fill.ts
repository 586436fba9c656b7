// Fills a planned report template with records: the sheets the spreadsheet writers take. Each
// repeated segment is one pass over the records, started only when the writer reaches it.
import type { Cell, SpreadsheetSheet } from '../xlsx/cell.ts';
import type { Part, PlannedCell, PlannedRow, ReportField, ReportPlan } from './template.ts';

export interface ReportFacts {
  readonly title: string;
  readonly idString: string;
  readonly formId: number;
  /** When the report was made. */
  readonly date: Date;
}

/** A record's value under a column placeholder, already protected as an export cell ('' when absent). */
export type RecordValues = (field: string) => string;

/** The records to fill in; each call starts a fresh pass. */
export type RecordPasses = () => AsyncIterable<RecordValues>;

/** Plain decimal numbers become number cells; `007`, `1e5`, `+3` and long digit strings stay text. */
const PLAIN_NUMBER = /^-?(?:0|[1-9]\d{0,14})(?:\.\d{1,15})?$/;

function typed(value: string): Cell {
  if (value === '') return null;
  return PLAIN_NUMBER.test(value) ? Number(value) : value;
}

function reportText(facts: ReportFacts, field: ReportField): string {
  switch (field) {
    case '@title':
      return facts.title;
    case '@id_string':
      return facts.idString;
    case '@form_id':
      return String(facts.formId);
    case '@date':
      return facts.date.toISOString().slice(0, 19).replace('T', ' ');
  }
}

function reportCell(facts: ReportFacts, field: ReportField): Cell {
  if (field === '@date') return { kind: 'datetime', iso: facts.date.toISOString().slice(0, 19) };
  if (field === '@form_id') return facts.formId;
  return reportText(facts, field);
}

const NO_RECORD: RecordValues = () => '';

function fillCell(cell: PlannedCell, facts: ReportFacts, values: RecordValues): Cell {
  switch (cell.kind) {
    case 'static':
      return cell.value;
    case 'single':
      return 'field' in cell.part ? typed(values(cell.part.field)) : reportCell(facts, cell.part.report);
    case 'text': {
      const text = cell.parts.map((p: Part) => ('text' in p ? p.text : 'field' in p ? values(p.field) : reportText(facts, p.report))).join('');
      return text === '' ? null : text;
    }
  }
}

function fillRow(row: PlannedRow, facts: ReportFacts, values: RecordValues): Cell[] {
  return row.cells.map((cell) => fillCell(cell, facts, values));
}

async function* sheetRows(plan: ReportPlan['sheets'][number], facts: ReportFacts, records: RecordPasses): AsyncGenerator<readonly Cell[]> {
  for (const segment of plan.segments) {
    if (segment.kind === 'once') {
      for (const row of segment.rows) yield fillRow(row, facts, NO_RECORD);
      continue;
    }
    for await (const values of records()) {
      for (const row of segment.rows) yield fillRow(row, facts, values);
    }
  }
}

export function fillReport(plan: ReportPlan, facts: ReportFacts, records: RecordPasses): SpreadsheetSheet[] {
  return plan.sheets.map((sheet) => ({ name: sheet.name, rows: sheetRows(sheet, facts, records), repeatRows: sheet.headerRows }));
}
