// Stored records (answers keyed by group paths, repeats as arrays of items) as OData entities:
// answers nested by group and typed by the model, `__id` and `__system` as ODK Central writes them,
// repeats as navigation links or, when expanded, as arrays of their rows.
import { parentKeyName, type AnswerProperty, type EntityModel, type Property, type RepeatProperty } from './model.ts';
import { Utf8Builder } from '../../lib/utf8-builder.ts';
import { MISSING, NUMBER, OTHER, RawRecordReader, TEXT } from '../../lib/writers/csv/raw-json.ts';

type JsonObject = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const REVIEW_STATES: Readonly<Record<string, string>> = { '1': 'approved', '2': 'rejected', '3': 'pending' };
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function reviewStateOf(status: unknown): string | null {
  return typeof status === 'string' || typeof status === 'number' ? (REVIEW_STATES[String(status)] ?? null) : null;
}

function numberOf(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** `lat lon [alt [accuracy]]` as a GeoJSON point (longitude first), as OData's JSON format writes Edm.GeographyPoint. */
export function geoPoint(value: unknown): Record<string, unknown> | null {
  if (typeof value !== 'string') return null;
  const parts = value.trim().split(/\s+/).map(Number);
  const [lat, lon, alt, accuracy] = parts;
  if (parts.length < 2 || lat === undefined || lon === undefined || parts.some((n) => !Number.isFinite(n))) return null;
  const point: Record<string, unknown> = { type: 'Point', coordinates: alt === undefined ? [lon, lat] : [lon, lat, alt] };
  if (accuracy !== undefined) point['properties'] = { accuracy };
  return point;
}

/**
 * A string as JSON text, as JSON.stringify writes it: most answers need no escaping, and quoting
 * them here saves a call into JSON.stringify per value.
 */
function stringJson(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(text);
  }
  return `"${text}"`;
}

/**
 * Where entities are written as UTF-8: one buffer per request, reused for each entity and grown
 * when one needs more. Writing the bytes straight from the template's texts and the record's
 * values makes no string per value, per concatenation and per flattening, which were most of
 * what a page allocated and so most of its garbage collection (bench/RESULTS.md).
 */
class ByteWriter extends Utf8Builder {
  constructor() {
    super(16 * 1024);
  }

  /** The bytes written since the last reset: a view that the next write may overwrite. */
  get written(): Buffer {
    return this.buf.subarray(0, this.len);
  }

  reset(): void {
    this.len = 0;
  }

  /** Bytes src[start..end) as they are. */
  range(src: Buffer, start: number, end: number): void {
    const length = end - start;
    const buffer = this.ensure(length);
    if (length > 64) src.copy(buffer, this.len, start, end);
    else for (let i = 0; i < length; i++) buffer[this.len + i] = src[start + i] as number;
    this.len += length;
  }

  /** A string as JSON text, as JSON.stringify writes it. */
  string(text: string): void {
    const buffer = this.ensure(text.length + 2);
    let at = this.len;
    buffer[at++] = 0x22;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      // Escapes and anything beyond ASCII (UTF-8, surrogates) take the general way.
      if (c < 0x20 || c === 0x22 || c === 0x5c || c >= 0x80) {
        this.text(stringJson(text));
        return;
      }
      buffer[at++] = c;
    }
    buffer[at++] = 0x22;
    this.len = at;
  }

  /** A finite number as JSON text. */
  number(n: number): void {
    // A small whole number (counts, ages, ids) without a string made for it.
    if ((n | 0) === n && n >= 0 && !Object.is(n, -0)) this.digits(n);
    else this.text(String(n));
  }
}

const NULL_BYTES = Buffer.from('null');
const TRUE_BYTES = Buffer.from('true');
const FALSE_BYTES = Buffer.from('false');

/** A value of the record or its columns as JSON.stringify writes it. */
function writeValue(out: ByteWriter, value: unknown): void {
  if (typeof value === 'string') out.string(value);
  else if (typeof value === 'number') {
    if (Number.isFinite(value)) out.number(value);
    else out.bytes(NULL_BYTES);
  } else if (value === null || value === undefined) out.bytes(NULL_BYTES);
  else if (typeof value === 'boolean') out.bytes(value ? TRUE_BYTES : FALSE_BYTES);
  else out.text(JSON.stringify(value));
}

/**
 * An answer as JSON, typed by the model: numbers from numbers or numeric text, dates as written,
 * points as GeoJSON, booleans, and anything else as text (a JSON value as its JSON).
 */
