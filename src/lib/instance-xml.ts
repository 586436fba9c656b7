// OpenRosa submission XML → the stored JSON record, as onadata builds it
// (xform_instance_parser.py: _xml_node_to_dict + _flatten_dict_nest_repeats,
// instance.py: numeric_converter, get_full_dict), in one SAX pass that writes
// the flat record directly instead of building and flattening a tree.
//
// Rules (onadata-data.md §1.3): whitespace-only text between tags is dropped;
// keys are slash paths below the root; non-repeat groups flatten into the
// enclosing object; empty elements give no key; a repeat is an array of
// objects keyed by full paths; an element that occurs twice without being a
// repeat becomes such an array too; integer/decimal values become numbers.
// Record keys keep the element names as written (prefix included, as
// onadata's); the form is looked up by local names.
//
// Untrusted input: saxes expands no entities; any DOCTYPE is refused outright. The common
// document is read by plain-xml.ts instead, which gives up on anything but plain XML (DOCTYPE
// included) and leaves it, errors and all, to saxes.
import { SaxesParser } from 'saxes';
import type { FormModel, FormNode } from './form-model/model.ts';
import { repeatCountsOf } from './writers/layout/repeat-counts.ts';
import { ownValue } from '../platform/lookup.ts';
import { readPlainXml, type PlainXmlHandler } from './plain-xml.ts';

export type RecordValue = string | number | SubmissionRecord[];
export interface SubmissionRecord {
  [key: string]: RecordValue;
}

export interface InstanceMeta {
  /** Root element name (onadata's survey type slug). */
  rootName: string;
  /** Root `id` attribute (`_xform_id_string`). */
  idString: string | null;
  /** Root `version` attribute (`_version`; the form's version applies when null). */
  version: string | null;
  /** `formhub/uuid`: the form's uuid, which locates the form before the id does. */
  formhubUuid: string | null;
  /** `meta/instanceID` as sent (e.g. `uuid:…`), else the root's `instanceID` attribute. */
  instanceId: string | null;
  /** instanceId without its `uuid:` prefix (`_uuid`); null when it has no such prefix. */
  uuid: string | null;
  /** `meta/deprecatedID` as sent: the instance this one edits. */
  deprecatedId: string | null;
  deprecatedUuid: string | null;
  /** Root `submissionDate` attribute (CSV imports set the submission time with it). */
  submissionDate: string | null;
  /** Distinct attachment names the record references (`_total_media` counts them). */
  mediaFiles: string[];
  /** `[lat, lng]` of the first geopoint, `[null, null]` without one. */
  geolocation: [number, number] | [null, null];
  /** Seconds between the `start` and `end` values, `""` when either is missing or unreadable. */
  duration: number | '';
  /** Encrypted submission: root `encrypted="yes"` or an encryptedXmlFile/base64EncryptedKey element. */
  encrypted: boolean;
  /** Items of each repeat, as stored beside the record (src/lib/writers/layout/repeat-counts.ts). */
  repeatCounts: string;
}

export interface ParseOptions {
  /** Larger documents are refused before parsing. */
  maxBytes: number;
}

export type ParseResult =
  | { ok: true; record: SubmissionRecord; meta: InstanceMeta }
  | { ok: false; error: string; detail?: string };

export const MALFORMED_XML = 'Improperly formatted XML.';
export const EMPTY_SUBMISSION = 'Received empty submission. No instance was created';

/** How an element's text and items are read: looked up once per element. */
const FIELD_REPEAT = 1;
const FIELD_NUMERIC = 2;

function flagsOf(node: FormNode | null): number {
  if (node === null) return 0;
  if (node.kind === 'repeat') return FIELD_REPEAT;
  return node.kind === 'question' && node.uses.numberInRecord ? FIELD_NUMERIC : 0;
}

/** One open element. `container` receives the leaf keys of its subtree. */
interface Frame {
  readonly name: string;
  readonly path: string;
  /** The form's element at this place (matched by local names), null when the form has none. */
  readonly node: FormNode | null;
  readonly flags: number;
  readonly container: SubmissionRecord;
  /** A repeat entry or a repeated non-repeat element: its subtree goes into an object of its own. */
  readonly isItem: boolean;
  /** Child nodes as minidom would count them after onadata's whitespace stripping. */
  childCount: number;
  text: string | null;
  cdata: string | null;
  /** Some child had data, so this element is a non-empty group. */
  hasData: boolean;
  /** Names of children that had data: a second one with data makes a list. */
  filledChildren: Set<string> | null;
}

