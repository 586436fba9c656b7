// select_one / select_multiple / rank / select_one_external / *_from_file rows,
// including "or_other" and table-list headers.
import { XlsFormError, rowPrefix } from '../errors.ts';
import { SELECT_KEYWORDS } from '../spec/aliases.ts';
import type { JsonObject } from '../types.ts';
import type { ChoiceLists } from './choices.ts';
import { hasReference, isReference, isXmlTag } from './expression.ts';
import { copyObject, isObject, nested, sheetMisspelling, text } from './json-helpers.ts';
import { PARAMETER_KEYS, checkParameters, type Parameters } from './parameters.ts';

const SELECT = new RegExp(
  `^(${Object.keys(SELECT_KEYWORDS).join('|')}) (\\S+)( (or specify other|or_other|or other))?$`,
);
export const FILE_EXTENSIONS: ReadonlySet<string> = new Set(['.xml', '.csv', '.geojson']);
const FROM_FILE = new Set(['select_one_from_file', 'select_multiple_from_file', 'select one from file', 'select multiple from file']);

/** A file name's suffixes as Python's pathlib counts them ("a.b.csv" -> [".b", ".csv"]). */
function fileSuffixes(fileName: string): string[] {
  const name = fileName.split('/').pop() ?? fileName;
  if (name.endsWith('.')) return [];
  return name
    .replace(/^\.+/, '')
    .split('.')
    .slice(1)
    .map((s) => `.${s}`);
}

export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot) : '';
}

export interface SelectInput {
  row: JsonObject;
  rowNumber: number;
  questionType: string;
  params: Parameters;
  choices: ChoiceLists;
  externalChoices: ChoiceLists | undefined;
  sheetNames: readonly string[];
  warnings: string[];
  secondaryInstances: Set<string>;
  tableList: string | boolean | undefined;
}

export interface SelectResult {
  rows: JsonObject[];
  orOther: boolean;
  tableList: string | boolean | undefined;
}

function error(row: number, message: string, code: string, column = 'type'): XlsFormError {
  return new XlsFormError(message, { code, sheet: 'survey', row, column });
}

