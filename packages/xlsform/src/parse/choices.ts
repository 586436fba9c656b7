// The choices, external_choices and osm sheets: rows grouped by list name.
import { XlsFormError, rowPrefix } from '../errors.ts';
import { LIST_HEADER_ALIASES } from '../spec/aliases.ts';
import { CHOICES_COLUMNS } from '../spec/columns.ts';
import type { JsonObject } from '../types.ts';
import type { Sheet } from '../workbook/model.ts';
import { groupSheet, type GroupedSheet } from './headers.ts';
import { text } from './json-helpers.ts';

export type ChoiceLists = Map<string, JsonObject[]>;

export interface ParsedChoices {
  lists: ChoiceLists;
  headers: string[][];
}

/** Groups rows by their list name, dropping that column; rows with no list name are ignored. */
export function groupByListName(grouped: GroupedSheet, keepRows = false): Map<string, Array<{ row: number; data: JsonObject }>> {
  const lists = new Map<string, Array<{ row: number; data: JsonObject }>>();
  for (const entry of grouped.rows) {
    const listName = text(entry.data['list name']);
    if (listName === undefined) continue;
    delete entry.data['list name'];
    let list = lists.get(listName);
    if (!list) {
      list = [];
      lists.set(listName, list);
    }
    list.push(keepRows ? entry : { row: entry.row, data: entry.data });
  }
  return lists;
}

export function parseChoices(
  sheet: Sheet | undefined,
  defaultLanguage: string,
  allowDuplicates: boolean,
  warnings: string[],
): ParsedChoices {
  if (!sheet) return { lists: new Map(), headers: [] };
  const grouped = groupSheet(sheet, {
    sheetName: 'choices',
    aliases: LIST_HEADER_ALIASES,
    columns: CHOICES_COLUMNS,
    required: ['name'],
    defaultLanguage,
  });
  // Choice columns become XML element names: headers with spaces cannot.
  const invalidColumns: string[] = [];
  for (const header of grouped.headers) {
    const column = header[0] ?? '';
    if (column !== 'list name' && (column.includes(' ') || column === '')) {
      warnings.push(
        `[row : 1] On the 'choices' sheet, the '${column}' value is invalid. Column headers must not be empty and must not contain spaces. Learn more: https://xlsform.org/en/#setting-up-your-worksheets`,
      );
      invalidColumns.push(column);
    }
  }
  const lists: ChoiceLists = new Map();
  for (const [listName, entries] of groupByListName(grouped)) {
    const seen = new Set<string>();
    const duplicates: string[] = [];
    const options: JsonObject[] = [];
    for (const { row, data } of entries) {
      if (!('name' in data)) {
        throw new XlsFormError(
          `${rowPrefix(row)} On the 'choices' sheet, the 'name' value is invalid. Choices must have a name. Learn more: https://xlsform.org/en/#setting-up-your-worksheets`,
          { code: 'choice_without_name', sheet: 'choices', row, column: 'name' },
        );
      }
      if (!('label' in data)) {
        warnings.push(
          `${rowPrefix(row)} On the 'choices' sheet, the 'label' value is invalid. Choices should have a label. Learn more: https://xlsform.org/en/#setting-up-your-worksheets`,
        );
      }
      const name = text(data['name']) ?? '';
      if (!allowDuplicates) {
        if (seen.has(name)) {
          duplicates.push(
            `${rowPrefix(row)} On the 'choices' sheet, the 'name' value is invalid. Choice names must be unique for each choice list. If this is intentional, use the setting 'allow_choice_duplicates'. Learn more: https://xlsform.org/#choice-names.`,
          );
        } else seen.add(name);
      }
      for (const column of invalidColumns) delete data[column];
      options.push(data);
    }
    if (duplicates.length > 0) {
      const firstRow = /\d+/.exec(duplicates[0] ?? '');
      throw new XlsFormError(duplicates.join('\n'), {
        code: 'duplicate_choice',
        sheet: 'choices',
        row: Number(firstRow?.[0] ?? 0),
        column: 'name',
      });
    }
    lists.set(listName, options);
  }
  return { lists, headers: grouped.headers };
}

export function parseListSheet(sheet: Sheet | undefined, sheetName: string, defaultLanguage: string): ChoiceLists {
  const lists: ChoiceLists = new Map();
  if (!sheet) return lists;
  const grouped = groupSheet(sheet, { sheetName, aliases: LIST_HEADER_ALIASES, columns: CHOICES_COLUMNS, defaultLanguage });
  for (const [name, entries] of groupByListName(grouped)) lists.set(name, entries.map((e) => e.data));
  return lists;
}