/** No form nests this deep; deeper documents are refused before they cost stack or memory. */
const MAX_DEPTH = 256;

class RefusedDoctype extends Error {}
class XmlSyntaxError extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Python's str.isspace(), which the `\s` of onadata's `>\s+<` follows. */
function isPythonSpace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d) || (code >= 0x1c && code <= 0x1f);
  return code === 0x85 || code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a)
    || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000;
}

/** onadata strips `>\s+<`: text made only of whitespace between two tags disappears. */
function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (!isPythonSpace(text.charCodeAt(i))) return false;
  return true;
}

/** Sets a key even when it is `__proto__` (an element may be named so). */
function setKey(target: SubmissionRecord, key: string, value: RecordValue): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}


// Python's int() and float() syntax (numeric_checker): ASCII digits with single
// underscores between them, surrounding whitespace allowed.
const PYTHON_INT = /^\s*[+-]?\d+(?:_\d+)*\s*$/;
const PYTHON_FLOAT = /^\s*[+-]?(?:(?:\d+(?:_\d+)*)(?:\.(?:\d+(?:_\d+)*)?)?|\.\d+(?:_\d+)*)(?:[eE][+-]?\d+(?:_\d+)*)?\s*$/;
const PYTHON_SPECIAL_FLOAT = /^\s*[+-]?(?:inf|infinity|nan)\s*$/i;

/**
 * onadata's numeric_checker: int when int() parses, else float, NaN → 0, else the text.
 * Values a JSON number cannot hold exactly (integers past 2^53, infinities) stay text.
 */
export function coerceNumeric(text: string): string | number {
  if (PYTHON_INT.test(text)) {
    const value = Number(text.trim().replaceAll('_', ''));
    return Number.isSafeInteger(value) ? value : text;
  }
  if (PYTHON_FLOAT.test(text)) {
    const value = Number(text.trim().replaceAll('_', ''));
    return Number.isFinite(value) ? value : text;
  }
  if (PYTHON_SPECIAL_FLOAT.test(text)) return /nan/i.test(text) ? 0 : text;
  return text;
}

