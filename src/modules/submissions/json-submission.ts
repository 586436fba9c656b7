// onadata's JSON submissions (`POST /api/v1/submissions` with
// `{"id": "<id_string>", "submission": {...}}`): validated as
// data_serializer.py:JSONSubmissionSerializer does, reshaped as
// dict_tools.py:dict_lists2strings and dict_paths2dict do, then written as an
// OpenRosa instance (logger_tools.py:dict2xform) so that it is stored through
// the same XML path as any other submission.
//
// Where onadata's helpers are plainly broken we do what they mean to do:
// `a/b/c` keys nest in order and merge with their siblings (onadata reverses
// deeper paths and keeps only the last key of a group), lists of strings are
// joined inside repeat entries too, and null is an empty element (onadata
// writes the text "None").
import { ownValue } from '../../platform/lookup.ts';

export type JsonSubmissionErrorBody = { submission: string[] } | string[];

export type JsonSubmissionCheck =
  | { ok: true; idString: string | null; submission: Record<string, unknown> }
  | { ok: false; body: JsonSubmissionErrorBody };

export interface InstanceXmlOptions {
  /** Root element name: the form's survey name (`name` in its form JSON). */
  rootName: string;
  /** The form's id_string, written as the root's `id` attribute. */
  idString: string;
  /** Used as `meta/instanceID` (`uuid:<uuid>`) when the submission has none. */
  uuid: string;
}

export const NO_SUBMISSION_KEY = 'No submission key provided.';
export const EMPTY_JSON_SUBMISSION = 'Received empty submission. No instance was created';
export const INCORRECT_FORMAT = 'Incorrect format, see format details here,https://api.ona.io/static/docs/submissions.html.';

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Python truthiness, which decides onadata's "empty submission". */
function isEmptyValue(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (isObject(value)) return Object.keys(value).length === 0;
  return false;
}

/** Deeper than any form nests; refused before the recursive steps below could exhaust the stack. */
const MAX_NESTING = 200;

function nestedDeeperThan(root: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[root, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, depth] = next;
    if (depth > limit) return true;
    if (Array.isArray(value)) for (const item of value) pending.push([item, depth + 1]);
    else if (isObject(value)) for (const item of Object.values(value)) pending.push([item, depth + 1]);
  }
  return false;
}

/** Sets a key even when it is `__proto__`. */
function setKey(target: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** Validates a JSON submission body; errors are onadata's 400 bodies. */
export function readJsonSubmission(body: unknown): JsonSubmissionCheck {
  if (!isObject(body) || !Object.hasOwn(body, 'submission')) return { ok: false, body: { submission: [NO_SUBMISSION_KEY] } };
  const submission = body['submission'];
  if (isEmptyValue(submission)) return { ok: false, body: { submission: [EMPTY_JSON_SUBMISSION] } };
  if (!isObject(submission) || nestedDeeperThan(submission, MAX_NESTING)) return { ok: false, body: [INCORRECT_FORMAT] };
  const id = body['id'];
  const idString = typeof id === 'string' ? id : typeof id === 'number' ? String(id) : null;
  return { ok: true, idString, submission: reshape(submission) };
}

function reshapeValue(value: unknown): unknown {
  if (Array.isArray(value)) {
    // A select_multiple may be sent as a list of choice names.
    if (value.every((item) => typeof item === 'string')) return value.join(' ');
    return value.map(reshapeValue);
  }
  return isObject(value) ? reshape(value) : value;
}

function mergeInto(target: JsonObject, key: string, value: unknown): void {
  const existing = ownValue(target, key);
  if (isObject(existing) && isObject(value)) {
    for (const [k, v] of Object.entries(value)) mergeInto(existing, k, v);
  } else {
    setKey(target, key, value);
  }
}

/** Joins lists of strings and expands `a/b` keys into nested objects. */
function reshape(source: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, raw] of Object.entries(source)) {
    const value = reshapeValue(raw);
    const parts = key.includes('/') ? key.split('/').filter((p) => p !== '') : [key];
    const [head = key, ...rest] = parts;
    let nested: unknown = value;
    for (let i = rest.length - 1; i >= 0; i--) {
      const wrapped: JsonObject = {};
      setKey(wrapped, rest[i] ?? '', nested);
      nested = wrapped;
    }
    mergeInto(out, head, nested);
  }
  return out;
}

