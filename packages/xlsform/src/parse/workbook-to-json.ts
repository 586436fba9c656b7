// Workbook -> the form's JSON tree (the same shape pyxform builds): settings,
// choice lists, then the survey sheet row by row with a stack for groups and
// repeats.
import { XlsFormError, rowPrefix } from '../errors.ts';
import { CONTROL_KEYWORDS, SETTINGS_HEADER_ALIASES, SURVEY_HEADER_ALIASES, yesNo } from '../spec/aliases.ts';
import { SURVEY_COLUMNS } from '../spec/columns.ts';
import { DEPRECATED_DEVICE_ID_TYPES, EXTERNAL_INSTANCE_TYPES, GEO_TYPES, TYPE_ALIASES } from '../spec/question-types.ts';
import type { JsonObject } from '../types.ts';
import type { Sheet, Workbook } from '../workbook/model.ts';
import { parseChoices, parseListSheet } from './choices.ts';
import { defaultIsDynamic, isXmlTag } from './expression.ts';
import { groupSheet } from './headers.ts';
import { copyObject, nested, pyRepr, sheetMisspelling, text } from './json-helpers.ts';
import { parseParameters } from './parameters.ts';
import {
  appendAction,
  audioRow,
  auditRow,
  backgroundAudioRow,
  geoRow,
  photoRow,
  rangeRow,
  textRow,
} from './question-rows.ts';
import { parseSelectRow } from './select-row.ts';
import { checkReferences, checkTriggers, processTrigger } from './references.ts';
import { missingTranslationsWarning, orOtherWarning, type SheetLanguages, sheetLanguages } from './translations.ts';
import { parseEntities, type EntityContext } from './entities.ts';
import { readSettings } from './settings.ts';
import { beginSection } from './sections.ts';
import { addFlatAnnotations, checkGeoReferences, checkUniqueName, invalidName } from './survey-rules.ts';

const CONTROL_NAMES = Object.keys(CONTROL_KEYWORDS).join('|');
const BEGIN_CONTROL = new RegExp(`^begin(\\s|_)(${CONTROL_NAMES})( (over )?(\\S+))?$`);
const END_CONTROL = new RegExp(`^end(\\s|_)(${CONTROL_NAMES})$`);
const OSM = /(osm) (\S+)/;

export interface ParseOptions {
  rootName: string;
  fallbackName: string;
  warnings: string[];
}

export interface ParsedForm {
  json: JsonObject;
  /** The external_choices sheet as written, for itemsets.csv. */
  externalChoicesSheet: Sheet | undefined;
  /** A select_one_external question exists, so itemsets.csv is wanted. */
  usesExternalChoices: boolean;
}

interface Frame {
  controlType: string | undefined;
  controlName: string | undefined;
  children: JsonObject[];
  childNames: Set<string>;
  childNamesLower: Set<string>;
  row: number | undefined;
}

function noSurveySheet(workbook: Workbook): XlsFormError {
  const similar = sheetMisspelling('survey', workbook.sheetNames);
  return new XlsFormError(`You must have a sheet named 'survey'. ${similar ?? ''}`.trimEnd(), { code: 'missing_survey_sheet', sheet: 'survey' });
}

