// A "begin group" / "begin repeat" / "begin loop over" row: the new section,
// with the rows pyxform generates for it (repeat counts, table-list labels).
import { XlsFormError, rowPrefix } from '../errors.ts';
import type { JsonObject } from '../types.ts';
import type { ChoiceLists } from './choices.ts';
import { isReference } from './expression.ts';
import { child, copyObject, nested, text } from './json-helpers.ts';

export interface BeginInput {
  row: JsonObject;
  rowNumber: number;
  questionName: string | undefined;
  questionType: string;
  controlType: 'group' | 'repeat' | 'loop';
  /** The list of "begin loop over LIST". */
  listName: string | undefined;
  appearance: string | undefined;
  rootName: string;
  repeatNames: Set<string>;
  warnings: string[];
  choices: ChoiceLists;
  /** The enclosing section's children, where generated rows go. */
  siblings: JsonObject[];
}

export interface BeginResult {
  section: JsonObject;
  children: JsonObject[];
  /** The section has the table-list appearance. */
  tableList: boolean;
}

export function beginSection(input: BeginInput): BeginResult {
  const { row, rowNumber, questionName, questionType, controlType, listName, appearance, rootName, repeatNames, warnings, choices, siblings } = input;
  let tableList = false;
  if (controlType === 'repeat') {
    if (questionName === rootName) {
      throw new XlsFormError(
        `${rowPrefix(rowNumber)} On the 'survey' sheet, the 'name' value '${questionName}' is invalid. Repeat names must not be the same as the survey root (which defaults to 'data').`,
        { code: 'invalid_repeat_name', sheet: 'survey', row: rowNumber, column: 'name' },
      );
    }
    if (questionName !== undefined && repeatNames.has(questionName)) {
      throw new XlsFormError(
        `${rowPrefix(rowNumber)} On the 'survey' sheet, the 'name' value '${questionName}' is invalid. Repeat names must unique anywhere in the survey, at all levels of group or repeat nesting.`,
        { code: 'duplicate_repeat_name', sheet: 'survey', row: rowNumber, column: 'name' },
      );
    }
    if (questionName !== undefined) repeatNames.add(questionName);
    if (!('label' in row) && !('media' in row)) {
      warnings.push(`${rowPrefix(rowNumber)} Repeat has no label: {'name': '${questionName ?? ''}', 'type': '${questionType}'}`);
    }
  }
  const section = copyObject(row);
  section['type'] = controlType;
  const sectionChildren: JsonObject[] = [];
  section['children'] = sectionChildren;
  if (controlType === 'loop') {
    if (!listName) throw new XlsFormError(`${rowPrefix(rowNumber)} Repeat loop without list name.`, { code: 'loop_list', sheet: 'survey', row: rowNumber });
    const columns = choices.get(listName);
    if (!columns) throw new XlsFormError(`${rowPrefix(rowNumber)} List name not in columns sheet: ${listName}`, { code: 'loop_list', sheet: 'survey', row: rowNumber });
    section['columns'] = columns;
  }
  const countExpression = text(nested(section, 'control')?.['jr:count']);
  if (countExpression && !isReference(countExpression)) {
    const generated = `${questionName ?? ''}_count`;
    siblings.push({ name: generated, bind: { readonly: 'true()', calculate: countExpression }, type: 'calculate' });
    child(section, 'control')['jr:count'] = `\${${generated}}`;
  }
  if (appearance) {
    const words = appearance.split(/\s+/).filter((w) => w !== '');
    if (words.includes('table-list')) {
      tableList = true;
      child(section, 'control')['appearance'] = ['field-list', ...words.filter((w) => w !== 'table-list')].join(' ');
      if ('label' in section || 'hint' in section) {
        const note: JsonObject = { type: 'note', name: `generated_table_list_label_${rowNumber}` };
        if ('label' in section) {
          note['label'] = section['label'] ?? '';
          delete section['label'];
        }
        if ('hint' in section) {
          note['hint'] = section['hint'] ?? '';
          delete section['hint'];
        }
        sectionChildren.push(note);
      }
    }
  }
  if ('intent' in section) child(section, 'control')['intent'] = section['intent'] ?? '';
  return { section, children: sectionChildren, tableList };
}
