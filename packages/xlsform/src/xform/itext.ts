// The <itext> block: translated labels, hints, messages and media, one
// <translation> per language, every text present in every language ("-" where
// a language lacks it).
import { XlsFormError } from '../errors.ts';
import { isObject } from '../parse/json-helpers.ts';
import type { Json, JsonObject } from '../types.ts';
import { descendants, isEntityPart, type Question, type Section, type SurveyTree, xpathOf } from '../survey/tree.ts';
import type { References } from './references.ts';
import { escapeAttr, escapeText, textLine, type XmlChild } from './xml.ts';

type Context = Question | Section | undefined;
interface Entry {
  text: string;
  context: Context;
}
/** form ("long", "guidance", "image", ...) -> content; "type" marks question/choice. */
type TextForms = Map<string, Entry | string>;
export type Translations = Map<string, Map<string, TextForms>>;

const MEDIA_TYPES = new Set(['image', 'big-image', 'audio', 'video']);
const SEARCH = /search\(.*?\)/;

function forms(translations: Translations, lang: string, path: string): TextForms {
  let language = translations.get(lang);
  if (!language) {
    language = new Map();
    translations.set(lang, language);
  }
  let entry = language.get(path);
  if (!entry) {
    entry = new Map();
    language.set(path, entry);
  }
  return entry;
}

