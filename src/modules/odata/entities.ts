// Stored records (answers keyed by group paths, repeats as arrays of items) as OData entities:
// answers nested by group and typed by the model, `__id` and `__system` as ODK Central writes them,
// repeats as navigation links or, when expanded, as arrays of their rows.
import { parentKeyName, type AnswerProperty, type EntityModel, type Property, type RepeatProperty } from './model.ts';

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

/** A value of the record or its columns as JSON text: JSON.stringify(value), strings and numbers without the call. */
function valueJson(value: unknown): string {
  if (typeof value === 'string') return stringJson(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return JSON.stringify(value);
}

/**
 * An answer as JSON text, typed by the model: numbers from numbers or numeric text, dates as
 * written, points as GeoJSON, booleans, and anything else as text (a JSON value as its JSON).
 */
export function answerJson(property: AnswerProperty, value: unknown): string {
  if (value === undefined || value === null) return 'null';
  switch (property.type) {
    case 'Edm.Int64':
    case 'Edm.Decimal': {
      const n = numberOf(value);
      return n === null ? 'null' : String(n);
    }
    case 'Edm.Date':
      // A date matching DATE needs no escaping.
      return typeof value === 'string' && DATE.test(value) ? `"${value}"` : 'null';
    case 'Edm.GeographyPoint':
      return geoPointJson(value);
    case 'Edm.Boolean':
      return typeof value === 'boolean' ? (value ? 'true' : 'false') : 'null';
    default:
      return typeof value === 'string' ? stringJson(value) : stringJson(typeof value === 'object' ? JSON.stringify(value) : String(value));
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

/** The meta fields under `__system`, in the order they are written, each from the record's columns and answers. */
const SYSTEM_VALUES: ReadonlyArray<readonly [string, (answers: JsonObject, meta: RecordMeta) => string]> = [
  ['submissionDate', (_, meta) => valueJson(meta.submitted)],
  ['updatedAt', (_, meta) => valueJson(meta.modified)],
  ['submitterName', (_, meta) => valueJson(meta.submitter)],
  ['attachmentsPresent', (_, meta) => valueJson(meta.media_count)],
  ['attachmentsExpected', (_, meta) => valueJson(meta.total_media)],
  ['status', (answers, meta) => valueJson(answers['_status'] ?? meta.status)],
  ['reviewState', (answers) => valueJson(reviewStateOf(answers['_review_status']))],
  ['edited', (_, meta) => valueJson(meta.edited)],
  ['formVersion', (answers, meta) => valueJson(answers['_version'] ?? meta.version)],
  ['recordId', (_, meta) => valueJson(meta.id)],
];

/** What an entity holds between its fixed texts: the parts that depend on the record or item. */
type Slot =
  | { readonly kind: 'id' }
  | { readonly kind: 'parent'; readonly index: number }
  | { readonly kind: 'system'; readonly value: (answers: JsonObject, meta: RecordMeta) => string }
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

  text(text: string): void {
    this.texts[this.texts.length - 1] += text;
  }

  slot(slot: Slot): void {
    this.slots.push(slot);
    this.texts.push('');
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

/**
 * Fills a template's slots: `source` holds the answers (a record's or a repeat item's), `chain` the
 * ids of the entity's parents (the record's first), `id` the entity's own; `meta` a record's columns.
 */
function fill(template: Template, source: JsonObject, meta: RecordMeta | undefined, chain: readonly string[], id: string): string {
  const { texts, slots } = template;
  let out = texts[0] ?? '';
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i] as Slot;
    let value: string;
    switch (slot.kind) {
      case 'id':
        value = stringJson(id);
        break;
      case 'parent':
        value = valueJson(chain[slot.index] ?? null);
        break;
      case 'system':
        value = meta === undefined ? 'null' : slot.value(source, meta);
        break;
      case 'answer':
        value = answerJson(slot.property, source[slot.property.key]);
        break;
      case 'link':
        value = stringJson(`${keySegment(slot.setName, id)}/${slot.name}`);
        break;
      case 'rows': {
        const rowChain = [...chain, id];
        const { entity } = slot.property;
        value = `[${repeatItems(source, slot.property.key).map((item, index) => fill(slot.row, item, undefined, rowChain, rowId(rowChain, entity, index))).join(',')}]`;
        break;
      }
    }
    out += value + (texts[i + 1] ?? '');
  }
  return out;
}

/** Writes a stored record (its answers as parsed, and its columns) as the JSON text of an entity of `Submissions`. */
export type SubmissionWriter = (answers: JsonObject, meta: RecordMeta) => string;

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

/** The writer of `root`'s entities for a request's $select and $expand. */
export function submissionWriter(root: EntityModel, context: EntityContext): SubmissionWriter {
  const { template, members } = entityStart();
  const systemPick = pickOfName(context.pick, '__system');
  if (systemPick !== undefined) {
    members.next('__system');
    template.text('{');
    const system = new Members(template);
    for (const [name, value] of SYSTEM_VALUES) {
      if (systemPick !== true && !systemPick.has(name)) continue;
      system.next(name);
      template.slot({ kind: 'system', value });
    }
    template.text('}');
  }
  templateFields(template, root.properties, root.setName, context.expand, context.pick, members);
  template.text('}');
  return (answers, meta) => fill(template, answers, meta, [], `uuid:${meta.uuid}`);
}

/** A stored record (its answers as stored, and its columns) as the JSON text of an entity of `Submissions`. */
export function submissionText(root: EntityModel, answers: JsonObject, meta: RecordMeta, context: EntityContext): string {
  return submissionWriter(root, context)(answers, meta);
}

/**
 * Writes a repeat item as the JSON text of a row of its entity set: `positions` are the 1-based
 * positions of the item and of its enclosing repeats' items, from the record down.
 */
export type RepeatRowWriter = (recordUuid: string, positions: readonly number[], item: JsonObject) => string;

/** The writer of a repeat set's rows for a request's $select and $expand. */
export function repeatRowWriter(entity: EntityModel, context: EntityContext): RepeatRowWriter {
  const template = rowTemplate(entity, context.expand, context.pick);
  const levels = [...entity.parents.slice(1), entity];
  return (recordUuid, positions, item) => {
    const chain = [`uuid:${recordUuid}`];
    for (let index = 0; index < levels.length - 1; index++) chain.push(rowId(chain, levels[index] as EntityModel, (positions[index] ?? 1) - 1));
    return fill(template, item, undefined, chain, rowId(chain, entity, (positions[levels.length - 1] ?? 1) - 1));
  };
}
