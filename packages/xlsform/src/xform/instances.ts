// The primary instance (with repeat templates) and the secondary instances:
// choice lists, external files, pulldata() CSVs and the last-saved instance.
import { XlsFormError } from '../errors.ts';
import { defaultIsDynamic, hasLastSavedReference } from '../parse/expression.ts';
import { isObject } from '../parse/json-helpers.ts';
import type { Json, JsonObject } from '../types.ts';
import { descendants, isEntityPart, isSection, type Itemset, type Option, type Question, type Section, type SurveyElement, type SurveyTree } from '../survey/tree.ts';
import type { References } from './references.ts';
import type { XmlOut } from './out.ts';
import { el, escapeAttr, escapeText, setAttr, type XmlChild, type XmlElement } from './xml.ts';

function str(value: Json | undefined): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function questionInstance(q: Question, refs: References): XmlElement {
  const node = el(q.name);
  if (q.defaultValue && !defaultIsDynamic(q.defaultValue, q.type)) node.children.push({ text: q.defaultValue });
  for (const [k, v] of Object.entries(q.instance ?? {})) setAttr(node, k, refs.insertXpaths(str(v), q));
  return node;
}

/** Appends `child`'s instance node to `node` (entity attributes become attributes of `node`). */
function appendChild(node: XmlElement, child: SurveyElement, refs: References, appendTemplate: boolean): void {
  switch (child.kind) {
    case 'external':
      return;
    case 'attribute':
      setAttr(node, child.name, child.value);
      return;
    case 'entity-label':
      node.children.push(el(child.name));
      return;
    case 'question':
      node.children.push(questionInstance(child, refs));
      return;
    default:
      node.children.push(sectionInstance(child, refs, appendTemplate));
  }
}

function sectionInstance(section: Section, refs: References, appendTemplateIn: boolean): XmlElement {
  let appendTemplate = appendTemplateIn;
  const node = el(section.name);
  for (const [k, v] of Object.entries(section.instance ?? {})) setAttr(node, k, refs.insertXpaths(str(v), section));
  for (const child of section.children) {
    let template: XmlElement | undefined;
    if (isSection(child) && child.flat) {
      node.children.push(...flatInstances(child, refs));
      continue;
    }
    if (child.kind === 'repeat' && !appendTemplate) {
      appendTemplate = true;
      template = repeatTemplate(child, refs);
    }
    appendChild(node, child, refs, appendTemplate);
    if (appendTemplate && template) {
      appendTemplate = false;
      node.children.splice(node.children.length - 1, 0, template);
    }
  }
  return node;
}

function flatInstances(section: Section, refs: References): XmlElement[] {
  const holder = el(section.name);
  for (const child of section.children) {
    if (isSection(child) && child.flat) holder.children.push(...flatInstances(child, refs));
    else appendChild(holder, child, refs, false);
  }
  return holder.children.filter((c): c is XmlElement => 'tag' in c);
}

function repeatTemplate(section: Section, refs: References): XmlElement {
  const node = el(section.name, { 'jr:template': '' });
  for (const child of section.children) {
    if (child.kind === 'repeat') node.children.push(repeatTemplate(child, refs));
    else appendChild(node, child, refs, false);
  }
  return node;
}

export function primaryInstance(tree: SurveyTree, refs: References, survey: JsonObject): XmlElement {
  const root = sectionInstance(tree.root, refs, false);
  const attribute = survey['attribute'];
  if (isObject(attribute)) for (const [k, v] of Object.entries(attribute)) setAttr(root, k, str(v));
  setAttr(root, 'id', str(survey['id_string']));
  const optional: Array<[string, string]> = [
    ['instance_xmlns', 'xmlns'],
    ['version', 'version'],
    ['prefix', 'odk:prefix'],
    ['delimiter', 'odk:delimiter'],
  ];
  for (const [key, attr] of optional) {
    const value = survey[key];
    if (value !== undefined && value !== null && value !== '' && value !== false) setAttr(root, attr, str(value));
  }
  return root;
}

interface InstanceInfo {
  type: string;
  context: string | undefined;
  name: string;
  src: string | undefined;
  node: XmlChild;
}

