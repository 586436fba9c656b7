// Records' entity texts as last written, for the pages that are read again and again (a
// dashboard's filtered page, a small feed refreshed on a schedule): reading a stored record,
// parsing it and writing its entity is most of what such a page costs. An entity's text is a
// function of its form's model, the request's $select and $expand (its "shape"), the record's
// stored text and its columns. An entry is used only for the same shape, the same version of the
// record's row (its stamp: the id of the transaction that wrote it, which every write to the row
// changes) and the same columns, so an edit, a review, a new attachment or a renamed submitter
// shows at once; a deleted record, or one the reader may not see, is never read to be looked up.
// Bounded by bytes, least recently used first out. An entry holds the entity's UTF-8 bytes, as the
// page sends them: a page of remembered entities is then copied once into the response, not joined,
// flattened, measured and encoded as text again on every read.
import { submissionWriter, type EntityContext, type ExpandTree, type Pick, type RecordMeta } from './entities.ts';
import type { EntityModel, Property } from './model.ts';

/** What the memo may hold: the entities' bytes and each entry's own cost. */
export const MEMO_BYTES = 4 * 1024 * 1024;
/**
 * Pages of more entities than this are written without the memo: its entities would push out
 * those of the pages read again and again, and would not all be there on the page's next read.
 */
export const MEMO_PAGE = 1000;
/** What an entry costs besides its bytes (the entry, its map slot, its copy of the columns, the Buffer). */
const ENTRY_BYTES = 400;

export interface MemoEntry {
  readonly shape: number;
  /** The record version's stamp (readRecords): the record's stored text is that version's. */
  readonly stamp: string;
  readonly meta: RecordMeta;
  /** The entity, UTF-8. */
  readonly body: Buffer;
  /** What the entry counts against the budget. */
  readonly cost: number;
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

/** Whether an entry is the entity of this record version, in this shape, with these columns. */
export function entryFits(entry: MemoEntry | undefined, shape: number, stamp: string, meta: RecordMeta): entry is MemoEntry {
  return entry !== undefined && entry.shape === shape && entry.stamp === stamp && sameMeta(entry.meta, meta);
}

/** The entries of one shape as a request takes them (EntityMemo.knownOf). */
export interface KnownEntries {
  readonly entries: ReadonlyMap<number, MemoEntry>;
  /** Their record versions, `id:stamp`. */
  readonly versions: readonly string[];
  /** The same, comma-separated: one text for the read to send (readRecords). */
  readonly list: string;
}

/** An entry's place in the memo's order of use: a link in a list, least recently used first. */
interface Link {
  readonly entry: MemoEntry;
  older: Link | undefined;
  newer: Link | undefined;
}

export class EntityMemo {
  /** By record id. */
  private readonly links = new Map<number, Link>();
  /**
   * The order of use, least recently used first: a page's entries are marked used on every read,
   * and moving a link costs nothing, where moving an entry to a Map's end (delete and set again)
   * cost a page about a millisecond.
   */
  private oldest: Link | undefined;
  private newest: Link | undefined;
  private used = 0;
  /**
   * knownOf's answers by shape, until an entry is added or removed: a page read again and again
   * finds the memo as it left it, and would otherwise list every entry of its shape on every request.
   */
  private readonly known = new Map<number, KnownEntries>();

  constructor(private readonly budget: number) {}

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.links.size;
  }

  /** The entries of a shape, as they are now: of the records `ids`, or all of them. */
  entriesOf(shape: number, ids?: readonly number[]): Map<number, MemoEntry> {
    const out = new Map<number, MemoEntry>();
    if (ids === undefined) {
      for (const [id, { entry }] of this.links) if (entry.shape === shape) out.set(id, entry);
    } else {
      for (const id of ids) {
        const entry = this.links.get(id)?.entry;
        if (entry !== undefined && entry.shape === shape) out.set(id, entry);
      }
    }
    return out;
  }

  /**
   * The entries of a shape and their versions, as they are now (the same object until the memo's
   * entries change: its readers only read it).
   */
  knownOf(shape: number): KnownEntries {
    let known = this.known.get(shape);
    if (known === undefined) {
      const entries = this.entriesOf(shape);
      const versions = [...entries.values()].map((entry) => `${entry.meta.id}:${entry.stamp}`);
      known = { entries, versions, list: versions.join(',') };
      this.known.set(shape, known);
    }
    return known;
  }

  /** The entity written for this record version in this shape, if it is remembered. */
  find(shape: number, stamp: string, meta: RecordMeta): Buffer | undefined {
    const link = this.links.get(meta.id);
    if (link === undefined || !entryFits(link.entry, shape, stamp, meta)) return undefined;
    this.use(link);
    return link.entry.body;
  }

  /** Marks an entry (taken from entriesOf) as the most recently used, if it is still here. */
  touch(entry: MemoEntry): void {
    const link = this.links.get(entry.meta.id);
    if (link !== undefined && link.entry === entry) this.use(link);
  }

  remember(shape: number, stamp: string, meta: RecordMeta, body: Buffer): void {
    this.known.clear();
    const known = this.links.get(meta.id);
    if (known !== undefined) this.remove(known);
    const cost = body.length + ENTRY_BYTES;
    if (cost > this.budget) return;
    // The columns are copied: the row they come from holds more than the entity needs.
    const { id, uuid, submitted, modified, submitter, edited, media_count, total_media, status, version } = meta;
    const link: Link = {
      entry: { shape, stamp, meta: { id, uuid, submitted, modified, submitter, edited, media_count, total_media, status, version }, body, cost },
      older: this.newest,
      newer: undefined,
    };
    if (this.newest === undefined) this.oldest = link;
    else this.newest.newer = link;
    this.newest = link;
    this.links.set(id, link);
    this.used += cost;
    while (this.used > this.budget && this.oldest !== undefined) this.remove(this.oldest);
  }