function writeAnswer(out: ByteWriter, property: AnswerProperty, value: unknown): void {
  if (value === undefined || value === null) {
    out.bytes(NULL_BYTES);
    return;
  }
  switch (property.type) {
    case 'Edm.Int64':
    case 'Edm.Decimal': {
      const n = numberOf(value);
      if (n === null) out.bytes(NULL_BYTES);
      else out.number(n);
      return;
    }
    case 'Edm.Date':
      // A date matching DATE is written as it is (it needs no escaping).
      if (typeof value === 'string' && DATE.test(value)) out.string(value);
      else out.bytes(NULL_BYTES);
      return;
    case 'Edm.GeographyPoint':
      out.text(geoPointJson(value));
      return;
    case 'Edm.Boolean':
      out.bytes(typeof value === 'boolean' ? (value ? TRUE_BYTES : FALSE_BYTES) : NULL_BYTES);
      return;
    default:
      out.string(typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
}

/** JSON.stringify(geoPoint(value)), written directly (its numbers are finite). */
function geoPointJson(value: unknown): string {
  const point = geoPoint(value);
  if (point === null) return 'null';
  const coordinates = point['coordinates'] as number[];
  const properties = point['properties'] as { accuracy: number } | undefined;
  return `{"type":"Point","coordinates":[${coordinates.join(',')}]${properties === undefined ? '' : `,"properties":{"accuracy":${String(properties.accuracy)}}`}}`;
}

/** The key of an entity in a resource path: `Submissions('uuid%3Aabc')`. */
export function keySegment(setName: string, id: string): string {
  return `${setName}('${encodeURIComponent(id.replace(/'/g, "''"))}')`;
}

/** Repeats to inline: '*' for all of them at every level, or by name, each with its own repeats to inline. */
export type ExpandTree = '*' | ReadonlyMap<string, ExpandTree>;

/**
 * The properties to write: all of them (true), or by name, each with its own choice below it (a
 * group's answers). `__id`, parents' ids chosen by name, and navigation links are always written.
 */
export type Pick = true | ReadonlyMap<string, Pick>;

/** The Pick of $select paths (undefined: everything). */
export function pickOf(select: ReadonlyArray<readonly string[]> | undefined): Pick {
  if (!select) return true;
  const tree = new Map<string, Pick>();
  for (const path of select) {
    const [first, ...rest] = path;
    if (first === undefined) continue;
    const known = tree.get(first);
    if (known === true) continue;
    if (rest.length === 0) tree.set(first, true);
    else {
      const below = pickOf([rest]);
      tree.set(first, known === undefined || below === true ? below : new Map([...known, ...(below as Map<string, Pick>)]));
    }
  }
  return tree;
}

function pickOfName(pick: Pick, name: string): Pick | undefined {
  return pick === true ? true : pick.get(name);
}

export interface EntityContext {
  readonly expand: ExpandTree;
  readonly pick: Pick;
}

function expandOf(tree: ExpandTree, name: string): ExpandTree | undefined {
  return tree === '*' ? '*' : tree.get(name);
}

/** JSON keys, quoted once each. */
const QUOTED = new Map<string, string>();
function jsonKey(name: string): string {
  let quoted = QUOTED.get(name);
  if (quoted === undefined) {
    quoted = `${JSON.stringify(name)}:`;
    if (QUOTED.size < 100_000) QUOTED.set(name, quoted);
  }
  return quoted;
}


function rowId(chain: readonly string[], entity: EntityModel, index: number): string {
  return `${chain[chain.length - 1] ?? ''}/${entity.key.split('/').pop() ?? ''}/${index + 1}`;
}

function repeatItems(source: JsonObject, key: string): JsonObject[] {
  const items = source[key];
  return Array.isArray(items) ? items.filter(isObject) : [];
}

/** What a record's entity shows besides its answers: its columns, as the OData repository reads them. */
export interface RecordMeta {
  readonly id: number;
  readonly uuid: string;
  readonly submitted: string;
  readonly modified: string;
  readonly submitter: string | null;
  readonly edited: boolean;
  readonly media_count: number;
  readonly total_media: number;
  readonly status: string;
  readonly version: string;
}

/**
 * A meta field under `__system`: from the record's columns, or from one of its answers (`answer`)
 * when the record has it. `passes`: a value the answer gives is written as it is (not null).
 */
interface SystemValue {
  readonly name: string;
  readonly answer?: string;
  readonly passes?: boolean;
  readonly value: (answer: unknown, meta: RecordMeta) => unknown;
}

/** The meta fields under `__system`, in the order they are written. */
const SYSTEM_VALUES: readonly SystemValue[] = [
  { name: 'submissionDate', value: (_, meta) => meta.submitted },
  { name: 'updatedAt', value: (_, meta) => meta.modified },
  { name: 'submitterName', value: (_, meta) => meta.submitter },
  { name: 'attachmentsPresent', value: (_, meta) => meta.media_count },
  { name: 'attachmentsExpected', value: (_, meta) => meta.total_media },
  { name: 'status', answer: '_status', passes: true, value: (answer, meta) => answer ?? meta.status },
  { name: 'reviewState', answer: '_review_status', value: (answer) => reviewStateOf(answer) },
  { name: 'edited', value: (_, meta) => meta.edited },
  { name: 'formVersion', answer: '_version', passes: true, value: (answer, meta) => answer ?? meta.version },
  { name: 'recordId', value: (_, meta) => meta.id },
];

/** What an entity holds between its fixed texts: the parts that depend on the record or item. */
type Slot =
  | { readonly kind: 'id' }
  | { readonly kind: 'parent'; readonly index: number }
  | { readonly kind: 'system'; readonly system: SystemValue }
  | { readonly kind: 'answer'; readonly property: AnswerProperty }
  | { readonly kind: 'link'; readonly setName: string; readonly name: string }
  | { readonly kind: 'rows'; readonly property: RepeatProperty; readonly row: Template };

/**
 * An entity as fixed texts with slots between them (texts.length = slots.length + 1): which
 * properties an entity has, and so its keys, braces and commas, follow from the model, $select and
 * $expand alone, so they are joined once per request rather than once per entity.
 */
class Template {
  readonly texts: string[] = [''];
  readonly slots: Slot[] = [];
  private encoded: Buffer[] | undefined;

  text(text: string): void {
    this.texts[this.texts.length - 1] += text;
  }

  slot(slot: Slot): void {
    this.slots.push(slot);
    this.texts.push('');
  }

  /** The fixed texts as UTF-8, encoded on the first entity written (the template is complete by then). */
  get bytes(): Buffer[] {
    this.encoded ??= this.texts.map((text) => Buffer.from(text));
    return this.encoded;
  }
}

/** Commas between the members of one object, as they are added. */
class Members {
  private first = true;
  constructor(private readonly template: Template) {}

  next(key: string): void {
    this.template.text(this.first ? jsonKey(key) : `,${jsonKey(key)}`);
    this.first = false;
  }
}

function templateFields(template: Template, properties: readonly Property[], setName: string, expand: ExpandTree, pick: Pick, members: Members): void {
  for (const property of properties) {
    if (property.kind === 'repeat') {
      const inner = expandOf(expand, property.name);
      if (inner !== undefined && pickOfName(pick, property.name) !== undefined) {
        members.next(property.name);
        template.slot({ kind: 'rows', property, row: rowTemplate(property.entity, inner, true) });
      } else if (inner === undefined) {
        members.next(`${property.name}@odata.navigationLink`);
        template.slot({ kind: 'link', setName, name: property.name });
      }
      continue;
    }
    const chosen = pickOfName(pick, property.name);
    if (chosen === undefined) continue;
    members.next(property.name);
    if (property.kind === 'answer') {
      template.slot({ kind: 'answer', property });
    } else {
      template.text('{');
      templateFields(template, property.properties, setName, expand, chosen, new Members(template));
      template.text('}');
    }
  }
}

const COMMA = 0x2c;
const OPEN_ARRAY = Buffer.from('[');
const CLOSE_ARRAY = Buffer.from(']');
const COMMA_BYTES = Buffer.from([COMMA]);

/**
 * Fills a template's slots into `out`: `source` holds the answers (a record's or a repeat item's),
 * `chain` the ids of the entity's parents (the record's first), `id` the entity's own; `meta` a
 * record's columns.
 */
function fill(out: ByteWriter, template: Template, source: JsonObject, meta: RecordMeta | undefined, chain: readonly string[], id: string): void {
  const { slots } = template;
  const texts = template.bytes;
  out.bytes(texts[0] as Buffer);
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i] as Slot;
    switch (slot.kind) {
      case 'id':
        out.string(id);
        break;
      case 'parent':
        writeValue(out, chain[slot.index] ?? null);
        break;
      case 'system':
        if (meta === undefined) out.bytes(NULL_BYTES);
        else writeValue(out, slot.system.value(slot.system.answer === undefined ? undefined : source[slot.system.answer], meta));
        break;
      case 'answer':
        writeAnswer(out, slot.property, source[slot.property.key]);
        break;
      case 'link':
        out.string(`${keySegment(slot.setName, id)}/${slot.name}`);
        break;
      case 'rows': {
        const rowChain = [...chain, id];
        const { entity } = slot.property;
        out.bytes(OPEN_ARRAY);
        repeatItems(source, slot.property.key).forEach((item, index) => {
          if (index > 0) out.bytes(COMMA_BYTES);
          fill(out, slot.row, item, undefined, rowChain, rowId(rowChain, entity, index));
        });
        out.bytes(CLOSE_ARRAY);
        break;
      }
    }
    out.bytes(texts[i + 1] as Buffer);
  }
}