const PULLDATA = /(pulldata\s*\(\s*)(.*?),/g;
const FILE_EXTENSIONS = new Set(['.xml', '.csv', '.geojson']);
const EXPRESSION_BINDS = ['calculate', 'constraint', 'readonly', 'required', 'relevant'];

function pulldataInstances(e: Question | Section): InstanceInfo[] {
  const usages: string[] = [];
  for (const key of EXPRESSION_BINDS) {
    const v = e.bind?.[key];
    if (v !== undefined && str(v).includes('pulldata(')) usages.push(str(v));
  }
  if (e.kind === 'question') {
    if (e.choiceFilter?.includes('pulldata(')) usages.push(e.choiceFilter);
    if (e.defaultValue?.includes('pulldata(')) usages.push(e.defaultValue);
  }
  const out: InstanceInfo[] = [];
  for (const usage of usages) {
    for (const m of usage.matchAll(PULLDATA)) {
      const id = (m[2] ?? '').replaceAll("'", '').replaceAll('"', '').trim();
      const src = `jr://file-csv/${id}.csv`;
      out.push({ type: 'pulldata', context: contextOf(e), name: id, src, node: el('instance', { id, src }) });
    }
  }
  return out;
}

function contextOf(e: Question | Section): string {
  return `[type: ${e.parent?.kind ?? ''}, name: ${e.parent?.name ?? ''}]`;
}

function lastSavedNeeded(q: Question): boolean {
  if (q.defaultValue && hasLastSavedReference(q.defaultValue)) return true;
  if (q.choiceFilter && hasLastSavedReference(q.choiceFilter)) return true;
  const bind = q.bind;
  if (bind === undefined) return false;
  for (const key of EXPRESSION_BINDS) {
    const v = bind[key];
    if (typeof v === 'string' && hasLastSavedReference(v)) return true;
  }
  return false;
}

/** A choice list's instance, written straight out as text (big forms have thousands of items). */
function staticInstance(name: string, itemset: Itemset, indent: string): XmlChild {
  const i1 = `${indent}  `;
  const i2 = `${i1}  `;
  const i3 = `${i2}  `;
  const field = (tag: string, value: string): string => (value === '' ? `${i3}<${tag}/>\n` : `${i3}<${tag}>${escapeText(value)}</${tag}>\n`);
  const block = (out: XmlOut): void => {
    out.add(`${indent}<instance id="${escapeAttr(name)}">\n`);
    const options = itemset.options;
    if (options.length === 0) out.add(`${i1}<root/>\n`);
    else {
      out.add(`${i1}<root>\n`);
      for (let idx = 0; idx < options.length; idx++) {
        const option = options[idx] as Option;
        let fields = '';
        if (itemset.requiresItext) fields += field('itextId', `${name}-${idx}`);
        fields += field('name', option.name);
        if (!itemset.requiresItext && typeof option.label === 'string') fields += field('label', option.label);
        for (const [k, v] of option.extra) fields += field(k, str(v));
        if (option.smsOption) fields += field('sms_option', option.smsOption);
        out.add(fields === '' ? `${i2}<item/>\n` : `${i2}<item>\n${fields}${i2}</item>\n`);
      }
      out.add(`${i1}</root>\n`);
    }
    out.add(`${indent}</instance>\n`);
  };
  return { block };
}

export function secondaryInstances(tree: SurveyTree): XmlChild[] {
  const found: InstanceInfo[] = [];
  let lastSaved = false;
  for (const e of descendants(tree.root)) {
    if (e.kind === 'external') {
      const extension = e.type.split('-')[0] ?? '';
      const src = `jr://${extension === 'csv' ? 'file-csv' : 'file'}/${e.name}.${extension}`;
      found.push({ type: 'external', context: `[type: ${e.parent?.kind ?? ''}, name: ${e.parent?.name ?? ''}]`, name: e.name, src, node: el('instance', { id: e.name, src }) });
      continue;
    }
    if (isEntityPart(e)) continue;
    found.push(...pulldataInstances(e));
    if (e.kind !== 'question') continue;
    if (e.questionClass === 'select' && e.itemset) {
      const ext = /\.[^.]*$/.exec(e.itemset)?.[0] ?? '';
      if (FILE_EXTENSIONS.has(ext)) {
        const id = e.itemset.slice(0, -ext.length);
        const scheme = ext === '.xml' || ext === '.geojson' ? 'file' : `file-${ext.slice(1)}`;
        const src = `jr://${scheme}/${e.itemset}`;
        found.push({ type: 'file', context: contextOf(e), name: id, src, node: el('instance', { id, src }) });
      }
    }
    if (!lastSaved) lastSaved = lastSavedNeeded(e);
  }
  if (lastSaved) {
    const src = 'jr://instance/last-saved';
    found.push({ type: 'instance', context: undefined, name: '__last-saved', src, node: el('instance', { id: '__last-saved', src }) });
  }
  for (const [name, itemset] of tree.choices) {
    if (!itemset.usedBySearch) found.push({ type: 'choice', context: 'survey', name, src: undefined, node: staticInstance(name, itemset, '      ') });
  }
  const externals = new Map<string, InstanceInfo[]>();
  for (const i of found) if (i.type === 'external') externals.set(i.name, [...(externals.get(i.name) ?? []), i]);
  const errors: string[] = [];
  for (const [name, copies] of externals) {
    if (copies.length > 1) {
      errors.push(
        `Instance names must be unique within a form. The name '${name}' was found ${copies.length} time(s), under these contexts: ${copies.map((c) => `${c.context ?? ''}(${c.type})`).join(', ')}`,
      );
    }
  }
  if (errors.length > 0) throw new XlsFormError(errors.join('\n'), { code: 'duplicate_instance', sheet: 'survey' });
  const seen = new Map<string, InstanceInfo>();
  const out: XmlChild[] = [];
  for (const i of found) {
    const prior = seen.get(i.name);
    if (prior) {
      if (prior.src !== i.src) {
        throw new XlsFormError(
          `The same instance id will be generated for different external instance source URIs. Please check the form. Instance name: '${i.name}', Existing type: '${prior.type}', Existing URI: '${prior.src ?? 'None'}', Duplicate type: '${i.type}', Duplicate URI: '${i.src ?? 'None'}', Duplicate context: '${i.context ?? 'None'}'.`,
          { code: 'duplicate_instance', sheet: 'survey' },
        );
      }
      continue;
    }
    out.push(i.node);
    seen.set(i.name, i);
  }
  return out;
}