export function workbookToJson(workbook: Workbook, options: ParseOptions): ParsedForm {
  const { warnings } = options;
  const surveySheet = workbook.sheets.get('survey');
  if (!surveySheet) throw noSurveySheet(workbook);
  if (!isXmlTag(options.rootName)) {
    throw new XlsFormError(
      "The 'form_name' value is invalid. Names must begin with a letter or underscore. After the first character, names may contain letters, digits, underscores, hyphens, or periods.",
      { code: 'invalid_name' },
    );
  }
  const settings = readSettings(workbook, warnings);
  const collapseSpaces = yesNo(settings['clean_text_values'] ?? 'yes') ?? true;
  const defaultLanguage = text(settings['default_language']) ?? 'default';
  if ('add_none_option' in settings) settings['add_none_option'] = yesNo(settings['add_none_option']) ?? false;
  if ('client_editable' in settings) settings['client_editable'] = yesNo(settings['client_editable']) ?? false;
  const idString = text(settings['id_string']) ?? options.fallbackName;
  const json: JsonObject = {
    type: 'survey',
    name: options.rootName,
    title: idString,
    id_string: idString,
    sms_keyword: text(settings['sms_keyword']) ?? idString,
    default_language: defaultLanguage,
    children: [],
  };
  Object.assign(json, settings);
  const rootChildren: JsonObject[] = [];
  json['children'] = rootChildren;

  const externalChoices = workbook.sheets.has('external_choices')
    ? parseListSheet(workbook.sheets.get('external_choices'), 'external_choices', defaultLanguage)
    : undefined;
  const choiceSheet = workbook.sheets.get('choices');
  const { lists: choices, headers: choiceHeaders } = parseChoices(
    choiceSheet,
    defaultLanguage,
    yesNo(settings['allow_choice_duplicates'] ?? 'no') ?? false,
    warnings,
  );
  if (choices.size > 0) {
    const out: JsonObject = {};
    for (const [name, list] of choices) out[name] = list;
    json['choices'] = out;
  }

  const entities: EntityContext | undefined = parseEntities(workbook, warnings);

  const survey = groupSheet(surveySheet, {
    sheetName: 'survey',
    aliases: SURVEY_HEADER_ALIASES,
    columns: SURVEY_COLUMNS,
    required: ['type'],
    defaultLanguage,
    collapseSpaces,
  });
  for (const { data } of survey.rows) {
    const type = text(data['type']);
    if (type !== undefined && type in TYPE_ALIASES) data['type'] = TYPE_ALIASES[type] ?? type;
  }
  const languages: SheetLanguages = sheetLanguages(survey.headers, choiceSheet ? choiceHeaders : []);
  const missing = missingTranslationsWarning(languages);
  if (missing) warnings.push(missing);

  const osmTags = workbook.sheets.has('osm') ? parseListSheet(workbook.sheets.get('osm'), 'osm', 'default') : undefined;

  const stack: Frame[] = [
    { controlType: undefined, controlName: undefined, children: rootChildren, childNames: new Set(), childNamesLower: new Set(), row: undefined },
  ];
  let tableList: string | boolean | undefined;
  const metaChildren: JsonObject[] = [];
  const questionNames = new Set<string>();
  const elementNames = new Map<string, number>();
  const triggerReferences: Array<[string, number]> = [];
  const geoReferences: Array<[string, number]> = [];
  const secondaryInstances = new Set<string>();
  const repeatNames = new Set<string>();
  let orOtherSeen = false;
  let usesExternalChoices = false;

  for (const { row: rowNumber, data: row } of survey.rows) {
    const frame = stack[stack.length - 1] ?? stack[0];
    if (!frame) break;
    const siblings = frame.children;

    if ('disabled' in row) {
      warnings.push(`${rowPrefix(rowNumber)} The 'disabled' column header is not part of the current spec. We recommend using relevant instead.`);
      const disabled = row['disabled'];
      delete row['disabled'];
      if (yesNo(disabled)) continue;
    }
    if (Object.keys(row).length === 0) continue;

    const questionType = text(row['type']);
    const appearance = text(nested(row, 'control')?.['appearance']);
    if (!questionType) {
      if (!('name' in row || 'label' in row)) {
        warnings.push(`${rowPrefix(rowNumber)} Row without name, text, or label is being skipped:\n${pyRepr(row)}`);
        continue;
      }
      throw new XlsFormError(`${rowPrefix(rowNumber)} Question with no type.\n${pyRepr(row)}`, {
        code: 'missing_type',
        sheet: 'survey',
        row: rowNumber,
        column: 'type',
      });
    }

    if ('trigger' in row) {
      const triggers = processTrigger(text(row['trigger']), rowNumber, triggerReferences);
      if (triggers) row['trigger'] = triggers;
      else delete row['trigger'];
    }

    if ('default' in row) {
      const value = text(row['default']);
      if (value && defaultIsDynamic(value, questionType)) {
        row['_dynamic_default'] = true;
        appendAction(row, { name: 'setvalue', event: 'odk-instance-first-load' });
        if (stack.some((f) => f.controlType === 'repeat')) appendAction(row, { name: 'setvalue', event: 'odk-new-repeat' });
      }
    }

    const params = parseParameters(row['parameters'], rowNumber);

    if (questionType === 'audit') {
      metaChildren.push(auditRow(row, params, rowNumber));
      continue;
    }
    if (questionType === 'calculate') {
      const calculation = text(nested(row, 'bind')?.['calculate']);
      if (!calculation && row['_dynamic_default'] !== true) {
        throw new XlsFormError(`${rowPrefix(rowNumber)} Missing calculation.`, {
          code: 'missing_calculation',
          sheet: 'survey',
          row: rowNumber,
          column: 'calculation',
        });
      }
    }
    if (DEPRECATED_DEVICE_ID_TYPES.has(questionType)) {
      warnings.push(
        `${rowPrefix(rowNumber)} ${questionType} is no longer supported on most devices. Only old versions of Collect on Android versions older than 11 still support it.`,
      );
    }
    const settingKey = SETTINGS_HEADER_ALIASES[questionType];
    if (typeof settingKey === 'string') {
      json[settingKey] = text(row['name']) ?? 'None';
      continue;
    }

    const beginMatch = BEGIN_CONTROL.exec(questionType);
    const endMatch = END_CONTROL.exec(questionType);

    let questionName: string | undefined;
    if (!endMatch) {
      if (!('name' in row)) {
        if (row['type'] === 'note') row['name'] = `generated_note_name_${rowNumber}`;
        else {
          throw new XlsFormError(`${rowPrefix(rowNumber)} Question or group with no name.`, {
            code: 'missing_name',
            sheet: 'survey',
            row: rowNumber,
            column: 'name',
          });
        }
      }
      questionName = text(row['name']) ?? '';
      if (!isXmlTag(questionName)) throw invalidName('survey', rowNumber, 'name');
      elementNames.set(questionName, (elementNames.get(questionName) ?? 0) + 1);
      checkUniqueName(questionName, frame, rowNumber, warnings);
    }

    if (entities) entities.noteRow(row, rowNumber, questionName, beginMatch !== null, endMatch !== null);
    else if (text(nested(row, 'bind')?.['entities:saveto'])) {
      throw new XlsFormError(
        `${rowPrefix(rowNumber)} On the 'survey' sheet, the 'save_to' value is invalid. To save entity properties using the save_to column, add an entities sheet and declare an entity.`,
        { code: 'entities', sheet: 'survey', row: rowNumber, column: 'save_to' },
      );
    }

    if (endMatch) {
      const controlType = CONTROL_KEYWORDS[endMatch[2] ?? ''] ?? 'group';
      if (frame.controlType !== controlType || stack.length === 1) {
        throw new XlsFormError(
          `${rowPrefix(rowNumber)} Unmatched 'end_${controlType}'. No matching 'begin_${controlType}' was found for the name '${text(row['name']) ?? 'unknown'}'.`,
          { code: 'unmatched_end', sheet: 'survey', row: rowNumber, column: 'type' },
        );
      }
      stack.pop();
      entities?.popContainer();
      tableList = undefined;
      continue;
    }

    if (beginMatch) {
      const controlType = CONTROL_KEYWORDS[beginMatch[2] ?? ''] ?? 'group';
      const { section, children: sectionChildren, tableList: opensTableList } = beginSection({
        row,
        rowNumber,
        questionName,
        questionType,
        controlType,
        listName: beginMatch[5],
        appearance,
        rootName: options.rootName,
        repeatNames,
        warnings,
        choices,
        siblings,
      });
      if (opensTableList) tableList = true;
      siblings.push(section);
      stack.push({
        controlType,
        controlName: questionName,
        children: sectionChildren,
        childNames: new Set(),
        childNamesLower: new Set(),
        row: rowNumber,
      });
      entities?.pushContainer(controlType, questionName ?? '');
      continue;
    }

    if (questionName !== undefined) questionNames.add(questionName);
    if (EXTERNAL_INSTANCE_TYPES.has(questionType) && questionName !== undefined) {
      secondaryInstances.add(questionName.replace(/\.[^.]*$/, ''));
    }

    const selectResult = parseSelectRow({
      row,
      rowNumber,
      questionType,
      params,
      choices,
      externalChoices,
      sheetNames: workbook.sheetNames,
      warnings,
      secondaryInstances,
      tableList,
    });
    if (selectResult) {
      if (selectResult.orOther) orOtherSeen = true;
      if (selectResult.rows.some((r) => r['type'] === 'select one external')) usesExternalChoices = true;
      tableList = selectResult.tableList;
      siblings.push(...selectResult.rows);
      continue;
    }

    const osm = OSM.exec(questionType);
    if (osm) {
      const out = copyObject(row);
      out['type'] = 'osm';
      const listName = osm[2];
      if (osmTags && listName !== undefined) {
        const tags = osmTags.get(listName) ?? [];
        for (const tag of tags) {
          const sub = osmTags.get(text(tag['name']) ?? '');
          if (sub) tag['choices'] = sub;
        }
        out['tags'] = tags;
      }
      siblings.push(out);
      continue;
    }

    if (questionType === 'range') siblings.push(rangeRow(row, params, rowNumber, appearance, choices));
    else if (questionType === 'text') siblings.push(textRow(row, params, rowNumber));
    else if (questionType === 'photo') siblings.push(photoRow(row, params, rowNumber, warnings));
    else if (questionType === 'audio') siblings.push(audioRow(row, params, rowNumber));
    else if (questionType === 'background-audio') siblings.push(backgroundAudioRow(row, params, rowNumber));
    else if (GEO_TYPES.has(questionType)) siblings.push(geoRow(row, params, rowNumber, geoReferences));
    else if (questionType === 'start-geopoint') {
      const out = copyObject(row);
      appendAction(out, { name: 'odk:setgeopoint', event: 'odk-instance-first-load' });
      siblings.push(out);
    } else {
      if (questionType === 'background-geopoint') {
        if (!row['trigger']) {
          throw new XlsFormError(`${rowPrefix(rowNumber)} For 'background-geopoint' questions, the 'trigger' column must not be empty.`, {
            code: 'background_geopoint',
            sheet: 'survey',
            row: rowNumber,
            column: 'trigger',
          });
        }
        if (nested(row, 'bind')?.['calculate'] !== undefined) {
          throw new XlsFormError(`${rowPrefix(rowNumber)} For 'background-geopoint' questions, the 'calculation' column must be empty.`, {
            code: 'background_geopoint',
            sheet: 'survey',
            row: rowNumber,
            column: 'calculation',
          });
        }
      }
      siblings.push(row);
    }
  }

  if (orOtherSeen) {
    const warning = orOtherWarning(languages);
    if (warning) warnings.push(warning);
  }
  checkTriggers(triggerReferences, questionNames);
  checkGeoReferences(geoReferences, secondaryInstances, repeatNames, choices, entities);

  const open = stack[stack.length - 1];
  if (stack.length > 1 && open) {
    throw new XlsFormError(
      `${rowPrefix(open.row ?? 0)} Unmatched 'begin_${open.controlType ?? ''}'. No matching 'end_${open.controlType ?? ''}' was found for the name '${open.controlName ?? 'unknown'}'.`,
      { code: 'unmatched_begin', sheet: 'survey', row: open.row ?? 0, column: 'type' },
    );
  }

  if (settings['flat']) addFlatAnnotations(rootChildren, '');

  if (yesNo(settings['omit_instanceID'])) {
    if (settings['public_key']) throw new XlsFormError('Cannot omit instanceID, it is required for encryption.', { code: 'omit_instance_id', sheet: 'settings' });
  } else {
    metaChildren.push({
      name: 'instanceID',
      bind: { readonly: 'true()', 'jr:preload': text(settings['instance_id']) ?? 'uid' },
      type: 'calculate',
    });
    elementNames.set('instanceID', (elementNames.get('instanceID') ?? 0) + 1);
  }
  if ('instance_name' in settings) {
    metaChildren.push({ name: 'instanceName', bind: { calculate: settings['instance_name'] ?? '' }, type: 'calculate' });
  }
  entities?.apply(json);
  if (metaChildren.length > 0) {
    const existing = rootChildren.find((c) => c['name'] === 'meta' && c['type'] === 'group');
    const existingChildren = existing?.['children'];
    if (Array.isArray(existingChildren)) existingChildren.push(...metaChildren);
    else rootChildren.push({ name: 'meta', type: 'group', control: { bodyless: true }, children: metaChildren });
  }
  checkReferences(workbook, survey.headers, choiceHeaders, elementNames);
  return { json, externalChoicesSheet: workbook.sheets.get('external_choices'), usesExternalChoices };
}