export function parseSelectRow(input: SelectInput): SelectResult | undefined {
  const { row, rowNumber, params, choices, externalChoices, warnings } = input;
  const match = SELECT.exec(input.questionType);
  if (!match) return undefined;
  const command = match[1] ?? '';
  const listName = match[2] ?? '';
  const selectType = SELECT_KEYWORDS[command] ?? 'select one';
  const extension = extensionOf(listName);
  const instanceName = extension ? listName.slice(0, -extension.length) : listName;

  if (selectType === 'select one external') {
    if (!('choice_filter' in row)) warnings.push(`${rowPrefix(rowNumber)} select one external is only meant for filtered selects.`);
    if (!externalChoices || externalChoices.size === 0) {
      const similar = sheetMisspelling('external_choices', input.sheetNames);
      throw error(
        rowNumber,
        `There should be an external_choices sheet in this xlsform.${similar ? ` ${similar}` : ''} Please ensure that the external_choices sheet has columns 'list name', and 'name'.`,
        'missing_external_choices',
      );
    }
    if (!externalChoices.has(listName)) {
      throw error(rowNumber, `${rowPrefix(rowNumber)}List name not in external choices sheet: ${listName}`, 'unknown_list');
    }
  } else input.secondaryInstances.add(instanceName);

  const suffixes = fileSuffixes(listName);
  if (FROM_FILE.has(command) && (suffixes.length !== 1 || !FILE_EXTENSIONS.has(suffixes[0] ?? ''))) {
    throw error(
      rowNumber,
      `${rowPrefix(rowNumber)} File name for '${command} ${listName}' should end with one of the supported file extensions: ${[...FILE_EXTENSIONS].map((e) => `'${e}'`).join(', ')}`,
      'file_extension',
    );
  }
  const list = choices.get(listName);
  if (!list && selectType !== 'select one external' && !FILE_EXTENSIONS.has(extension) && !hasReference(listName)) {
    if (choices.size === 0) {
      const similar = sheetMisspelling('choices', input.sheetNames);
      throw error(
        rowNumber,
        `There should be a choices sheet in this xlsform.${similar ? ` ${similar}` : ''} Please ensure that the choices sheet has the mandatory columns 'list_name', 'name', and 'label'.`,
        'missing_choices',
      );
    }
    throw error(rowNumber, `${rowPrefix(rowNumber)} List name not in choices sheet: ${listName}`, 'unknown_list');
  }
  if (selectType === 'select all that apply' && !FILE_EXTENSIONS.has(extension)) {
    for (const choice of list ?? []) {
      const name = text(choice['name']) ?? '';
      if (name.includes(' ')) {
        throw error(rowNumber, `Choice names with spaces cannot be added to multiple choice selects. See [${name}] in [${listName}]`, 'choice_name_space');
      }
    }
  }

  let otherQuestion: JsonObject | undefined;
  if (match[4] !== undefined) {
    if (row['choice_filter']) throw error(rowNumber, `${rowPrefix(rowNumber)} Choice filter not supported with or_other.`, 'or_other');
    if (!list || list.length === 0) throw error(rowNumber, `${rowPrefix(rowNumber)} Please specify choices for this 'or other' question.`, 'or_other');
    if (!list.some((c) => c['name'] === 'other')) {
      const languages = new Set<string>();
      for (const c of list) {
        const label = c['label'];
        if (isObject(label)) for (const lang of Object.keys(label)) languages.add(lang);
      }
      if (languages.size > 0) {
        const label: JsonObject = {};
        for (const lang of languages) label[lang] = 'Other';
        list.push({ name: 'other', label });
      } else list.push({ name: 'other', label: 'Other' });
    }
    const name = text(row['name']) ?? '';
    otherQuestion = { type: 'text', name: `${name}_other`, label: 'Specify other.', bind: { relevant: `selected(../${name}, 'other')` } };
  }

  const out = copyObject(row);
  out['type'] = selectType;
  const accepted = FROM_FILE.has(command) ? PARAMETER_KEYS.selectFromFile : PARAMETER_KEYS.select;
  checkParameters(params, accepted, rowNumber);
  if (FROM_FILE.has(command)) {
    // value= and label= name columns of the attached file: they must be XML names.
    for (const key of ['value', 'label'] as const) {
      const value = params[key];
      if (value !== undefined && !isXmlTag(value)) {
        throw error(
          rowNumber,
          `${rowPrefix(rowNumber)} On the 'survey' sheet, the 'parameters (${key})' value is invalid. Names must begin with a letter or underscore. After the first character, names may contain letters, digits, underscores, hyphens, or periods.`,
          'invalid_name',
          'parameters',
        );
      }
    }
  }
  if ('randomize' in params) {
    const randomize = params['randomize'];
    if (randomize !== 'true' && randomize !== 'false') {
      throw error(rowNumber, `randomize must be set to true or false: '${randomize ?? ''}' is an invalid value`, 'invalid_parameters', 'parameters');
    }
    const seed = params['seed'];
    if (seed !== undefined && !isReference(seed) && !Number.isFinite(Number(seed))) {
      throw error(rowNumber, 'seed value must be a number or a reference to another field.', 'invalid_parameters', 'parameters');
    }
  } else if ('seed' in params) {
    throw error(rowNumber, 'Parameters must include randomize=true to use a seed.', 'invalid_parameters', 'parameters');
  }
  out['parameters'] = { ...params };
  addChoiceInfo(out, listName, choices, text(row['choice_filter']), extension, rowNumber);

  const rows: JsonObject[] = [];
  let tableList = input.tableList;
  if (tableList !== undefined) {
    if (typeof tableList !== 'string') {
      tableList = listName;
      if (row['choice_filter'] !== undefined) {
        throw error(rowNumber, `${rowPrefix(rowNumber)} Choice filter not supported for table-list appearance.`, 'table_list');
      }
      const headerChoices = choices.get(listName);
      if (!headerChoices) throw error(rowNumber, `${rowPrefix(rowNumber)} List name not in choices sheet: ${listName}`, 'unknown_list');
      rows.push({
        type: selectType,
        name: `reserved_name_for_field_list_labels_${rowNumber}`,
        control: { appearance: 'label' },
        choices: headerChoices,
        itemset: listName,
      });
    }
    if (tableList !== listName) {
      throw error(rowNumber, `${rowPrefix(rowNumber)} Badly formatted table list, list names don't match: ${tableList} vs. ${listName}`, 'table_list');
    }
    const control = nested(out, 'control') ?? {};
    control['appearance'] = 'list-nolabel';
    out['control'] = control;
  }
  rows.push(out);
  if (otherQuestion) rows.push(otherQuestion);
  return { rows, orOther: otherQuestion !== undefined, tableList };
}

function addChoiceInfo(
  question: JsonObject,
  listName: string,
  choices: ChoiceLists,
  choiceFilter: string | undefined,
  extension: string,
  rowNumber: number,
): void {
  question['itemset'] = listName;
  const params = question['parameters'];
  const randomized = isObject(params) && params['randomize'] === 'true';
  if (choiceFilter) {
    if (question['type'] === 'select one external') question['query'] = listName;
    else {
      const list = choices.get(listName);
      if (list && list.length > 0) {
        question['list_name'] = listName;
        question['choices'] = list;
      }
    }
  } else if (!(randomized || FILE_EXTENSIONS.has(extension) || hasReference(listName))) {
    // pyxform fails here with a KeyError (e.g. select_one_external without a choice_filter).
    const list = choices.get(listName);
    if (!list) throw error(rowNumber, `${rowPrefix(rowNumber)} List name not in choices sheet: ${listName}`, 'unknown_list');
    question['list_name'] = listName;
    question['choices'] = list;
  }
}
