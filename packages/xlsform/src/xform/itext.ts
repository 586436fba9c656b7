// The <itext> block: translated labels, hints, messages and media, one
// <translation> per language, every text present in every language ("-" where
// a language lacks it).
import { XlsFormError } from '../errors.ts';
import { isObject } from '../parse/json-helpers.ts';
import type { Json, JsonObject } from '../types.ts';
import { descendants, isEntityPart, type Question, type Section, type SurveyTree, xpathOf } from '../survey/tree.ts';
import type { References } from './references.ts';
import type { XmlOut } from './out.ts';
import { escapeAttr, escapeText, textLine } from './xml.ts';

type Context = Question | Section | undefined;

/**
 * One language's form ("long", "guidance", "image", ...) of one text: its text, and the element
 * whose references it may hold (undefined for choices and media).
 */
interface TextValue {
  lang: string;
  form: string;
  text: string;
  context: Context;
}

/**
 * One itext id: the union of its forms over all languages, and every language's values in the
 * order each (language, form) was first set (one small list, scanned: a text has a handful).
 */
interface PathTexts {
  forms: string[];
  values: TextValue[];
  /** The id escaped for its attribute, once written. */
  id: string | undefined;
}

/**
 * All translated texts. Small arrays rather than maps inside each text: a text
 * has a handful of forms and a form has a handful of languages.
 */
export interface Translations {
  /** Languages in order of first use. */
  languages: string[];
  /** Each language's itext ids in the order it received them. */
  pathsByLanguage: Map<string, string[]>;
  /** Every itext id in order of first use. */
  paths: Map<string, PathTexts>;
}

function hasLanguage(texts: PathTexts, lang: string): boolean {
  const values = texts.values;
  for (let i = 0; i < values.length; i++) if ((values[i] as TextValue).lang === lang) return true;
  return false;
}

/** Records that `lang` has a text for `path` (the order of its own texts). */
function addOwn(translations: Translations, lang: string, path: string): void {
  let own = translations.pathsByLanguage.get(lang);
  if (own === undefined) {
    own = [];
    translations.pathsByLanguage.set(lang, own);
    translations.languages.push(lang);
  }
  own.push(path);
}

function setText(translations: Translations, lang: string, path: string, form: string, text: string, context: Context): void {
  const texts = translations.paths.get(path);
  if (texts === undefined) {
    translations.paths.set(path, { forms: [form], values: [{ lang, form, text, context }], id: undefined });
    addOwn(translations, lang, path);
    return;
  }
  const values = texts.values;
  let languageSeen = false;
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as TextValue;
    if (value.lang !== lang) continue;
    if (value.form === form) {
      value.text = text;
      value.context = context;
      return;
    }
    languageSeen = true;
  }
  values.push({ lang, form, text, context });
  if (!languageSeen) addOwn(translations, lang, path);
  if (texts.forms.indexOf(form) < 0) texts.forms.push(form);
}

const MEDIA_TYPES = new Set(['image', 'big-image', 'audio', 'video']);
const SEARCH = /search\(.*?\)/;

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

