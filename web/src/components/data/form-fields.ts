// What the data pages read from a form's JSON: its languages, its questions (by the slash paths
// the records use) with their labels and choices, and how an answer reads to a person.
import type { Attachment, DataRecord, FormElement, FormJson, Label } from '../../api/data.ts';

export interface Choice {
  readonly name: string;
  readonly label: Label | undefined;
}

export interface Field {
  /** The record's key: slash path below the form's root (`grp/q`). */
  readonly path: string;
  readonly name: string;
  readonly type: string;
  readonly label: Label | undefined;
  readonly choices: readonly Choice[];
  /** Inside a repeat: its answers live in the repeat's entries, not at the record's top. */
  readonly inRepeat: boolean;
}

const GROUPS = new Set(['group', 'repeat']);
const HIDDEN = new Set(['note']);
export const MEDIA_TYPES = new Set(['photo', 'image', 'audio', 'video', 'file', 'background-audio']);
export const SELECT_TYPES = new Set(['select one', 'select all that apply', 'select_one', 'select_multiple', 'select one from file', 'select all that apply from file']);
export const NUMBER_TYPES = new Set(['integer', 'decimal', 'int', 'range']);
export const GEO_TYPES = new Set(['geopoint', 'geotrace', 'geoshape']);

export function isGroup(element: FormElement): boolean {
  return GROUPS.has(element.type);
}

/** The languages the form's labels are given in (empty: one unnamed language). */
export function formLanguages(form: FormJson): string[] {
  const found = new Set<string>();
  const visit = (elements: readonly FormElement[]): void => {
    for (const element of elements) {
      if (element.label && typeof element.label === 'object') for (const key of Object.keys(element.label)) found.add(key);
      if (element.children) visit(element.children);
    }
  };
  visit(form.children);
  return [...found].sort((a, b) => (a === form.default_language ? -1 : b === form.default_language ? 1 : a.localeCompare(b)));
}

export function labelText(label: Label | undefined, language: string, fallback: string): string {
  if (label === undefined) return fallback;
  if (typeof label === 'string') return label || fallback;
  return label[language] ?? label['default'] ?? Object.values(label)[0] ?? fallback;
}

/** Every question of the form in form order (groups and repeats opened), without notes and meta. */
export function formFields(form: FormJson): Field[] {
  const fields: Field[] = [];
  const visit = (elements: readonly FormElement[], prefix: string, inRepeat: boolean): void => {
    for (const element of elements) {
      const path = prefix ? `${prefix}/${element.name}` : element.name;
      if (isGroup(element)) {
        if (element.name !== 'meta') visit(element.children ?? [], path, inRepeat || element.type === 'repeat');
        continue;
      }
      if (HIDDEN.has(element.type) || element.name === 'formhub') continue;
      const choices = SELECT_TYPES.has(element.type)
        ? (element.children ?? []).map((c) => ({ name: c.name, label: c.label }))
        : [];
      fields.push({ path, name: element.name, type: element.type, label: element.label, choices, inRepeat });
    }
  };
  visit(form.children, '', false);
  return fields;
}

/** An answer as a person reads it: choices by their labels, repeats as a count. */
export function answerText(field: Field | undefined, value: unknown, language: string): string {
  if (value === undefined || value === null || value === '') return '';
  if (Array.isArray(value)) return `${value.length} ${value.length === 1 ? 'entry' : 'entries'}`;
  if (field && field.choices.length) {
    const names = field.type.includes('all') || field.type === 'select_multiple' ? String(value).split(/\s+/) : [String(value)];
    return names.map((n) => labelText(field.choices.find((c) => c.name === n)?.label, language, n)).join(', ');
  }
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The record's attachment named by a media answer. */
export function attachmentFor(record: DataRecord, fileName: unknown): Attachment | undefined {
  if (typeof fileName !== 'string' || !fileName) return undefined;
  return record._attachments?.find((a) => a.filename === fileName || a.filename.endsWith(`/${fileName}`) || a.name === fileName);
}