function escapeText(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

function escapeAttribute(text: string): string {
  return text.replace(/[&<>"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;'));
}

// XML 1.0 NameStartChar and NameChar ranges (dict2xml's sanitize_element uses the same).
const NAME_START_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x3a, 0x3a], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a], [0xc0, 0xd6], [0xd8, 0xf6], [0xf8, 0x2ff], [0x370, 0x37d],
  [0x37f, 0x1fff], [0x200c, 0x200d], [0x2070, 0x218f], [0x2c00, 0x2fef], [0x3001, 0xd7ff], [0xf900, 0xfdcf], [0xfdf0, 0xfffd],
];
const NAME_CHAR_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x2d, 0x2e], [0x30, 0x39], [0xb7, 0xb7], [0x300, 0x36f], [0x203f, 0x2040],
];

function inRanges(code: number, ranges: ReadonlyArray<readonly [number, number]>): boolean {
  return ranges.some(([low, high]) => code >= low && code <= high);
}

/** dict2xml's sanitize_element: any key becomes a well-formed element name. */
const PLAIN_NAME = /^[A-Za-z_][\w.-]*$/;

export function elementName(key: string): string {
  const reserved = key.toLowerCase().startsWith('xml');
  if (!reserved && PLAIN_NAME.test(key)) return key;
  const name = reserved ? `_${key}` : key;
  let out = inRanges(name.codePointAt(0) ?? 0, NAME_START_RANGES) ? '' : '_';
  for (const char of name) {
    const code = char.codePointAt(0) ?? 0;
    out += inRanges(code, NAME_START_RANGES) || inRanges(code, NAME_CHAR_RANGES) ? char : '_';
  }
  return out;
}

/** Python's str() of a JSON scalar, as dict2xml writes it. */
function scalarText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value === true) return 'True';
  if (value === false) return 'False';
  return String(value);
}

function writeValue(out: string[], name: string, value: unknown): void {
  if (Array.isArray(value)) {
    // A list is the element repeated: a repeat's entries, or repeated values.
    for (const item of value) writeValue(out, name, item);
  } else if (isObject(value)) {
    out.push(`<${name}>`);
    writeChildren(out, value);
    out.push(`</${name}>`);
  } else {
    out.push(`<${name}>${escapeText(scalarText(value))}</${name}>`);
  }
}

function writeChildren(out: string[], source: JsonObject): void {
  for (const [key, value] of Object.entries(source)) writeValue(out, elementName(key), value);
}

function hasInstanceId(submission: JsonObject): boolean {
  const meta = submission['meta'];
  return isObject(meta) && !isEmptyValue(meta['instanceID']);
}

function withInstanceId(submission: JsonObject, uuid: string): JsonObject {
  if (hasInstanceId(submission)) return submission;
  const meta = submission['meta'];
  if (meta !== undefined && !isObject(meta)) return submission;
  return { ...submission, meta: { ...(meta ?? {}), instanceID: `uuid:${uuid}` } };
}

/** The OpenRosa instance XML of a (validated, reshaped) JSON submission. */
export function jsonSubmissionToXml(submission: Record<string, unknown>, options: InstanceXmlOptions): string {
  const root = elementName(options.rootName);
  const out: string[] = [`<?xml version="1.0" encoding="UTF-8"?><${root} id="${escapeAttribute(options.idString)}">`];
  writeChildren(out, withInstanceId(submission, options.uuid));
  out.push(`</${root}>`);
  return out.join('');
}
