// The form JSON onadata serves as form.json (pyxform's to_json_dict): each
// element's own fields, without empty values, type defaults or internals.
import { OPTION_JSON_KEYS, QUESTION_JSON_KEYS, SECTION_JSON_KEYS, SELECT_JSON_KEYS, SURVEY_JSON_KEYS } from '../spec/columns.ts';
import type { Json, JsonObject } from '../types.ts';
import { isEntityPart, type Itemset, type Option, type Question, type Section, type SurveyElement, type SurveyTree } from '../survey/tree.ts';

function isEmpty(value: Json | undefined): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value).length === 0;
  return false;
}

function pick(source: JsonObject, keys: ReadonlySet<string>, drop?: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const k in source) {
    if (!keys.has(k) || k.charCodeAt(0) === 95 || k === 'parent' || k === 'extra_data' || k === 'children' || k === 'choices') continue;
    if (drop !== undefined && drop.includes(k)) continue;
    const v = source[k];
    if (!isEmpty(v)) out[k] = v ?? null;
  }
  return out;
}

const GROUP_DROPPED = ['bind'];

function optionJson(option: Option): JsonObject {
  return pick(option.source, OPTION_JSON_KEYS);
}

// A list shared by many selects is serialised once and the result shared:
// a form JSON is written out, not edited.
const itemsetCache = new WeakMap<Itemset, JsonObject[]>();
function itemsetJson(itemset: Itemset): JsonObject[] {
  let json = itemsetCache.get(itemset);
  if (!json) {
    json = itemset.options.map(optionJson);
    itemsetCache.set(itemset, json);
  }
  return json;
}

function questionJson(q: Question): JsonObject {
  const keys = q.questionClass === 'select' || q.questionClass === 'range' || q.questionClass === 'geo' ? SELECT_JSON_KEYS : QUESTION_JSON_KEYS;
  const out = pick(q.data, keys, q.typeDefaultKeys);
  // A label invented for "label" appearances shows in the JSON too.
  if (q.label === ' ' && !('label' in out)) out['label'] = ' ';
  for (const [k, v] of Object.entries(q.userValues)) if (!isEmpty(v)) out[k] = v;
  if (q.choices) {
    const children = itemsetJson(q.choices);
    if (children.length > 0) out['children'] = children;
  }
  if (q.questionClass === 'osm' && q.osmTags.length > 0) {
    out['children'] = q.osmTags.map((t) => pick(t.data, new Set(['name', 'label'])));
  }
  if (q.trigger && q.trigger.length > 0) out['trigger'] = [...q.trigger];
  // search() selects lose their itemset while the XForm is written (their items go inline).
  if (q.itemset === '') delete out['itemset'];
  return out;
}

function sectionJson(section: Section): JsonObject {
  const keys = section.kind === 'entity' ? new Set(['name', 'label', 'type']) : SECTION_JSON_KEYS;
  const out = pick(section.data, keys, section.kind === 'group' ? GROUP_DROPPED : undefined);
  if (section.label === ' ' && !('label' in out)) out['label'] = ' ';
  out['type'] = section.kind;
  const children = section.children.map(elementJson).filter((c): c is JsonObject => c !== undefined);
  if (children.length > 0) out['children'] = children;
  return out;
}

function elementJson(e: SurveyElement): JsonObject | undefined {
  if (e.kind === 'question') return questionJson(e);
  if (e.kind === 'external') return pick(e.data, new Set(['name', 'label', 'type']));
  if (isEntityPart(e)) return pick(e.data, new Set(['name', 'type', 'value', 'bind', 'actions']));
  return sectionJson(e);
}

export function formJson(tree: SurveyTree, survey: JsonObject): JsonObject {
  const out = pick(survey, SURVEY_JSON_KEYS);
  out['type'] = 'survey';
  // Writing an entities form declares the entities namespace on the survey.
  if (survey['entity_version']) out['namespaces'] = `${typeof survey['namespaces'] === 'string' ? survey['namespaces'] : ''} entities=http://www.opendatakit.org/xforms/entities`;
  const children = tree.root.children.map(elementJson).filter((c): c is JsonObject => c !== undefined);
  if (children.length > 0) out['children'] = children;
  if (tree.choices.size > 0) {
    const choices: JsonObject = {};
    for (const [name, itemset] of tree.choices) choices[name] = itemsetJson(itemset);
    out['choices'] = choices;
  }
  const triggers = (map: Map<string, Array<[string, string]>>): JsonObject | undefined => {
    if (map.size === 0) return undefined;
    const o: JsonObject = {};
    for (const [k, v] of map) o[k] = v.map((pair) => [...pair]);
    return o;
  };
  const setvalues = triggers(tree.setvalueTriggers);
  if (setvalues) out['setvalues_by_triggering_ref'] = setvalues;
  const setgeopoints = triggers(tree.setgeopointTriggers);
  if (setgeopoints) out['setgeopoint_by_triggering_ref'] = setgeopoints;
  return out;
}