/**
 * Writes a stored record (its answers as parsed, and its columns) as the UTF-8 JSON of an entity of
 * `Submissions`: a view of the writer's buffer, valid until its next entity.
 */
export type SubmissionWriter = (answers: JsonObject, meta: RecordMeta) => Buffer;

/** An entity's template up to its `__id`, and the members that follow it. */
function entityStart(): { template: Template; members: Members } {
  const template = new Template();
  template.text('{');
  const members = new Members(template);
  members.next('__id');
  template.slot({ kind: 'id' });
  return { template, members };
}

/** A repeat entity's row: `__id`, its parents' ids where chosen, its fields. */
function rowTemplate(entity: EntityModel, expand: ExpandTree, pick: Pick): Template {
  const { template, members } = entityStart();
  entity.parents.forEach((parent, index) => {
    const name = parentKeyName(parent);
    if (pickOfName(pick, name) === undefined) return;
    members.next(name);
    template.slot({ kind: 'parent', index });
  });
  templateFields(template, entity.properties, entity.setName, expand, pick, members);
  template.text('}');
  return template;
}

/** The template of `root`'s entities for a request's $select and $expand. */
function submissionTemplate(root: EntityModel, context: EntityContext): Template {
  const { template, members } = entityStart();
  const systemPick = pickOfName(context.pick, '__system');
  if (systemPick !== undefined) {
    members.next('__system');
    template.text('{');
    const system = new Members(template);
    for (const value of SYSTEM_VALUES) {
      if (systemPick !== true && !systemPick.has(value.name)) continue;
      system.next(value.name);
      template.slot({ kind: 'system', system: value });
    }
    template.text('}');
  }
  templateFields(template, root.properties, root.setName, context.expand, context.pick, members);
  template.text('}');
  return template;
}