/** Every translated text of an element: bind messages, label, hint and guidance hint. */
function elementTexts(translations: Translations, e: Question | Section, defaultLanguage: string): void {
  const base = xpathOf(e);
  const bind = e.bind;
  if (bind) {
    for (const key of MESSAGE_KEYS) {
      const message = bind[key];
      if (message === undefined) continue;
      const path = `${base}:${key}`;
      if (isObject(message)) for (const lang in message) setText(translations, lang, path, 'long', str(message[lang]), e);
      else if (key !== 'jr:noAppErrorString' && typeof message === 'string' && message && hasRef(message)) {
        setText(translations, defaultLanguage, path, 'long', message, e);
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
    for (const lang in label) setText(translations, lang, path, 'long', str(label[lang]), e);
  }
  let hint = e.hint;
  if (!isObject(hint ?? null) && hint && str(hint).length > 0 && hasGuidance) hint = { [defaultLanguage]: hint };
  const hintPath = `${base}:hint`;
  if (isObject(hint ?? null) && isObject(hint)) for (const lang in hint) setText(translations, lang, hintPath, 'long', str(hint[lang]), e);
  let guidanceTexts = guidance;
  if (guidanceIsText && guidance !== undefined) guidanceTexts = { [defaultLanguage]: guidance };
  // Guidance hints are hint texts of form "guidance".
  if (isObject(guidanceTexts ?? null) && isObject(guidanceTexts)) {
    for (const lang in guidanceTexts) setText(translations, lang, hintPath, 'guidance', str(guidanceTexts[lang]), e);
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
  const translations: Translations = { languages: [], pathsByLanguage: new Map(), paths: new Map() };
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
  for (const e of descendants(tree.root)) {
    if (e.kind === 'external' || isEntityPart(e)) continue;
    if (e.kind === 'question' && e.questionClass === 'select') {
      (redirectSearch(e, tree) ? searchLists : otherLists).push([e.name, e.listName]);
    }
    elementTexts(translations, e, defaultLanguage);
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
  return translations;
}

function setChoice(translations: Translations, lang: string, id: string, form: string, value: string): void {
  setText(translations, lang, id, form, value, undefined);
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
      for (const [lang, file] of Object.entries(localized)) setText(translations, lang, key, type, str(file), undefined);
    }
  }
}

/** One <value> line; '' for media a language lacks. */
function valueLine(refs: References, indent: string, isHint: boolean, form: string, text: string, context: Context): string {
  let prefix = '';
  let formAttr = '';
  if (isHint) formAttr = form === 'guidance' ? ' form="guidance"' : '';
  else if (form !== 'long') {
    if (text === '-') return '';
    prefix = form === 'image' || form === 'big-image' ? 'jr://images/' : `jr://${form}/`;
    formAttr = ` form="${escapeAttr(form)}"`;
  }
  const escaped = escapeText(text);
  const outputs = refs.insertOutputsEscaped(escaped, context);
  if (outputs !== undefined) return textLine(indent, 'value', formAttr, { raw: escapeText(prefix) + outputs });
  return `${indent}<value${formAttr}>${prefix === '' ? escaped : escapeText(prefix) + escaped}</value>\n`;
}

/** One <text> of one language, with "-" for the forms that language lacks. */
function writeText(out: XmlOut, refs: References, lang: string, path: string, texts: PathTexts, indent: string, valueIndent: string): void {
  const colon = path.indexOf(':');
  const isHint = colon >= 0 && path.length - colon === 5 && path.endsWith(':hint');
  const all = texts.values;
  let values = '';
  let count = 0;
  for (let i = 0; i < all.length; i++) {
    const value = all[i] as TextValue;
    if (value.lang !== lang) continue;
    values += valueLine(refs, valueIndent, isHint, value.form, value.text, value.context);
    count++;
  }
  if (count < texts.forms.length) {
    for (let f = 0; f < texts.forms.length; f++) {
      const form = texts.forms[f] as string;
      let has = false;
      for (let i = 0; i < all.length && !has; i++) has = (all[i] as TextValue).lang === lang && (all[i] as TextValue).form === form;
      if (!has) values += valueLine(refs, valueIndent, isHint, form, '-', undefined);
    }
  }
  const id = (texts.id ??= escapeAttr(path));
  out.add(values === '' ? `${indent}<text id="${id}"/>\n` : `${indent}<text id="${id}">\n${values}${indent}</text>\n`);
}

/**
 * The <itext> block, written straight out as text (it is most of a big form's XForm). Every
 * language gets every text: its own first, then the ones it lacks, and every form a text has in
 * any language ("-" where missing).
 */
export function writeItext(translations: Translations, defaultLanguage: string, refs: References, indent: string, out: XmlOut): void {
  const i1 = `${indent}  `;
  const i2 = `${i1}  `;
  const valueIndent = `${i2}  `;
  out.add(`${indent}<itext>\n`);
  for (const lang of translations.languages) {
    out.add(`${i1}<translation lang="${escapeAttr(lang)}${lang === defaultLanguage ? '" default="true()">\n' : '">\n'}`);
    const own = translations.pathsByLanguage.get(lang) ?? [];
    for (let p = 0; p < own.length; p++) {
      const path = own[p] as string;
      const texts = translations.paths.get(path);
      if (texts) writeText(out, refs, lang, path, texts, i2, valueIndent);
    }
    if (own.length < translations.paths.size) {
      for (const [path, texts] of translations.paths) {
        if (!hasLanguage(texts, lang)) writeText(out, refs, lang, path, texts, i2, valueIndent);
      }
    }
    out.add(`${i1}</translation>\n`);
  }
  out.add(`${indent}</itext>\n`);
}
