// Builds the survey tree (see types.ts) from the form JSON. Question-type defaults are merged
// here (bind type, control tag), while the user's own values are remembered
// for the form JSON.
import { XlsFormError } from '../errors.ts';
import { isObject, text } from '../parse/json-helpers.ts';
import { QUESTION_TYPES, type QuestionTypeSpec } from '../spec/question-types.ts';
import type { Json, JsonObject } from '../types.ts';
import { checkNames } from './names.ts';
import type { Itemset, Option, Question, QuestionClass, Section, SurveyElement, SurveyTree } from './types.ts';

export * from './types.ts';
export * from './paths.ts';


const OPTION_KEYS = new Set(['name', 'label', 'media', 'sms_option']);

export function makeOption(source: JsonObject): Option {
  const extra: Array<[string, Json]> = [];
  for (const k in source) if (!OPTION_KEYS.has(k)) extra.push([k, source[k] ?? null]);
  const media = source['media'];
  return {
    name: text(source['name']) ?? '',
    label: source['label'],
    media: isObject(media) ? media : undefined,
    smsOption: text(source['sms_option']),
    extra,
    source,
  };
}

function hasRef(value: string): boolean {
  return /\$\{(last-saved#)?[A-Za-z_][^}]*\}/.test(value);
}

export function makeItemset(name: string, list: JsonObject[]): Itemset {
  const options = list.map(makeOption);
  const requiresItext = options.some(
    (o) => (o.media !== undefined && Object.keys(o.media).length > 0) || isObject(o.label) || (typeof o.label === 'string' && o.label !== '' && hasRef(o.label)),
  );
  return { name, options, requiresItext, usedBySearch: false };
}

function classOf(type: string, spec: QuestionTypeSpec): QuestionClass {
  if (type === 'geopoint' || type === 'geoshape' || type === 'geotrace') return 'geo';
  const tag = spec.control?.tag ?? '';
  if (tag === 'upload') return spec.control?.mediatype === 'osm/*' ? 'osm' : 'upload';
  switch (tag) {
    case 'input':
      return 'input';
    case 'select':
    case 'select1':
    case 'odk:rank':
      return 'select';
    case 'trigger':
      return 'trigger';
    case 'range':
      return 'range';
    default:
      return 'plain';
  }
}

function objectOrUndefined(value: Json | undefined): JsonObject | undefined {
  return isObject(value) ? value : undefined;
}

export class TreeBuilder {
  readonly setvalueTriggers = new Map<string, Array<[string, string]>>();
  readonly setgeopointTriggers = new Map<string, Array<[string, string]>>();
  choices = new Map<string, Itemset>();
  private addNoneOption = false;

  build(json: JsonObject): SurveyTree {
    const choicesJson = objectOrUndefined(json['choices']);
    if (choicesJson) {
      for (const [name, list] of Object.entries(choicesJson)) {
        if (Array.isArray(list)) this.choices.set(name, makeItemset(name, list.filter(isObject)));
      }
    }
    if (json['add_none_option'] === true) this.addNoneOption = true;
    const root = this.section(json, 'survey', undefined);
    checkNames(root);
    return { root, choices: this.choices, setvalueTriggers: this.setvalueTriggers, setgeopointTriggers: this.setgeopointTriggers };
  }

  private section(data: JsonObject, kind: Section['kind'], parent: Section | undefined): Section {
    const control = objectOrUndefined(data['control']);
    let label = data['label'];
    if (control && control['appearance'] === 'label' && !label) label = ' ';
    const section: Section = {
      kind,
      name: text(data['name']) ?? '',
      label,
      parent,
      data,
      children: [],
      bind: objectOrUndefined(data['bind']),
      control,
      hint: data['hint'],
      media: objectOrUndefined(data['media']),
      mediaValue: data['media'],
      instance: objectOrUndefined(data['instance']),
      flat: data['flat'] === true,
    };
    const children = data['children'];
    if (Array.isArray(children)) {
      for (const child of children) if (isObject(child)) section.children.push(...this.element(child, section));
    }
    return section;
  }

  private element(data: JsonObject, parent: Section): SurveyElement[] {
    const type = text(data['type']) ?? '';
    if (type === 'group' || type === 'repeat' || type === 'entity') return [this.section(data, type, parent)];
    if (type === 'attribute' || type === 'label') {
      return [
        {
          kind: type === 'attribute' ? 'attribute' : 'entity-label',
          name: text(data['name']) ?? '',
          label: undefined,
          parent,
          data,
          bind: objectOrUndefined(data['bind']),
          actions: Array.isArray(data['actions']) ? data['actions'].filter(isObject) : [],
          value: text(data['value']) ?? '',
        },
      ];
    }
    if (type === 'loop') return this.loop(data, parent);
    if (type === 'include') throw new XlsFormError('This section has not been included.', { code: 'include' });
    if (type === 'csv-external' || type === 'xml-external') {
      return [{ kind: 'external', type, name: text(data['name']) ?? '', label: data['label'], parent, data }];
    }
    this.saveTrigger(data, type);
    return [this.question(data, type, parent)];
  }

  private saveTrigger(data: JsonObject, type: string): void {
    const trigger = data['trigger'];
    if (!Array.isArray(trigger) || trigger.length === 0) return;
    const calculation = text(objectOrUndefined(data['bind'])?.['calculate']) ?? '';
    const target = type === 'background-geopoint' ? this.setgeopointTriggers : this.setvalueTriggers;
    for (const t of trigger) {
      const name = text(t) ?? '';
      const list = target.get(name) ?? [];
      list.push([text(data['name']) ?? '', calculation]);
      target.set(name, list);
    }
  }

  private question(data: JsonObject, type: string, parent: Section): Question {
    const spec = QUESTION_TYPES[type];
    if (!spec) throw new XlsFormError(`Unknown question type '${type}'.`, { code: 'unknown_type', sheet: 'survey', column: 'type' });
    if (this.addNoneOption && type.startsWith('select all that apply')) addNoneOption(data);
    const merged: JsonObject = { ...data };
    const userValues: JsonObject = {};
    const typeDefaultKeys: string[] = [];
    for (const [key, value] of Object.entries(spec) as Array<[string, Json]>) {
      typeDefaultKeys.push(key);
      if (isObject(value)) {
        const template: JsonObject = { ...value };
        const own = data[key];
        if (key in data && own !== undefined) {
          if (isObject(own)) Object.assign(template, own);
          userValues[key] = own;
        }
        merged[key] = template;
      } else if (!(key in data)) merged[key] = value;
    }
    const control = objectOrUndefined(merged['control']);
    let label = merged['label'];
    if (control && control['appearance'] === 'label' && !label) label = ' ';
    const questionClass = classOf(type, spec);
    const itemsetName = text(merged['itemset']);
    let choices: Itemset | undefined;
    if (questionClass === 'select' || questionClass === 'range' || questionClass === 'geo') {
      // Only the survey's own lists are used: a copied list on the row is ignored.
      choices = itemsetName !== undefined ? this.choices.get(itemsetName) : undefined;
    }
    const trigger = merged['trigger'];
    const tags = Array.isArray(merged['tags']) ? merged['tags'] : Array.isArray(merged['children']) ? merged['children'] : [];
    return {
      kind: 'question',
      name: text(merged['name']) ?? '',
      label,
      parent,
      data,
      type,
      questionClass,
      bind: objectOrUndefined(merged['bind']),
      control,
      hint: merged['hint'],
      guidanceHint: merged['guidance_hint'],
      media: objectOrUndefined(merged['media']),
      mediaValue: merged['media'],
      instance: objectOrUndefined(merged['instance']),
      defaultValue: text(merged['default']),
      dynamicDefault: merged['_dynamic_default'] === true,
      actions: Array.isArray(merged['actions']) ? merged['actions'].filter(isObject) : [],
      trigger: Array.isArray(trigger) ? trigger.map((t) => text(t) ?? '') : undefined,
      choiceFilter: text(merged['choice_filter']),
      query: text(merged['query']),
      parameters: objectOrUndefined(merged['parameters']),
      itemset: itemsetName,
      listName: text(merged['list_name']),
      choices,
      osmTags:
        questionClass === 'osm'
          ? tags.filter(isObject).map((t) => ({
              name: text(t['name']) ?? '',
              label: t['label'],
              choices: Array.isArray(t['choices']) ? t['choices'].filter(isObject).map(makeOption) : undefined,
              data: t,
            }))
          : [],
      typeDefaultKeys,
      userValues,
    };
  }

  /** "begin loop over LIST": one group per choice, the template rows filled in with %(name)s / %(label)s. */
  private loop(data: JsonObject, parent: Section): SurveyElement[] {
    const loopSection = this.section({ ...data, type: 'group', children: [] }, 'group', parent);
    const columns = Array.isArray(data['columns']) ? data['columns'].filter(isObject) : [];
    const templates = Array.isArray(data['children']) ? data['children'].filter(isObject) : [];
    for (const column of columns) {
      if (column['name'] === 'none') continue;
      const group = this.section({ ...column, type: 'group' }, 'group', loopSection);
      group.children = [];
      for (const template of templates) {
        group.children.push(...this.element(substitute(template, column), group));
      }
      loopSection.children.push(group);
    }
    return loopSection.name !== '' ? [loopSection] : loopSection.children;
  }
}

function addNoneOption(data: JsonObject): void {
  const list = Array.isArray(data['choices']) ? data['choices'] : [];
  if (list.length === 0) throw new XlsFormError('There should be choices for this question.', { code: 'add_none_option' });
  if (!list.some((c) => isObject(c) && c['name'] === 'none' && c['label'] === 'None' && Object.keys(c).length === 2)) {
    list.push({ name: 'none', label: 'None' });
    const bind = objectOrUndefined(data['bind']) ?? {};
    data['bind'] = bind;
    const constraint = "(.='none' or not(selected(., 'none')))";
    bind['constraint'] = typeof bind['constraint'] === 'string' ? `${bind['constraint']} and ${constraint}` : constraint;
  }
}

/** Python %-formatting with named fields: "%(label)s" -> the column's label. */
function format(template: string, values: JsonObject): string {
  return template.replace(/%\((\w+)\)s/g, (_m, key: string) => {
    const v = values[key];
    return typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v);
  });
}

function substitute(template: JsonObject, column: JsonObject): JsonObject {
  const label = column['label'];
  const out: JsonObject = { ...template };
  for (const [key, value] of Object.entries(out)) {
    if (typeof value === 'string') out[key] = format(value, column);
    else if (isObject(value)) {
      const inner: JsonObject = { ...value };
      for (const [k2, v2] of Object.entries(inner)) {
        if (typeof v2 !== 'string') continue;
        const values = isObject(label) ? { name: column['name'] ?? '', label: label[k2] ?? '' } : column;
        inner[k2] = format(v2, values);
      }
      out[key] = inner;
    }
  }
  return out;
}