function uuidOf(value: string | null): string | null {
  // onadata: re.match(r"uuid:(.*)"); an empty remainder counts as none.
  if (value === null || !value.startsWith('uuid:')) return null;
  const uuid = value.slice(5);
  return uuid === '' ? null : uuid;
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

/** Moves the keys a subtree flattened into `container` out into an object of their own. */
function takeSubtree(container: SubmissionRecord, path: string): SubmissionRecord {
  const taken: SubmissionRecord = {};
  const own = ownValue(container, path);
  if (own !== undefined) {
    setKey(taken, path, own);
    delete container[path];
  }
  const prefix = `${path}/`;
  for (const key of Object.keys(container)) {
    if (!key.startsWith(prefix)) continue;
    setKey(taken, key, container[key] as RecordValue);
    delete container[key];
  }
  return taken;
}

class InstanceBuilder implements PlainXmlHandler {
  readonly record: SubmissionRecord = {};
  private readonly stack: Frame[] = [];
  rootName = '';
  rootAttributes: Record<string, string> = {};
  formhubUuid: string | null = null;
  instanceId: string | null = null;
  deprecatedId: string | null = null;
  hasEncryptedParts = false;
  private sawMeta = false;
  private inFirstMeta = false;
  private inFormhub = false;
  /** onadata parses an encrypted form's `media` elements as a repeat. */
  encryptedMedia = false;

  constructor(private readonly model: FormModel) {}

  open(name: string, attributes: Record<string, string>): void {
    const depth = this.stack.length;
    if (depth === 0) return this.openRoot(name, attributes);
    if (depth >= MAX_DEPTH) throw new XmlSyntaxError(`elements nested deeper than ${MAX_DEPTH}`);
    const parent = this.stack[depth - 1] as Frame;
    parent.childCount++;
    const colon = name.indexOf(':');
    const local = colon < 0 ? name : name.slice(colon + 1);
    const node = parent.node === null || parent.node.kind === 'question' ? null : (parent.node.childByName.get(local) ?? null);
    // The form's own path strings serve as keys while no name on the way has a prefix.
    const unprefixed = colon < 0 && parent.node !== null && parent.path === parent.node.path;
    const path = node !== null && unprefixed ? node.path : depth === 1 ? name : `${parent.path}/${name}`;
    let flags = flagsOf(node);
    if (depth === 1) {
      this.noteTopLevel(local);
      if (this.encryptedMedia && local === 'media') flags |= FIELD_REPEAT;
    }
    const isItem = (flags & FIELD_REPEAT) !== 0 || (parent.filledChildren !== null && parent.filledChildren.has(name));
    this.stack.push({
      name, path, node, flags,
      container: isItem ? {} : parent.container,
      isItem,
      childCount: 0, text: null, cdata: null, hasData: false, filledChildren: null,
    });
  }

  private openRoot(name: string, attributes: Record<string, string>): void {
    this.rootName = name;
    this.rootAttributes = attributes;
    this.encryptedMedia = this.model.encrypted || attributes['encrypted'] === 'yes';
    this.stack.push({
      name, path: '', node: this.model.root, flags: 0, container: this.record, isItem: false,
      childCount: 0, text: null, cdata: null, hasData: false, filledChildren: null,
    });
  }

  private noteTopLevel(local: string): void {
    const lower = local.toLowerCase();
    this.inFirstMeta = lower === 'meta' && !this.sawMeta;
    if (lower === 'meta') this.sawMeta = true;
    this.inFormhub = local === 'formhub';
    if (local === 'encryptedXmlFile' || local === 'base64EncryptedKey') this.hasEncryptedParts = true;
  }

  text(text: string): void {
    const frame = this.stack[this.stack.length - 1];
    if (frame === undefined || isBlank(text)) return;
    frame.childCount++;
    frame.text = text;
  }

  cdata(cdata: string): void {
    const frame = this.stack[this.stack.length - 1];
    if (frame === undefined) return;
    frame.childCount++;
    frame.cdata ??= cdata;
  }

  close(): void {
    const frame = this.stack.pop();
    const parent = this.stack[this.stack.length - 1];
    if (frame === undefined || parent === undefined) return;
    const leaf = this.leafValue(frame);
    if (this.stack.length === 2) this.noteMetaValue(frame, leaf);
    if (leaf === null && !frame.hasData) return;
    this.store(frame, parent, leaf);
    parent.hasData = true;
    (parent.filledChildren ??= new Set()).add(frame.name);
  }

  /** The element's text value, or null when it is a group (or empty). */
  private leafValue(frame: Frame): string | null {
    if (frame.cdata !== null) {
      // minidom: a CDATA child makes the whole element that CDATA's value.
      if (frame.hasData && !frame.isItem) takeSubtree(frame.container, frame.path);
      frame.hasData = false;
      return frame.cdata;
    }
    if (frame.childCount === 1 && frame.text !== null) return frame.text;
    return null;
  }

  private noteMetaValue(frame: Frame, leaf: string | null): void {
    if (leaf === null) return;
    const local = localName(frame.name).toLowerCase();
    if (this.inFirstMeta) {
      if (local === 'instanceid') this.instanceId ??= leaf.trim();
      else if (local === 'deprecatedid') this.deprecatedId ??= leaf.trim();
    } else if (this.inFormhub && local === 'uuid') {
      this.formhubUuid ??= leaf.trim();
    }
  }

  private store(frame: Frame, parent: Frame, leaf: string | null): void {
    const value: RecordValue | null = leaf === null ? null : (frame.flags & FIELD_NUMERIC) !== 0 ? coerceNumeric(leaf) : leaf;
    if (!frame.isItem) {
      if (value !== null) setKey(parent.container, frame.path, value);
      return;
    }
    let item = frame.container;
    if (value !== null) {
      item = {};
      setKey(item, frame.path, value);
    }
    const existing = ownValue(parent.container, frame.path);
    if (Array.isArray(existing)) {
      existing.push(item);
    } else if ((frame.flags & FIELD_REPEAT) !== 0) {
      setKey(parent.container, frame.path, [item]);
    } else {
      // The second occurrence of a non-repeat element: the first, already
      // flattened into the parent's object, becomes the list's first entry.
      const first = takeSubtree(parent.container, frame.path);
      setKey(parent.container, frame.path, [first, item]);
    }
  }
}

function decode(xml: string | Uint8Array, maxBytes: number): { text: string } | { error: string; detail: string } {
  if (typeof xml === 'string') {
    // Each UTF-16 unit is at least one UTF-8 byte and at most three.
    const tooLong = xml.length > maxBytes || (xml.length * 3 > maxBytes && Buffer.byteLength(xml, 'utf8') > maxBytes);
    if (tooLong) return { error: MALFORMED_XML, detail: `submission larger than ${maxBytes} bytes` };
    return { text: xml };
  }
  if (xml.byteLength > maxBytes) return { error: MALFORMED_XML, detail: `submission larger than ${maxBytes} bytes` };
  try {
    return { text: utf8.decode(xml) };
  } catch {
    return { error: MALFORMED_XML, detail: 'not UTF-8' };
  }
}

/** The document read into a builder: by plain-xml.ts when it can, else by saxes. */
function readInstance(text: string, model: FormModel): InstanceBuilder | { error: string; detail: string } {
  // onadata strips the document first: leading whitespace before `<?xml` is allowed.
  const first = text.charCodeAt(0);
  const stripped = isPythonSpace(first) || first === 0xfeff ? text.trimStart() : text;
  const plain = new InstanceBuilder(model);
  try {
    if (readPlainXml(stripped, plain)) return plain;
  } catch (err) {
    // The builder's own refusal (too deep) is saxes's to report, after any error before it.
    if (!(err instanceof XmlSyntaxError)) throw err;
  }
  const builder = new InstanceBuilder(model);
  return runSax(stripped, builder) ?? builder;
}

function runSax(text: string, builder: InstanceBuilder): { error: string; detail: string } | null {
  const parser = new SaxesParser<{ xmlns: false; position: boolean }>({ xmlns: false, position: true });
  parser.on('doctype', () => {
    throw new RefusedDoctype('DOCTYPE declarations are not accepted');
  });
  parser.on('error', (err) => {
    throw new XmlSyntaxError(err.message);
  });
  parser.on('opentag', (tag) => builder.open(tag.name, tag.attributes));
  parser.on('closetag', () => builder.close());
  parser.on('text', (t) => builder.text(t));
  parser.on('cdata', (c) => builder.cdata(c));
  // No comment or processing-instruction handlers: an eighth handler property
  // turns the parser object into a slow dictionary-mode object (5× slower), and
  // those nodes carry no data. (minidom counts them as nodes, so onadata drops a
  // value that shares its element with a comment; we keep the value.)
  try {
    parser.write(text).close();
  } catch (err) {
    if (err instanceof RefusedDoctype || err instanceof XmlSyntaxError) return { error: MALFORMED_XML, detail: err.message };
    throw err;
  }
  return null;
}

/** Values of the given keys anywhere in the record (repeat entries included), in document order. */
function valuesByKey(record: SubmissionRecord, keys: ReadonlySet<string>, out: Map<string, string[]>): void {
  for (const key of Object.keys(record)) {
    const value = record[key];
    if (Array.isArray(value)) {
      for (const item of value) valuesByKey(item, keys, out);
    } else if (typeof value === 'string' && keys.has(key)) {
      const list = out.get(key);
      if (list) list.push(value);
      else out.set(key, [value]);
    }
  }
}

const lookupCache = new WeakMap<FormModel, ReadonlySet<string>>();
/** The paths whose values are read after parsing: geopoints and media. */
function valueLookups(model: FormModel): ReadonlySet<string> {
  let paths = lookupCache.get(model);
  if (!paths) {
    paths = new Set([...model.geopointPaths, ...model.mediaPaths]);
    lookupCache.set(model, paths);
  }
  return paths;
}

function pythonFloat(text: string): number | null {
  if (!PYTHON_FLOAT.test(text)) return null;
  const value = Number(text.replaceAll('_', ''));
  return Number.isFinite(value) ? value : null;
}

/** onadata's _set_geom: any unreadable geopoint value leaves the record without a location. */
function geolocationOf(model: FormModel, values: Map<string, string[]>): [number, number] | [null, null] {
  let first: [number, number] | null = null;
  for (const path of model.geopointPaths) {
    for (const value of values.get(path) ?? []) {
      const parts = value.trim().split(/\s+/);
      const lat = pythonFloat(parts[0] ?? '');
      const lng = pythonFloat(parts[1] ?? '');
      if (lat === null || lng === null || parts.slice(2).some((p) => pythonFloat(p) === null)) return [null, null];
      first ??= [lat, lng];
    }
  }
  return first ?? [null, null];
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/;

/** onadata's calculate_duration: the first 19 characters as `%Y-%m-%dT%H:%M:%S`, zones ignored. */
export function secondsOf(value: RecordValue | undefined): number | null {
  if (typeof value !== 'string') return null;
  const match = DATE_TIME.exec(value.slice(0, 19));
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [number, number, number, number, number, number];
  const time = Date.UTC(year, month - 1, day, hour, minute, second);
  const date = new Date(time);
  // strptime refuses impossible dates (2023-02-30) and times.
  if (date.getUTCDate() !== day || date.getUTCMonth() !== month - 1 || hour > 23 || minute > 59 || second > 59) return null;
  return time / 1000;
}

function durationOf(model: FormModel, record: SubmissionRecord): number | '' {
  const start = secondsOf(ownValue(record, model.startPath));
  const end = secondsOf(ownValue(record, model.endPath));
  return start === null || end === null ? '' : end - start;
}

function mediaFilesOf(model: FormModel, record: SubmissionRecord, values: Map<string, string[]>, encrypted: boolean): string[] {
  const names = new Set<string>();
  const encryptedFile = ownValue(record, 'encryptedXmlFile');
  if (encrypted && typeof encryptedFile === 'string') {
    // instance.py:get_expected_media: the encrypted XML and each media/file.
    names.add(encryptedFile);
    const media = ownValue(record, 'media');
    if (Array.isArray(media)) for (const item of media) if (typeof item['media/file'] === 'string') names.add(item['media/file']);
    return [...names];
  }
  for (const path of model.mediaPaths) for (const value of values.get(path) ?? []) names.add(value);
  return [...names];
}

function attribute(attributes: Record<string, string>, name: string): string | null {
  const value = attributes[name];
  return value === undefined || value === '' ? null : value;
}

/** Parses an OpenRosa submission into the stored record and what the storage layer needs to know. */
export function parseInstance(xml: string | Uint8Array, model: FormModel, options: ParseOptions): ParseResult {
  const decoded = decode(xml, options.maxBytes);
  if ('error' in decoded) return { ok: false, error: decoded.error, detail: decoded.detail };
  const builder = readInstance(decoded.text, model);
  if (!(builder instanceof InstanceBuilder)) return { ok: false, error: builder.error, detail: builder.detail };
  const record = builder.record;
  if (Object.keys(record).length === 0) return { ok: false, error: EMPTY_SUBMISSION };

  const attributes = builder.rootAttributes;
  const encrypted = attributes['encrypted'] === 'yes' || builder.hasEncryptedParts;
  const lookups = valueLookups(model);
  const values = new Map<string, string[]>();
  if (lookups.size > 0) valuesByKey(record, lookups, values);
  const instanceId = builder.instanceId ?? attribute(attributes, 'instanceID');
  const meta: InstanceMeta = {
    rootName: builder.rootName,
    idString: attribute(attributes, 'id'),
    version: attribute(attributes, 'version'),
    formhubUuid: builder.formhubUuid,
    instanceId,
    uuid: uuidOf(instanceId),
    deprecatedId: builder.deprecatedId,
    deprecatedUuid: uuidOf(builder.deprecatedId),
    submissionDate: attribute(attributes, 'submissionDate'),
    mediaFiles: mediaFilesOf(model, record, values, builder.encryptedMedia),
    geolocation: geolocationOf(model, values),
    duration: durationOf(model, record),
    encrypted,
    repeatCounts: repeatCountsOf(record),
  };
  return { ok: true, record, meta };
}
