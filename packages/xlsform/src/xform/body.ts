// Model binds and actions, and the <h:body> controls.
import { XlsFormError } from '../errors.ts';
import { defaultIsDynamic } from '../parse/expression.ts';
import { isObject, pyRepr } from '../parse/json-helpers.ts';
import { BINDING_CONVERSIONS, CONVERTIBLE_BIND_ATTRIBUTES } from '../spec/aliases.ts';
import type { Json } from '../types.ts';
import { descendants, isSection, type EntityPart, type Question, type Section, type SurveyElement, type SurveyTree, xpathOf } from '../survey/tree.ts';
import { needsItextRef } from './itext.ts';
import type { References } from './references.ts';
import type { XmlOut } from './out.ts';
import { el, emptyElementLine, escapeAttr, setAttr, type XmlChild, type XmlElement } from './xml.ts';

/** A value as Python's str() prints it (dicts from nested columns included). */
function str(value: Json | undefined): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? pyRepr(value) : String(value);
}

function hasRef(value: unknown): boolean {
  return typeof value === 'string' && /\$\{(last-saved#)?[A-Za-z_][^}]*\}/.test(value);
}

export class BodyWriter {
  constructor(
    private readonly tree: SurveyTree,
    private readonly refs: References,
  ) {}

  // ---- model ----

  /** The element's <bind/> as one line of text, or '' when it has none. */
  private bind(e: Question | Section | EntityPart, indent: string): string {
    if (!e.bind || (isSection(e) && e.flat)) return '';
    const path = xpathOf(e);
    let line = `${indent}<bind nodeset="${escapeAttr(path)}"`;
    const bind = e.bind;
    for (const key in bind) {
      const raw = bind[key];
      if (key === 'calculate' && e.kind === 'question' && e.trigger && e.trigger.length > 0) continue;
      let value: string;
      if (CONVERTIBLE_BIND_ATTRIBUTES.has(key) && typeof raw === 'string' && raw in BINDING_CONVERSIONS) value = BINDING_CONVERSIONS[raw] ?? raw;
      else if ((key === 'jr:constraintMsg' || key === 'jr:requiredMsg') && (isObject(raw) || hasRef(raw))) value = `jr:itext('${path}:${key}')`;
      else if (key === 'jr:noAppErrorString' && isObject(raw)) value = `jr:itext('${path}:${key}')`;
      else value = str(raw);
      line += ` ${key}="${escapeAttr(this.refs.insertXpaths(value, e))}"`;
    }
    return `${line}/>\n`;
  }

  actions(q: Question | EntityPart, inRepeat: boolean): XmlElement[] {
    const out: XmlElement[] = [];
    for (const action of q.actions) {
      const event = str(action['event']);
      if ((!inRepeat && event === 'odk-new-repeat') || (inRepeat && event !== 'odk-new-repeat')) continue;
      let value: string | undefined;
      const fallback = typeof action['value'] === 'string' ? action['value'] : undefined;
      if (q.kind !== 'question') value = fallback;
      else if (q.dynamicDefault || (q.defaultValue && defaultIsDynamic(q.defaultValue, q.type))) value = this.refs.insertXpaths(q.defaultValue ?? '', q);
      else if (q.defaultValue) value = q.defaultValue;
      else value = fallback;
      const name = str(action['name']);
      const node = el(name, { ref: xpathOf(q), event });
      if (name === 'setvalue' && value) setAttr(node, 'value', value);
      if (name === 'odk:recordaudio' && typeof action['odk:quality'] === 'string') setAttr(node, 'odk:quality', action['odk:quality']);
      out.push(node);
    }
    return out;
  }

  /** Every bind and model-level action, in document order. */
  writeModelBindings(indent: string, out: XmlOut): void {
    for (const e of descendants(this.tree.root)) {
      if (e.kind === 'external') continue;
      const bind = this.bind(e, indent);
      if (bind !== '') out.add(bind);
      if (e.kind === 'question' || e.kind === 'attribute') for (const action of this.actions(e, false)) out.add(emptyElementLine(indent, action));
    }
  }

  // ---- body ----

  private label(e: Question | Section): XmlElement {
    if (needsItextRef(e)) return el('label', { ref: `jr:itext('${xpathOf(e)}:label')` });
    if (e.label) return this.textElement('label', str(e.label), e);
    return el('label');
  }

  private textElement(tag: string, text: string, context: SurveyElement | undefined): XmlElement {
    const outputs = this.refs.insertOutputs(text, context);
    return el(tag, {}, [outputs !== undefined ? { raw: outputs } : { text }]);
  }

  private hint(q: Question | Section): XmlElement {
    const guidance = q.kind === 'question' ? q.guidanceHint : undefined;
    if (isObject(q.hint ?? null) || guidance) return el('hint', { ref: `jr:itext('${xpathOf(q)}:hint')` });
    if (q.hint) return this.textElement('hint', str(q.hint), q);
    return el('hint');
  }

  private labelAndHint(q: Question | Section): XmlElement[] {
    const result: XmlElement[] = [];
    const media = truthy(q.mediaValue) ? q.mediaValue : undefined;
    const guidance = q.kind === 'question' ? q.guidanceHint : undefined;
    let labelled = false;
    if (q.label || media) {
      result.push(this.label(q));
      labelled = true;
    }
    if (q.hint || guidance) {
      if (!labelled) result.push(this.label(q));
      result.push(this.hint(q));
    }
    const message = `The survey element named '${q.name}' has no label or hint.`;
    if (result.length === 0) throw new XlsFormError(message, { code: 'missing_label', sheet: 'survey', column: 'label' });
    if (!q.label && !media && !q.hint && guidance) throw new XlsFormError(message, { code: 'missing_label', sheet: 'survey', column: 'label' });
    if (media !== undefined && !contains(media, 'image') && contains(media, 'big-image')) {
      throw new XlsFormError(`To use big-image, you must also specify an image for the survey element named ${q.name}.`, {
        code: 'big_image',
        sheet: 'survey',
        column: 'media::big-image',
      });
    }
    return result;
  }

  private baseControl(q: Question): XmlElement {
    const control = q.control ?? {};
    const node = el(str(control['tag']), { ref: xpathOf(q) }, this.labelAndHint(q));
    for (const [k, v] of Object.entries(control)) if (k !== 'tag') setAttr(node, k, this.refs.insertXpaths(str(v), q));
    return node;
  }

  private itemset(q: Question): XmlElement {
    const itemset = q.itemset ?? '';
    const ext = /\.[^.]*$/.exec(itemset)?.[0] ?? '';
    let valueRef = 'name';
    let labelRef = 'label';
    let nodeset: string;
    let filter: string | undefined;
    const fromFile = q.questionClass === 'select' || q.questionClass === 'geo' ? ['.xml', '.csv', '.geojson'].includes(ext) : false;
    const isRef = /^.*\$\{[^}]+\}.*$/.test(itemset) && hasRef(itemset);
    if (fromFile) {
      if (ext === '.geojson') {
        valueRef = 'id';
        labelRef = 'title';
      }
      valueRef = str(q.parameters?.['value'] ?? valueRef);
      labelRef = str(q.parameters?.['label'] ?? labelRef);
      nodeset = `instance('${itemset.slice(0, -ext.length)}')/root/item`;
    } else if (isRef && q.questionClass === 'geo') {
      nodeset = this.refs.insertXpaths(itemset, q, false, true).trim();
      valueRef = 'geometry';
      labelRef = 'geometry';
      filter = "./geometry != ''";
    } else if (isRef) {
      const path = this.refs.insertXpaths(itemset, q, false, true).trim().split('/');
      const last = path[path.length - 1] ?? '';
      valueRef = last;
      labelRef = last;
      nodeset = path.slice(0, -1).join('/');
      filter = `./${last} != ''`;
    } else {
      if (q.choices?.requiresItext) labelRef = 'jr:itext(itextId)';
      nodeset = `instance('${itemset}')/root/item`;
    }
    if (q.choiceFilter) {
      let choiceFilter = this.refs.insertXpaths(q.choiceFilter, q, true, isRef);
      if (isRef) choiceFilter = choiceFilter.replaceAll(`current()/${nodeset}`, '.').replaceAll(nodeset, '.');
      filter = choiceFilter;
    }
    if (filter) nodeset += `[${filter}]`;
    const params = q.parameters;
    if (params && params['randomize'] === 'true') {
      if ('seed' in params) nodeset = `randomize(${nodeset}, ${this.refs.insertXpaths(str(params['seed']), q).trim()})`;
      else nodeset = `randomize(${nodeset})`;
    }
    return el('itemset', { nodeset }, [el('value', { ref: valueRef }), el('label', { ref: labelRef })]);
  }

  private questionControl(q: Question): XmlElement | undefined {
    const hasCalculate = q.bind !== undefined && 'calculate' in q.bind;
    if (q.type === 'calculate' || ((hasCalculate || (q.trigger && q.trigger.length > 0)) && !(q.label || q.hint))) {
      const nested = this.tree.setvalueTriggers.get(q.name);
      const first = nested?.[0];
      if (first) {
        throw new XlsFormError(
          `The question \${${q.name}} is not user-visible so it can't be used as a calculation trigger for question \${${first[0]}}.`,
          { code: 'invisible_trigger', sheet: 'survey', column: 'trigger' },
        );
      }
      return undefined;
    }
    let node: XmlElement | undefined;
    switch (q.questionClass) {
      case 'plain':
        return undefined;
      case 'input': {
        node = this.baseControl(q);
        if (q.query) {
          const predicate = q.choiceFilter ? `[${this.refs.insertXpaths(q.choiceFilter, q, true)}]` : '';
          setAttr(node, 'query', `instance('${q.query}')/root/item${predicate}`);
        }
        break;
      }
      case 'select':
        node = this.selectControl(q);
        break;
      case 'osm':
        node = this.baseControl(q);
        for (const tag of q.osmTags) {
          const label = tag.label ? this.textElement('label', str(tag.label), undefined) : el('label');
          node.children.push(el('tag', { key: tag.name }, [label]));
        }
        break;
      case 'range':
        node = this.baseControl(q);
        if (q.itemset) {
          const labelRef = q.choices?.requiresItext ? 'jr:itext(itextId)' : 'label';
          node.children.push(el('itemset', { nodeset: `instance('${q.itemset}')/root/item` }, [el('value', { ref: 'name' }), el('label', { ref: labelRef })]));
        }
        break;
      case 'geo':
        node = this.baseControl(q);
        if (q.itemset) node.children.push(this.itemset(q));
        break;
      default:
        node = this.baseControl(q);
    }
    for (const [target, value] of this.tree.setvalueTriggers.get(q.name) ?? []) {
      const action = el('setvalue', { ref: xpathOf(this.refs.element(target)), event: 'xforms-value-changed' });
      const v = this.refs.insertXpaths(value, q);
      if (v) setAttr(action, 'value', v);
      node.children.push(action);
    }
    for (const [target] of this.tree.setgeopointTriggers.get(q.name) ?? []) {
      node.children.push(el('odk:setgeopoint', { ref: xpathOf(this.refs.element(target)), event: 'xforms-value-changed' }));
    }
    return node;
  }

  private selectControl(q: Question): XmlElement {
    const type = q.bind?.['type'];
    if (type !== 'string' && type !== 'odk:rank') throw new XlsFormError('Invalid value for `self.bind["type"]`.', { code: 'internal' });
    const node = this.baseControl(q);
    const choices = (q.itemset ? this.tree.choices.get(q.itemset) : undefined) ?? q.choices;
    if (q.itemset) node.children.push(this.itemset(q));
    else if (choices && choices.usedBySearch) {
      for (const option of choices.options) {
        let label: XmlElement;
        if (choices.requiresItext) label = el('label', { ref: option.itextRef ?? '' });
        else if (q.label) label = this.textElement('label', str(option.label), undefined);
        else label = el('label');
        node.children.push(el('item', {}, [label, el('value', {}, [{ text: option.name }])]));
      }
    }
    return node;
  }

  private sectionControl(section: Section): XmlElement | undefined {
    if (section.kind === 'repeat') return this.repeatControl(section);
    if (section.control?.['bodyless']) return undefined;
    const attrs: Array<[string, string]> = [];
    for (const [k, v] of Object.entries(section.control ?? {})) attrs.push([k, k === 'appearance' ? str(v) : this.refs.insertXpaths(str(v), section)]);
    const node: XmlElement = { tag: 'group', attrs, children: [] };
    if (!section.flat) setAttr(node, 'ref', xpathOf(section));
    if (section.label) node.children.push(this.label(section));
    node.children.push(...this.children(section));
    return node;
  }

  private repeatControl(section: Section): XmlElement {
    const path = xpathOf(section);
    const repeat = el('repeat', { nodeset: path });
    for (const [k, v] of Object.entries(section.control ?? {})) setAttr(repeat, k, this.refs.insertXpaths(str(v), section));
    repeat.children.push(...this.children(section));
    for (const e of descendants(section)) {
      if (e.kind !== 'question' && e.kind !== 'attribute') continue;
      if (e.parent === section || nearestRepeat(e) === section) repeat.children.push(...this.actions(e, true));
    }
    const group = el('group', { ref: path });
    // pyxform always writes the repeat's label (an empty <label/> when it has none).
    group.children.push(this.label(section), repeat);
    return group;
  }

  children(section: Section): XmlChild[] {
    const out: XmlChild[] = [];
    for (const child of section.children) {
      let node: XmlElement | undefined;
      if (child.kind === 'question') node = this.questionControl(child);
      else if (isSection(child)) node = this.sectionControl(child);
      if (node) out.push(node);
    }
    return out;
  }
}

function nearestRepeat(e: SurveyElement): Section | undefined {
  for (let p = e.parent; p; p = p.parent) if (p.kind === 'repeat') return p;
  return undefined;
}

function truthy(value: Json | undefined): boolean {
  if (value === undefined || value === null || value === '' || value === false || value === 0) return false;
  if (Array.isArray(value)) return value.length > 0;
  return typeof value !== 'object' || Object.keys(value).length > 0;
}

/** Python's `key in value` for a dict (keys) or a string (substring). */
function contains(value: Json, key: string): boolean {
  if (typeof value === 'string') return value.includes(key);
  if (isObject(value)) return key in value;
  return false;
}
