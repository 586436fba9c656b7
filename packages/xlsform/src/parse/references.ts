// ${name} references: every one in the settings, survey and choices sheets must
// name exactly one survey element; trigger columns must name questions.
import { XlsFormError, rowPrefix } from '../errors.ts';
import type { Sheet, Workbook } from '../workbook/model.ts';
import { parseReferences } from './expression.ts';

function referenceError(kind: 'malformed' | 'missing' | 'duplicate' | 'list', sheet: string, row: number, column: string, name = ''): XlsFormError {
  const head = `${rowPrefix(row)} On the '${sheet}' sheet, the '${column}' value is invalid. `;
  const detail = {
    malformed: "Reference variables must start with '${', then a question name, and end with '}'.",
    list: 'Reference variable lists must have a comma between each variable.',
    missing: `Reference variables must contain a name from the 'survey' sheet. Could not find the name '${name}'.`,
    duplicate: `Reference variables names must be unique anywhere in the 'survey'. The name '${name}' appears more than once.`,
  }[kind];
  return new XlsFormError(head + detail, { code: `reference_${kind}`, sheet, row, column });
}

/** The question names a trigger cell lists (`${a}` or `${a}, ${b}`). */
export function processTrigger(trigger: string | undefined, row: number, references: Array<[string, number]>): string[] | undefined {
  if (!trigger) return undefined;
  if (!(trigger.length > 2 && trigger.includes('${'))) throw referenceError('malformed', 'survey', row, 'trigger');
  const names: string[] = [];
  for (const part of trigger.split(',')) {
    const refs = parseReferences(part);
    if (refs === 'malformed') throw referenceError('malformed', 'survey', row, 'trigger');
    if (refs.length > 1) throw referenceError('list', 'survey', row, 'trigger');
    for (const ref of refs) names.push(ref.name);
  }
  if (names.length === 0) return undefined;
  for (const name of names) references.push([name, row]);
  return names;
}

export function checkTriggers(references: Array<[string, number]>, questionNames: Set<string>): void {
  for (const [name, row] of references) {
    if (!questionNames.has(name)) throw referenceError('missing', 'survey', row, 'trigger', name);
  }
}

function checkSheet(
  sheetName: string,
  sheet: Sheet | undefined,
  counts: Map<string, number>,
  include: (column: string) => boolean,
): void {
  if (!sheet) return;
  for (let i = 0; i < sheet.rows.length; i++) {
    const row = sheet.rows[i] ?? {};
    for (const column of Object.keys(row)) {
      if (!include(column)) continue;
      const value = row[column] ?? '';
      if (!value.includes('${')) continue;
      const refs = parseReferences(value);
      if (refs === 'malformed') throw referenceError('malformed', sheetName, i + 2, column);
      for (const ref of refs) {
        const count = counts.get(ref.name);
        if (count === undefined) throw referenceError('missing', sheetName, i + 2, column, ref.name);
        if (count !== 1) throw referenceError('duplicate', sheetName, i + 2, column, ref.name);
      }
    }
  }
}

/** Raw header names whose parsed first token is in `wanted` (matched by position). */
function rawColumns(sheet: Sheet | undefined, parsed: string[][], wanted: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  if (!sheet) return out;
  parsed.forEach((tokens, i) => {
    const raw = sheet.headers[i];
    if (raw !== undefined && wanted.has(tokens[0] ?? '')) out.add(raw);
  });
  return out;
}

const SURVEY_IGNORED = new Set(['type', 'name', 'trigger']);
const CHOICE_TRANSLATABLE = new Set(['label', 'image', 'big-image', 'audio', 'video']);
const ENTITY_IGNORED = new Set(['list name', 'list_name', 'repeat']);

export function checkReferences(workbook: Workbook, surveyHeaders: string[][], choiceHeaders: string[][], counts: Map<string, number>): void {
  checkSheet('settings', workbook.sheets.get('settings'), counts, () => true);
  checkSheet('entities', workbook.sheets.get('entities'), counts, (c) => !ENTITY_IGNORED.has(c));
  const survey = workbook.sheets.get('survey');
  const ignored = rawColumns(survey, surveyHeaders, SURVEY_IGNORED);
  checkSheet('survey', survey, counts, (c) => !ignored.has(c));
  const choices = workbook.sheets.get('choices');
  const translatable = rawColumns(choices, choiceHeaders, CHOICE_TRANSLATABLE);
  checkSheet('choices', choices, counts, (c) => translatable.size === 0 || translatable.has(c));
}
