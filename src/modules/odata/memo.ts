// Records' entity texts as last written, for the pages that are read again and again (a
// dashboard's filtered page, a small feed refreshed on a schedule): parsing a stored record and
// writing its entity is most of what such a page costs the server. An entity's text is a function
// of its form's model, the request's $select and $expand (its "shape"), the record's stored text
// and its columns; an entry is used only when all of them are the same as when it was written, so
// an edit, a review, a new attachment or a renamed submitter shows at once, and a deleted record
// or one the reader may not see is never read to be looked up. Bounded by bytes, least recently
// used first out.
import { submissionText, type EntityContext, type ExpandTree, type Pick, type RecordMeta } from './entities.ts';
import type { EntityModel, Property } from './model.ts';

/** What the memo may hold, counted at two bytes a character (the most a string takes). */
export const MEMO_BYTES = 8 * 1024 * 1024;
/**
 * Pages of more entities than this are written without the memo: its entities would push out
 * those of the pages read again and again, and would not all be there on the page's next read.
 */
export const MEMO_PAGE = 1000;
/** What an entry costs besides its two strings (the entry, its map slot, the meta object). */
const ENTRY_BYTES = 256;

interface Entry {
  readonly shape: number;
  readonly json: string;
  readonly meta: RecordMeta;
  readonly text: string;
  readonly bytes: number;
}

function sameMeta(a: RecordMeta, b: RecordMeta): boolean {
  return (
    a.id === b.id &&
    a.uuid === b.uuid &&
    a.submitted === b.submitted &&
    a.modified === b.modified &&
    a.submitter === b.submitter &&
    a.edited === b.edited &&
    a.media_count === b.media_count &&
    a.total_media === b.total_media &&
    a.status === b.status &&
    a.version === b.version
  );
}

export class EntityMemo {
  /** By record id, least recently used first. */
  private readonly entries = new Map<number, Entry>();
  private used = 0;

  constructor(private readonly budget: number) {}

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The text written for this record in this shape, if its stored text and columns are still those it was written from. */
  find(shape: number, json: string, meta: RecordMeta): string | undefined {
    const entry = this.entries.get(meta.id);
    if (entry === undefined || entry.shape !== shape || entry.json !== json || !sameMeta(entry.meta, meta)) return undefined;
    this.entries.delete(meta.id);
    this.entries.set(meta.id, entry);
    return entry.text;
  }

  remember(shape: number, json: string, meta: RecordMeta, text: string): void {
    const known = this.entries.get(meta.id);
    if (known !== undefined) {
      this.entries.delete(meta.id);
      this.used -= known.bytes;
    }
    const bytes = 2 * (json.length + text.length) + ENTRY_BYTES;
    if (bytes > this.budget) return;
    // The columns are copied: the row they come from holds more than the entity needs.
    const { id, uuid, submitted, modified, submitter, edited, media_count, total_media, status, version } = meta;
    this.entries.set(id, { shape, json, meta: { id, uuid, submitted, modified, submitter, edited, media_count, total_media, status, version }, text, bytes });
    this.used += bytes;
    for (const [oldId, oldest] of this.entries) {
      if (this.used <= this.budget) break;
      this.entries.delete(oldId);
      this.used -= oldest.bytes;
    }
  }
}

const MEMO = new EntityMemo(MEMO_BYTES);

function describeEntity(entity: EntityModel): unknown {
  return [entity.setName, entity.key, entity.properties.map(describeProperty)];
}

function describeProperty(property: Property): unknown {
  switch (property.kind) {
    case 'answer':
      return ['answer', property.name, property.key, property.type];
    case 'group':
      return ['group', property.name, property.properties.map(describeProperty)];
    case 'repeat':
      return ['repeat', property.name, property.key, describeEntity(property.entity)];
  }
}

function describeTree(tree: ExpandTree | Pick): unknown {
  return typeof tree === 'object' ? [...tree].map(([name, inner]) => [name, describeTree(inner)]) : tree;
}

/** Shapes by their description, numbered; never renumbered, so that a number cleared away is never reused. */
const SHAPES = new Map<string, number>();
let shapesMade = 0;
/** A form replaced many times over in a long-lived process must not grow the shapes without end. */
const MAX_SHAPES = 1000;

/** The number of the shape of `root`'s entities written for `context`: the same for the same model and options. */
export function shapeOf(root: EntityModel, context: EntityContext): number {
  const description = JSON.stringify([describeEntity(root), describeTree(context.expand), describeTree(context.pick)]);
  let shape = SHAPES.get(description);
  if (shape === undefined) {
    if (SHAPES.size >= MAX_SHAPES) SHAPES.clear();
    shapesMade += 1;
    shape = shapesMade;
    SHAPES.set(description, shape);
  }
  return shape;
}

/** Writes the records' entities of one request: through the memo when `remembered`, else each one anew. */
export function submissionWriter(root: EntityModel, context: EntityContext, remembered: boolean, memo: EntityMemo = MEMO): (json: string, meta: RecordMeta) => string {
  const write = (json: string, meta: RecordMeta): string => submissionText(root, JSON.parse(json) as Record<string, unknown>, meta, context);
  if (!remembered) return write;
  const shape = shapeOf(root, context);
  return (json, meta) => {
    const known = memo.find(shape, json, meta);
    if (known !== undefined) return known;
    const text = write(json, meta);
    memo.remember(shape, json, meta, text);
    return text;
  };
}
