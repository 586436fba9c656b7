// Stored records (answers keyed by group paths, repeats as arrays of items) as OData entities:
// answers nested by group and typed by the model, `__id` and `__system` as ODK Central writes them,
// repeats as navigation links or, when expanded, as arrays of their rows.
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

/** Repeats to inline: '*' for all of them at every level, or by name, each with its own repeats to inline. */
export type ExpandTree = '*' | ReadonlyMap<string, ExpandTree>;

export interface EntityContext {
  readonly expand: ExpandTree;
}

const NOTHING: ExpandTree = new Map();

function expandOf(tree: ExpandTree, name: string): ExpandTree | undefined {
  return tree === '*' ? '*' : tree.get(name);
}

/** An entity being written: its set, its id, and the ids from the record down to it. */
interface Self {
  readonly setName: string;
  readonly chain: readonly string[];
}

class EntityWriter {
  fill(target: Record<string, unknown>, properties: readonly Property[], source: JsonObject, self: Self, expand: ExpandTree): void {
    for (const property of properties) {
      if (property.kind === 'answer') {
        target[property.name] = answerValue(property, source[property.key]);
      } else if (property.kind === 'group') {
        const group: Record<string, unknown> = {};
        this.fill(group, property.properties, source, self, expand);
        target[property.name] = group;
      } else if (expandOf(expand, property.name) !== undefined) {
        const inner = expandOf(expand, property.name) ?? NOTHING;
        target[property.name] = repeatItems(source, property.key).map((item, index) => this.row(property.entity, item, index, self.chain, inner));
      } else {
        target[`${property.name}@odata.navigationLink`] = `${keySegment(self.setName, self.chain[self.chain.length - 1] ?? '')}/${property.name}`;
      }
    }
  }

  /** A repeat item as a row; `chain` holds the ids of its parents, the record's first. */
  row(entity: EntityModel, item: JsonObject, index: number, chain: readonly string[], expand: ExpandTree): Record<string, unknown> {
    const id = rowId(chain, entity, index);
    const out: Record<string, unknown> = { __id: id };
    entity.parents.forEach((parent, i) => {
      out[parentKeyName(parent)] = chain[i] ?? null;
    });
    this.fill(out, entity.properties, item, { setName: entity.setName, chain: [...chain, id] }, expand);
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

/** A stored record (its answers as stored, and its columns) as an entity of `Submissions`. */
export function submissionEntity(root: EntityModel, answers: JsonObject, meta: RecordMeta, context: EntityContext): Record<string, unknown> {
  const id = `uuid:${meta.uuid}`;
  const out: Record<string, unknown> = {
    __id: id,
    __system: {
      submissionDate: meta.submitted,
      updatedAt: meta.modified,
      submitterName: meta.submitter,
      attachmentsPresent: meta.media_count,
      attachmentsExpected: meta.total_media,
      status: answers['_status'] ?? meta.status,
      reviewState: reviewStateOf(answers['_review_status']),
      edited: meta.edited,
      formVersion: answers['_version'] ?? meta.version,
      recordId: meta.id,
    },
  };
  new EntityWriter().fill(out, root.properties, answers, { setName: root.setName, chain: [id] }, context.expand);
  return out;
}

/**
 * A repeat item as a row of its entity set: `positions` are the 1-based positions of the item
 * and of its enclosing repeats' items, from the record down.
 */
export function repeatRowEntity(entity: EntityModel, recordUuid: string, positions: readonly number[], item: JsonObject, context: EntityContext): Record<string, unknown> {
  const levels = [...entity.parents.slice(1), entity];
  const chain = [`uuid:${recordUuid}`];
  for (const [index, level] of levels.slice(0, -1).entries()) chain.push(rowId(chain, level, (positions[index] ?? 1) - 1));
  return new EntityWriter().row(entity, item, (positions[levels.length - 1] ?? 1) - 1, chain, context.expand);
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
