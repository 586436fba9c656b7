// Cell-level rules shared by the layouts: formula-injection protection (where the format's
// CellText asks for it), tags, choice labels, media links and Python's spelling of numbers.
import { labelText, type Choice, type FormQuestion } from '../../form-model/model.ts';
import type { CellText, ExportRecord, LinkContext } from './types.ts';

/** Whether a first character makes a spreadsheet read the cell as a formula: = + - @ % TAB CR LF. */
export function riskyFirst(code: number): boolean {
  return code === 61 || code === 43 || code === 45 || code === 64 || code === 37 || code === 9 || code === 13 || code === 10;
}
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Whether every space-separated token is a number (a single number is the common case: no split). */
function numbersOnly(text: string): boolean {
  return text.indexOf(' ') === -1 ? NUMBER.test(text) : text.split(' ').every((t) => NUMBER.test(t));
}

/**
 * onadata's protection against formula injection (§3.1): a value that a spreadsheet would
 * read as a formula gets a leading `'`, unless every space-separated token is a number (GPS
 * strings, negative numbers); `|` becomes `\|`.
 */
export function sanitizeText(value: string): string {
  // Called for nearly every cell of an export: the common case returns without allocating.
  let text = value;
  if (text.length > 0 && riskyFirst(text.charCodeAt(0)) && !numbersOnly(text)) text = `'${text}`;
  return text.indexOf('|') === -1 ? text : text.replace(/\|/g, '\\|');
}

export function asAnswered(value: string): string {
  return value;
}

/** The text rule of a CellText policy: sanitizeText, or the text unchanged. */
export function cellTextRule(policy: CellText): (value: string) => string {
  return policy === 'formula-safe' ? sanitizeText : asAnswered;
}

/** Flat CSV `_tags`: sorted, joined by `, `; a tag holding both a comma and a space is quoted. */
export function flatTags(value: unknown): string {
  if (!Array.isArray(value)) return '';
  return value
    .map((t) => String(t))
    .map((t) => (t.includes(',') && t.includes(' ') ? `"${t}"` : t))
    .sort()
    .join(', ');
}

/** Python's str() of a float: integral values keep `.0`. */
export function pythonFloat(n: number): string {
  return Number.isInteger(n) && Math.abs(n) < 1e16 ? `${n}.0` : String(n);
}

export interface LabelContext {
  readonly language: string | undefined;
  readonly defaultLanguage: string;
}

export function choiceLabel(choice: Choice, ctx: LabelContext): string {
  return labelText(choice.label, ctx.language, ctx.defaultLanguage) ?? choice.name;
}

/** select_one / select_multiple values as their choice labels (unknown names stay as they are). */
export function choiceLabels(question: FormQuestion, value: string, ctx: LabelContext): string {
  const names = question.uses.selectMultiple ? value.split(' ') : [value];
  return names
    .map((name) => {
      const choice = question.choices.find((c) => c.name === name);
      return choice ? choiceLabel(choice, ctx) : name;
    })
    .join(' ');
}

/** The absolute link of a media answer whose file arrived, else the file name. */
export function mediaValue(value: string, record: ExportRecord, links: LinkContext): string {
  const attachments = record['_attachments'];
  if (typeof attachments === 'object' && attachments !== null && !Array.isArray(attachments)) {
    const id = (attachments as Record<string, unknown>)[value];
    if (typeof id === 'number') return `${links.baseUrl}/api/v1/files/${id}?filename=${encodeURIComponent(value)}`;
  }
  return value;
}

const NO_NAMES: readonly string[] = Object.freeze([]);

/** A select_multiple answer's choice names (none when it is not text); undefined when it is missing. */
export function choiceNames(value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value.split(' ') : NO_NAMES;
}

/** A geopoint answer's four parts (none when it has not four); undefined when it is missing. */
export function pointParts(value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined;
  return geopointParts(value) ?? NO_NAMES;
}

/** The four parts of a geopoint answer, or undefined when it is not four parts. */
export function geopointParts(value: unknown): string[] | undefined {
  if (typeof value !== 'string') return undefined;
  const parts = value.split(' ');
  return parts.length === 4 ? parts : undefined;
}

/** `_gps_latitude`… names onadata derives from a geopoint (prefixed by its group path). */
export const GEOPOINT_SUFFIXES = ['latitude', 'longitude', 'altitude', 'precision'] as const;

export function geopointPartPath(path: string, part: number): string {
  const slash = path.lastIndexOf('/');
  const prefix = slash < 0 ? '' : path.slice(0, slash + 1);
  const name = slash < 0 ? path : path.slice(slash + 1);
  return `${prefix}_${name}_${GEOPOINT_SUFFIXES[part] ?? 'latitude'}`;
}
