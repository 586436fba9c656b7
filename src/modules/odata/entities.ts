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

/**
 * Writes entities as JSON text directly (no object per entity and group to build and then
 * serialise): the feed's pages are most of what it spends its time on.
 */
class EntityWriter {
  fields(out: string[], properties: readonly Property[], source: JsonObject, setName: string, chain: readonly string[], expand: ExpandTree, pick: Pick): void {
    for (const property of properties) {
      if (property.kind === 'repeat') {
        const inner = expandOf(expand, property.name);
        if (inner !== undefined && pickOfName(pick, property.name) !== undefined) {
          const rows = repeatItems(source, property.key).map((item, index) => this.row(property.entity, item, index, chain, inner, true));
          out.push(`${jsonKey(property.name)}[${rows.join(',')}]`);
        } else if (inner === undefined) {
          out.push(jsonKey(`${property.name}@odata.navigationLink`) + JSON.stringify(`${keySegment(setName, chain[chain.length - 1] ?? '')}/${property.name}`));
        }
        continue;
      }
      const chosen = pickOfName(pick, property.name);
      if (chosen === undefined) continue;
      if (property.kind === 'answer') {
        out.push(jsonKey(property.name) + JSON.stringify(answerValue(property, source[property.key])));
      } else {
        const group: string[] = [];
        this.fields(group, property.properties, source, setName, chain, expand, chosen);
        out.push(`${jsonKey(property.name)}{${group.join(',')}}`);
      }
    }
  }

  /** A repeat item as a row; `chain` holds the ids of its parents, the record's first. */
  row(entity: EntityModel, item: JsonObject, index: number, chain: readonly string[], expand: ExpandTree, pick: Pick): string {
    const id = rowId(chain, entity, index);
    const out = [jsonKey('__id') + JSON.stringify(id)];
    entity.parents.forEach((parent, i) => {
      const name = parentKeyName(parent);
      if (pickOfName(pick, name) !== undefined) out.push(jsonKey(name) + JSON.stringify(chain[i] ?? null));
    });
    this.fields(out, entity.properties, item, entity.setName, [...chain, id], expand, pick);
    return `{${out.join(',')}}`;
  }
}

const WRITER = new EntityWriter();

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

/** A stored record (its answers as stored, and its columns) as the JSON text of an entity of `Submissions`. */
export function submissionText(root: EntityModel, answers: JsonObject, meta: RecordMeta, context: EntityContext): string {
  const id = `uuid:${meta.uuid}`;
  const out = [jsonKey('__id') + JSON.stringify(id)];
  const systemPick = pickOfName(context.pick, '__system');
  if (systemPick !== undefined) {
    const system: Record<string, unknown> = {
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
    };
    if (systemPick !== true) for (const name of Object.keys(system)) if (!systemPick.has(name)) delete system[name];
    out.push(jsonKey('__system') + JSON.stringify(system));
  }
  WRITER.fields(out, root.properties, answers, root.setName, [id], context.expand, context.pick);
  return `{${out.join(',')}}`;
}

/**
 * A repeat item as the JSON text of a row of its entity set: `positions` are the 1-based positions
 * of the item and of its enclosing repeats' items, from the record down.
 */
export function repeatRowText(entity: EntityModel, recordUuid: string, positions: readonly number[], item: JsonObject, context: EntityContext): string {
  const levels = [...entity.parents.slice(1), entity];
  const chain = [`uuid:${recordUuid}`];
  for (const [index, level] of levels.slice(0, -1).entries()) chain.push(rowId(chain, level, (positions[index] ?? 1) - 1));
  return WRITER.row(entity, item, (positions[levels.length - 1] ?? 1) - 1, chain, context.expand, context.pick);
}