  /** Moves a link to the newest end. */
  private use(link: Link): void {
    if (link === this.newest) return;
    this.unlink(link);
    link.older = this.newest;
    link.newer = undefined;
    if (this.newest === undefined) this.oldest = link;
    else this.newest.newer = link;
    this.newest = link;
  }

  private remove(link: Link): void {
    this.unlink(link);
    this.links.delete(link.entry.meta.id);
    this.used -= link.entry.cost;
  }

  private unlink(link: Link): void {
    if (link.older === undefined) this.oldest = link.newer;
    else link.older.newer = link.newer;
    if (link.newer === undefined) this.newest = link.older;
    else link.newer.older = link.older;
    link.older = undefined;
    link.newer = undefined;
  }
}

const MEMO = new EntityMemo(MEMO_BYTES);

/**
 * An entity's UTF-8 bytes in a Buffer of their own (a writer's bytes are a view of its reused
 * buffer): a slice of Buffer's shared pool would keep the pool's other 8 KB alive for as long as
 * the memo keeps the entry.
 */
export function entityBytes(written: Uint8Array): Buffer {
  const body = Buffer.allocUnsafeSlow(written.length);
  body.set(written);
  return body;
}

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

/** Entity models' descriptions as JSON: a feed's model is kept for its form (service.ts), and described once. */
const DESCRIBED = new WeakMap<EntityModel, string>();

function describedEntity(root: EntityModel): string {
  let described = DESCRIBED.get(root);
  if (described === undefined) {
    described = JSON.stringify(describeEntity(root));
    DESCRIBED.set(root, described);
  }
  return described;
}

/** Shapes by their description, numbered; never renumbered, so that a number cleared away is never reused. */
const SHAPES = new Map<string, number>();
let shapesMade = 0;
/** A form replaced many times over in a long-lived process must not grow the shapes without end. */
const MAX_SHAPES = 1000;

/** The number of the shape of `root`'s entities written for `context`: the same for the same model and options. */
export function shapeOf(root: EntityModel, context: EntityContext): number {
  const description = `[${describedEntity(root)},${JSON.stringify(describeTree(context.expand))},${JSON.stringify(describeTree(context.pick))}]`;
  let shape = SHAPES.get(description);
  if (shape === undefined) {
    if (SHAPES.size >= MAX_SHAPES) SHAPES.clear();
    shapesMade += 1;
    shape = shapesMade;
    SHAPES.set(description, shape);
  }
  return shape;
}

/** A record as read for a page: its stored text (null: not sent, see readRecords), its stamp and columns. */
export interface StampedRecord extends RecordMeta {
  readonly json: string | null;
  readonly stamp: string;
}

/** How one request writes its records' entities. */
export interface RecordWriter {
  /**
   * The record versions (`id:stamp`) whose entities the memo holds for this request, to be read
   * without their stored text; undefined when the request does not use the memo.
   */
  readonly known: readonly string[] | undefined;
  /** `known`, comma-separated (what the read sends). */
  readonly knownList: string | undefined;
  /** The columns of a record version named in `known` (a read leaves them out: see readRecords). */
  recall(id: number, stamp: string): RecordMeta | undefined;
  /** Whether `write` can write this record as it was read (else its stored text must be read first). */
  writable(record: StampedRecord): boolean;
  /**
   * The record's entity as UTF-8, only for a record that is writable: the memo's own bytes when it
   * is remembered, else a view of the request's writer, valid until the next record is written.
   */
  write(record: StampedRecord): Buffer;
}

/**
 * The records' entities of one request, through the memo when `remembered`: `ids`, when the
 * request reads known records (one by key), limits what it asks the memo about.
 */
export function recordWriter(root: EntityModel, context: EntityContext, remembered: boolean, ids?: readonly number[], memo: EntityMemo = MEMO): RecordWriter {
  const text = submissionWriter(root, context);
  const write = (json: string, meta: RecordMeta): Buffer => text(JSON.parse(json) as Record<string, unknown>, meta);
  if (!remembered) {
    return {
      known: undefined,
      knownList: undefined,
      recall: () => undefined,
      writable: (record) => record.json !== null,
      write: (record) => {
        if (record.json === null) throw new Error(`record ${record.id} was read without its text`);
        return write(record.json, record);
      },
    };
  }
  const shape = shapeOf(root, context);
  // The entries are taken when the request starts: another request pushing them out of the memo
  // meanwhile does not take away those this one was read without the stored texts of.
  let entries: ReadonlyMap<number, MemoEntry>;
  let known: readonly string[];
  let knownList: string;
  if (ids === undefined) ({ entries, versions: known, list: knownList } = memo.knownOf(shape));
  else {
    entries = memo.entriesOf(shape, ids);
    known = [...entries.values()].map((entry) => `${entry.meta.id}:${entry.stamp}`);
    knownList = known.join(',');
  }
  return {
    known,
    knownList,
    recall: (id, stamp) => {
      const entry = entries.get(id);
      return entry !== undefined && entry.stamp === stamp ? entry.meta : undefined;
    },
    writable: (record) => record.json !== null || entryFits(entries.get(record.id), shape, record.stamp, record),
    write: (record) => {
      const entry = entries.get(record.id);
      if (entryFits(entry, shape, record.stamp, record)) {
        memo.touch(entry);
        return entry.body;
      }
      const found = memo.find(shape, record.stamp, record);
      if (found !== undefined) return found;
      if (record.json === null) throw new Error(`record ${record.id} was read without its text and is not in the memo`);
      const body = entityBytes(write(record.json, record));
      memo.remember(shape, record.stamp, record, body);
      return body;
    },
  };
}