function str(value: Json | undefined): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function hasRef(value: unknown): boolean {
  return typeof value === 'string' && /\$\{(last-saved#)?[A-Za-z_][^}]*\}/.test(value);
}

export function needsItextRef(e: Question | Section): boolean {
  return isObject(e.label ?? null) || (e.media !== undefined && Object.keys(e.media).length > 0);
}

type AddText = (lang: string, path: string, form: string, text: string, context: Context) => void;

/** Every translated text of an element: bind messages, label, hint and guidance hint. */
function elementTexts(e: Question | Section, defaultLanguage: string, add: AddText): void {
  const base = xpathOf(e);
  const bind = e.bind;
  if (bind) {
    for (const key of MESSAGE_KEYS) {
      const message = bind[key];
      if (message === undefined) continue;
      const path = `${base}:${key}`;
      if (isObject(message)) for (const lang in message) add(lang, path, 'long', str(message[lang]), e);
      else if (key !== 'jr:noAppErrorString' && typeof message === 'string' && message && hasRef(message)) {
        add(defaultLanguage, path, 'long', message, e);
      }
    }
  }
  const guidance = e.kind === 'question' ? e.guidanceHint : undefined;
  const guidanceIsText = guidance !== undefined && guidance !== null && !isObject(guidance) && str(guidance).length > 0;
  const hasGuidance = guidanceIsText || (isObject(guidance ?? null) && Object.keys(guidance ?? {}).length > 0);
  let label = e.label;
  if (!isObject(label ?? null) && label && needsItextRef(e)) label = { [defaultLanguage]: label };
  if (isObject(label ?? null) && isObject(label)) {
    const path = `${base}:label`;
    for (const lang in label) add(lang, path, 'long', str(label[lang]), e);
  }
  let hint = e.hint;
  if (!isObject(hint ?? null) && hint && str(hint).length > 0 && hasGuidance) hint = { [defaultLanguage]: hint };
  const hintPath = `${base}:hint`;
  if (isObject(hint ?? null) && isObject(hint)) for (const lang in hint) add(lang, hintPath, 'long', str(hint[lang]), e);
  let guidanceTexts = guidance;
  if (guidanceIsText && guidance !== undefined) guidanceTexts = { [defaultLanguage]: guidance };
  // Guidance hints are hint texts of form "guidance".
  if (isObject(guidanceTexts ?? null) && isObject(guidanceTexts)) {
    for (const lang in guidanceTexts) add(lang, hintPath, 'guidance', str(guidanceTexts[lang]), e);
  }
}

const MESSAGE_KEYS = ['jr:constraintMsg', 'jr:requiredMsg', 'jr:noAppErrorString'] as const;

/** Selects whose appearance uses search(): their items go inline, so their list gets no instance. */
function redirectSearch(q: Question, tree: SurveyTree): boolean {
  const appearance = q.control?.['appearance'];
  if (typeof appearance !== 'string' || appearance.length <= 7 || !SEARCH.test(appearance)) return false;
  const ext = /\.[^.]*$/.exec(q.itemset ?? '')?.[0];
  if (ext && ['.xml', '.csv', '.geojson'].includes(ext)) {
    throw new XlsFormError(
      `Question '${q.name}' is a select from file type, using 'search()'. This combination is not supported. Remove the 'search()' usage, or change the select type.`,
      { code: 'search_from_file', sheet: 'survey' },
    );
  }
  const choices = (q.itemset !== undefined ? tree.choices.get(q.itemset) : undefined) ?? q.choices;
  q.itemset = '';
  if (choices && !choices.usedBySearch) {
    choices.usedBySearch = true;
    choices.options.forEach((o, i) => (o.itextRef = `jr:itext('${choices.name}-${i}')`));
  }
  if (choices) q.choices = choices;
  return true;
}

export function collectTranslations(tree: SurveyTree, defaultLanguage: string): Translations {
  const translations: Translations = new Map();
  for (const [name, itemset] of tree.choices) {
    if (!itemset.requiresItext) continue;
    itemset.options.forEach((option, idx) => {
      const id = `${name}-${idx}`;
      const label = option.label;
      if (label !== undefined && label !== null && label !== '') {
        if (isObject(label)) {
          for (const [lang, value] of Object.entries(label)) {
            if (isObject(value)) for (const [language, v] of Object.entries(value)) setChoice(translations, language, id, lang, str(v));
            else setChoice(translations, lang, id, 'long', str(value));
          }
        } else setChoice(translations, defaultLanguage, id, 'long', str(label));
      }
      for (const [media, value] of Object.entries(option.media ?? {})) {
        if (isObject(value)) for (const [language, v] of Object.entries(value)) setChoice(translations, language, id, media, str(v));
        else setChoice(translations, defaultLanguage, id, media, str(value));
      }
    });
  }
  const searchLists: Array<[string, string | undefined]> = [];
  const otherLists: Array<[string, string | undefined]> = [];
  const add: AddText = (lang, path, form, text, context) => {
    const entry = forms(translations, lang, path);
    entry.set(form, { text, context });
    entry.set('type', 'question');
  };
  for (const e of descendants(tree.root)) {
    if (e.kind === 'external' || isEntityPart(e)) continue;
    if (e.kind === 'question' && e.questionClass === 'select') {
      (redirectSearch(e, tree) ? searchLists : otherLists).push([e.name, e.listName]);
    }
    elementTexts(e, defaultLanguage, add);
  }
  for (const [question, list] of searchLists) {
    const others = otherLists.filter(([, l]) => l === list).map(([q]) => `'${q}'`);
    if (others.length > 0) {
      throw new XlsFormError(
        `Question '${question}' uses 'search()', and its select type references the choice list name '${list ?? ''}'. This choice list name is referenced by at least one other question that is not using 'search()', which will not work: ${others.join(', ')}. Either 1) use 'search()' for all questions using this choice list name, or 2) use a different choice list name for the question using 'search()'.`,
        { code: 'search_shared_list', sheet: 'survey' },
      );
    }
  }
  addMedia(tree, translations, defaultLanguage);
  fillMissing(translations);
  return translations;
}

function setChoice(translations: Translations, lang: string, id: string, form: string, value: string): void {
  const entry = forms(translations, lang, id);
  entry.set(form, value);
  entry.set('type', 'choice');
}

function addMedia(tree: SurveyTree, translations: Translations, defaultLanguage: string): void {
  for (const e of descendants(tree.root)) {
    if (e.kind === 'external' || isEntityPart(e)) continue;
    if (!e.media || Object.keys(e.media).length === 0) continue;
    let media: JsonObject = e.media;
    const nestedDefault = media['default'];
    if (isObject(nestedDefault)) media = nestedDefault;
    const key = `${xpathOf(e)}:label`;
    for (const [type, value] of Object.entries(media)) {
      if (!MEDIA_TYPES.has(type)) throw new XlsFormError(`Media type: ${type} not supported`, { code: 'media_type', sheet: 'survey' });
      const localized = isObject(value) ? value : { [defaultLanguage]: value };
      for (const [lang, file] of Object.entries(localized)) forms(translations, lang, key).set(type, str(file));
    }
  }
}

function fillMissing(translations: Translations): void {
  // Union of forms per path (at most a handful each, so arrays beat sets).
  const all = new Map<string, string[]>();
  for (const language of translations.values()) {
    for (const [path, content] of language) {
      const union = all.get(path);
      if (!union) all.set(path, [...content.keys()]);
      else for (const form of content.keys()) if (!union.includes(form)) union.push(form);
    }
  }
  for (const language of translations.values()) {
    for (const [path, union] of all) {
      let content = language.get(path);
      if (!content) {
        content = new Map();
        language.set(path, content);
      } else if (content.size === union.length) continue; // already complete
      for (const form of union) if (!content.has(form)) content.set(form, '-');
    }
  }
}

/** The <itext> block, rendered straight to text (it is most of a big form's XForm). */
export function itextElement(translations: Translations, defaultLanguage: string, refs: References, indent: string): XmlChild {
  const i1 = `${indent}  `;
  const i2 = `${i1}  `;
  const i3 = `${i2}  `;
  let out = `${indent}<itext>\n`;
  for (const [lang, texts] of translations) {
    const open = `${i1}<translation lang="${escapeAttr(lang)}"${lang === defaultLanguage ? ' default="true()"' : ''}`;
    if (texts.size === 0) {
      out += `${open}/>\n`;
      continue;
    }
    out += `${open}>\n`;
    for (const [path, content] of texts) {
      const colon = path.indexOf(':');
      const kind = colon >= 0 ? path.slice(colon + 1) : '';
      let values = '';
      for (const [form, entry] of content) {
        if (form === 'type') continue;
        const raw = typeof entry === 'string' ? entry : entry.text;
        const context = typeof entry === 'string' ? undefined : entry.context;
        let prefix = '';
        let formAttr = '';
        if (kind === 'hint') formAttr = form === 'guidance' ? ' form="guidance"' : '';
        else if (form !== 'long') {
          if (raw === '-') continue;
          prefix = form === 'image' || form === 'big-image' ? 'jr://images/' : `jr://${form}/`;
          formAttr = ` form="${escapeAttr(form)}"`;
        }
        const outputs = refs.insertOutputs(raw, context);
        values += textLine(i3, 'value', formAttr, outputs !== undefined ? { raw: escapeText(prefix) + outputs } : { text: prefix + raw });
      }
      const id = ` id="${escapeAttr(path)}"`;
      out += values === '' ? `${i2}<text${id}/>\n` : `${i2}<text${id}>\n${values}${i2}</text>\n`;
    }
    out += `${i1}</translation>\n`;
  }
  out += `${indent}</itext>\n`;
  return { block: out };
}
