// Stored records (the data API's JSON: group paths as keys, repeats as arrays of items) as OData
// entities: answers nested by group and typed by the model, `__id` and `__system` as ODK Central
// writes them, repeats as navigation links or, when expanded, as arrays of their rows.
import { parentKeyName, type AnswerProperty, type EntityModel, type Property } from './model.ts';

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

export function answerValue(property: AnswerProperty, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  switch (property.type) {
    case 'Edm.Int64':
    case 'Edm.Decimal':
      return numberOf(value);
    case 'Edm.Date':
      return typeof value === 'string' && DATE.test(value) ? value : null;
    case 'Edm.GeographyPoint':
      return geoPoint(value);
    case 'Edm.Boolean':
      return typeof value === 'boolean' ? value : null;
    default:
      return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
}

/** The key of an entity in a resource path: `Submissions('uuid%3Aabc')`. */
export function keySegment(setName: string, id: string): string {
  return `${setName}('${encodeURIComponent(id.replace(/'/g, "''"))}')`;
}

export interface EntityContext {
  /** Repeats to inline (one level): their names, or '*' for all. */
  readonly expand: ReadonlySet<string> | '*';
}

/** An entity being written: its set, its id, and the ids from the record down to it. */
interface Self {
  readonly setName: string;
  readonly chain: readonly string[];
}

class EntityWriter {
  constructor(private readonly context: EntityContext) {}

  fill(target: Record<string, unknown>, properties: readonly Property[], source: JsonObject, self: Self, depth: number): void {
    for (const property of properties) {
      if (property.kind === 'answer') {
        target[property.name] = answerValue(property, source[property.key]);
      } else if (property.kind === 'group') {
        const group: Record<string, unknown> = {};
        this.fill(group, property.properties, source, self, depth);
        target[property.name] = group;
      } else if (depth === 0 && (this.context.expand === '*' || this.context.expand.has(property.name))) {
        target[property.name] = repeatItems(source, property.key).map((item, index) => this.row(property.entity, item, index, self.chain, depth + 1));
      } else {
        target[`${property.name}@odata.navigationLink`] = `${keySegment(self.setName, self.chain[self.chain.length - 1] ?? '')}/${property.name}`;
      }
    }
  }

  /** A repeat item as a row; `chain` holds the ids of its parents, the record's first. */
  row(entity: EntityModel, item: JsonObject, index: number, chain: readonly string[], depth: number): Record<string, unknown> {
    const id = rowId(chain, entity, index);
    const out: Record<string, unknown> = { __id: id };
    entity.parents.forEach((parent, i) => {
      out[parentKeyName(parent)] = chain[i] ?? null;
    });
    this.fill(out, entity.properties, item, { setName: entity.setName, chain: [...chain, id] }, depth);
    return out;
  }
}

function rowId(chain: readonly string[], entity: EntityModel, index: number): string {
  return `${chain[chain.length - 1] ?? ''}/${entity.key.split('/').pop() ?? ''}/${index + 1}`;
}

function repeatItems(source: JsonObject, key: string): JsonObject[] {
  const items = source[key];
  return Array.isArray(items) ? items.filter(isObject) : [];
}

/** The record's `__id`: its instanceID, as ODK Central keys submissions. */
export function recordId(record: JsonObject): string {
  return `uuid:${String(record['_uuid'] ?? '')}`;
}

/** A record (the data API's JSON, meta keys included) as an entity of `Submissions`. */
export function recordEntity(root: EntityModel, record: JsonObject, context: EntityContext): Record<string, unknown> {
  const id = recordId(record);
  const edited = record['_edited'] === true;
  const out: Record<string, unknown> = {
    __id: id,
    __system: {
      submissionDate: record['_submission_time'] ?? null,
      updatedAt: record['_date_modified'] ?? null,
      submitterName: record['_submitted_by'] ?? null,
      attachmentsPresent: numberOf(record['_media_count']),
      attachmentsExpected: numberOf(record['_total_media']),
      status: record['_status'] ?? null,
      reviewState: reviewStateOf(record['_review_status']),
      edited,
      formVersion: record['_version'] ?? null,
      recordId: numberOf(record['_id']),
    },
  };
  new EntityWriter(context).fill(out, root.properties, record, { setName: root.setName, chain: [id] }, 0);
  return out;
}

/**
 * The rows of one repeat's entity set that a record holds, in form order (through the items of
 * the enclosing repeats), each with its parents' ids; `expand` inlines the rows' own repeats.
 */
export function* repeatRows(entity: EntityModel, record: JsonObject, context: EntityContext): Generator<Record<string, unknown>> {
  const writer = new EntityWriter(context);
  // The chain of repeats from the record down to this one (parents after Submissions, then itself).
  const chain = [...entity.parents.slice(1), entity];
  function* walk(source: JsonObject, level: number, ids: readonly string[]): Generator<Record<string, unknown>> {
    const repeat = chain[level];
    if (!repeat) return;
    for (const [index, item] of repeatItems(source, repeat.key).entries()) {
      if (level === chain.length - 1) yield writer.row(repeat, item, index, ids, 0);
      else yield* walk(item, level + 1, [...ids, rowId(ids, repeat, index)]);
    }
  }
  yield* walk(record, 0, [recordId(record)]);
}

/** Only the selected properties (paths through groups), in the entity's order; keys and navigation links stay. */
export function selectProperties(entity: Record<string, unknown>, select: ReadonlyArray<readonly string[]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entity)) {
    if (key === '__id' || key.includes('@odata.')) {
      out[key] = value;
      continue;
    }
    const wanted = select.filter((path) => path[0] === key);
    if (wanted.length === 0) continue;
    if (wanted.some((path) => path.length === 1) || !isObject(value)) out[key] = value;
    else out[key] = selectProperties(value as Record<string, unknown>, wanted.map((path) => path.slice(1)));
  }
  return out;
}