/** The writer of `root`'s entities for a request's $select and $expand. */
export function submissionWriter(root: EntityModel, context: EntityContext): SubmissionWriter {
  const template = submissionTemplate(root, context);
  const out = new ByteWriter();
  return (answers, meta) => {
    out.reset();
    fill(out, template, answers, meta, [], `uuid:${meta.uuid}`);
    return out.written;
  };
}

/**
 * Writes a stored record from its JSON text's UTF-8 bytes, src[start..end) (as PostgreSQL writes
 * jsonb as text), and its columns, as the UTF-8 JSON of an entity of `Submissions`: the same bytes
 * as a SubmissionWriter given the parsed record; a view of the writer's buffer, valid until its
 * next entity.
 */
export type SubmissionBytesWriter = (src: Buffer, start: number, end: number, meta: RecordMeta) => Buffer;

/**
 * Whether src[start..end) is a whole number that JSON.stringify would write with the same
 * digits: no fraction or exponent, no leading zero, no minus zero, exact as a double.
 */
function plainInteger(src: Buffer, start: number, end: number): boolean {
  let i = src[start] === 0x2d ? start + 1 : start;
  const digits = end - i;
  if (digits < 1 || digits > 15) return false;
  if (src[i] === 0x30) return digits === 1 && i === start;
  for (; i < end; i++) {
    const c = src[i] as number;
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** Whether the text src[start..end) (inside its quotes) is a date as DATE matches it. */
function plainDate(src: Buffer, start: number, end: number): boolean {
  if (end - start !== 10) return false;
  for (let i = 0; i < 10; i++) {
    const c = src[start + i] as number;
    if (i === 4 || i === 7 ? c !== 0x2d : c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/**
 * An answer from the value the reader found in its slot (-1: the template reads none), as
 * writeAnswer writes the parsed value; the plain cases copied as they are.
 */
function writeAnswerBytes(out: ByteWriter, property: AnswerProperty, reader: RawRecordReader, slot: number, src: Buffer): void {
  const kind = slot < 0 ? MISSING : (reader.kindOf[slot] as number);
  const start = reader.startOf[slot] as number;
  const end = reader.endOf[slot] as number;
  // A value of kind OTHER is true, false, null, an array or an object, as written.
  if (kind === MISSING || (kind === OTHER && src[start] === 0x6e)) {
    out.bytes(NULL_BYTES);
    return;
  }
  switch (property.type) {
    case 'Edm.Int64':
    case 'Edm.Decimal':
      if (kind === NUMBER && plainInteger(src, start, end)) {
        out.range(src, start, end);
        return;
      }
      break;
    case 'Edm.Date':
      if (kind === TEXT && plainDate(src, start, end)) {
        out.range(src, start - 1, end + 1);
        return;
      }
      break;
    case 'Edm.Boolean':
      out.bytes(kind !== OTHER ? NULL_BYTES : src[start] === 0x74 ? TRUE_BYTES : src[start] === 0x66 ? FALSE_BYTES : NULL_BYTES);
      return;
    case 'Edm.GeographyPoint':
      break;
    default:
      // A text with no escape, its quotes included.
      if (kind === TEXT) {
        out.range(src, start - 1, end + 1);
        return;
      }
  }
  writeAnswer(out, property, reader.value(slot));
}

/**
 * The writer of `root`'s entities from their records' JSON text: the values the template needs
 * are found in the text (the exports' RawRecordReader) and the plain ones (text with no escape,
 * whole numbers, dates) copied as they are, so that no record is parsed into objects and strings
 * only to be written again. Repeats written inline, a text that is not an object, and keys that
 * a parsed record would find on Object's prototype go through JSON.parse and the SubmissionWriter.
 */
export function submissionBytesWriter(root: EntityModel, context: EntityContext): SubmissionBytesWriter {
  const template = submissionTemplate(root, context);
  const parsedWriter = submissionWriter(root, context);
  const parsed: SubmissionBytesWriter = (src, start, end, meta) => parsedWriter(JSON.parse(src.toString('utf8', start, end)) as JsonObject, meta);
  const { slots } = template;
  const keys = slots.map((slot) => (slot.kind === 'answer' ? slot.property.key : slot.kind === 'system' ? slot.system.answer : undefined));
  if (slots.some((slot) => slot.kind === 'rows') || keys.some((key) => key !== undefined && key in Object.prototype)) return parsed;
  const reader = new RawRecordReader();
  const slotOf = Int32Array.from(keys, (key) => (key === undefined ? -1 : reader.slot([], key)));
  const out = new ByteWriter();
  return (src, start, end, meta) => {
    try {
      reader.read(src, start, end);
    } catch {
      return parsed(src, start, end, meta);
    }
    const texts = template.bytes;
    const id = `uuid:${meta.uuid}`;
    out.reset();
    out.bytes(texts[0] as Buffer);
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i] as Slot;
      const at = slotOf[i] as number;
      switch (slot.kind) {
        case 'id':
          out.string(id);
          break;
        case 'system':
          if (at >= 0 && slot.system.passes === true && reader.kindOf[at] === TEXT) out.range(src, (reader.startOf[at] as number) - 1, (reader.endOf[at] as number) + 1);
          else writeValue(out, slot.system.value(at < 0 ? undefined : reader.value(at), meta));
          break;
        case 'answer':
          writeAnswerBytes(out, slot.property, reader, at, src);
          break;
        case 'link':
          out.string(`${keySegment(slot.setName, id)}/${slot.name}`);
          break;
        default:
          throw new Error(`a record's template has a ${slot.kind} slot`);
      }
      out.bytes(texts[i + 1] as Buffer);
    }
    return out.written;
  };
}

/** A stored record (its answers as stored, and its columns) as the JSON text of an entity of `Submissions`. */
export function submissionText(root: EntityModel, answers: JsonObject, meta: RecordMeta, context: EntityContext): string {
  return submissionWriter(root, context)(answers, meta).toString('utf8');
}

/**
 * Writes a repeat item as the UTF-8 JSON of a row of its entity set (a view of the writer's buffer,
 * valid until its next row): `positions` are the 1-based positions of the item and of its enclosing
 * repeats' items, from the record down.
 */
export type RepeatRowWriter = (recordUuid: string, positions: readonly number[], item: JsonObject) => Buffer;

/** The writer of a repeat set's rows for a request's $select and $expand. */
export function repeatRowWriter(entity: EntityModel, context: EntityContext): RepeatRowWriter {
  const template = rowTemplate(entity, context.expand, context.pick);
  const levels = [...entity.parents.slice(1), entity];
  const out = new ByteWriter();
  return (recordUuid, positions, item) => {
    const chain = [`uuid:${recordUuid}`];
    for (let index = 0; index < levels.length - 1; index++) chain.push(rowId(chain, levels[index] as EntityModel, (positions[index] ?? 1) - 1));
    out.reset();
    fill(out, template, item, undefined, chain, rowId(chain, entity, (positions[levels.length - 1] ?? 1) - 1));
    return out.written;
  };
}
