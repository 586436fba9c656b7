// Where an entity set's rows come from in SQL. Submissions are the instances table (alias i); a
// repeat's rows are its items, unnested level by level from the record down (aliases r1, r2, …,
// each with `item` and its 1-based position `n`), so that $filter, $orderby, keyset paging and key
// access read a repeat set as they read the records.
import { sql, type RawBuilder } from 'kysely';
import { parentKeyName, type EntityModel } from './model.ts';

export interface Scope {
  readonly entity: EntityModel;
  /** The JSON object that holds the entity's answers (keyed by their slash paths). */
  readonly answers: RawBuilder<unknown>;
  /** The id properties: `__id` and, on a repeat's rows, each parent's `__<set>-id`. */
  readonly keys: ReadonlyMap<string, RawBuilder<unknown>>;
  /** What joins the instances table (alias i) to make the rows: nothing for the records. */
  readonly joins: RawBuilder<unknown>;
  /** The columns that order rows with equal terms and make each row's keyset position unique. */
  readonly tiebreak: readonly RawBuilder<unknown>[];
  /** The repeats from the record down to this entity (empty for Submissions). */
  readonly levels: readonly EntityModel[];
}

function alias(level: number): RawBuilder<unknown> {
  return sql.raw(`r${level}`);
}

/** The last segment of a repeat's key: its name in row ids (`uuid:…/member/2`). */
export function keyName(entity: EntityModel): string {
  return entity.key.split('/').pop() ?? '';
}

/**
 * The stored record once per row (x.j): each `->` on the column itself fetches and decompresses
 * the record again (it is stored out of line), which made a filter on three answers cost three
 * reads of every record scanned; the concatenation makes one in-memory copy they all read.
 */
const RECORD_ONCE = sql`CROSS JOIN LATERAL (SELECT i.json || '{}'::jsonb AS j OFFSET 0) AS x`;

/** `answersRead`: a $filter or $orderby reads answers (for the records; a repeat's rows always do). */
export function scopeOf(entity: EntityModel, answersRead: boolean): Scope {
  const recordId = sql`('uuid:' || i.uuid)`;
  if (entity.parents.length === 0) {
    const joins = answersRead ? RECORD_ONCE : sql``;
    return { entity, answers: answersRead ? sql`x.j` : sql`i.json`, keys: new Map([['__id', recordId]]), joins, tiebreak: [sql`i.id`], levels: [] };
  }
  const levels = [...entity.parents.slice(1), entity];
  const keys = new Map<string, RawBuilder<unknown>>([[parentKeyName(entity.parents[0] as EntityModel), recordId]]);
  const joins: RawBuilder<unknown>[] = [RECORD_ONCE];
  let id = recordId;
  let container = sql`x.j`;
  for (const [index, repeat] of levels.entries()) {
    const r = alias(index + 1);
    // A repeat's answer that is not an array (no items) gives no rows rather than an error.
    const array = sql`(${container} -> ${repeat.key})`;
    joins.push(sql`CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(${array}) = 'array' THEN ${array} ELSE '[]'::jsonb END) WITH ORDINALITY AS ${r}(item, n)`);
    id = sql`(${id} || ${`/${keyName(repeat)}/`}::text || ${r}.n)`;
    if (repeat !== entity) keys.set(parentKeyName(repeat), id);
    container = sql`${r}.item`;
  }
  keys.set('__id', id);
  const last = alias(levels.length);
  return {
    entity,
    answers: sql`${last}.item`,
    keys,
    joins: sql.join(joins, sql` `),
    tiebreak: [sql`i.id`, ...levels.map((_, index) => sql`${alias(index + 1)}.n::int`)],
    levels,
  };
}

/** The ordinal columns of a repeat scope's levels, as SQL (r1.n, r2.n, …). */
export function ordinals(scope: Scope): RawBuilder<unknown>[] {
  return scope.levels.map((_, index) => sql`${alias(index + 1)}.n::int`);
}

/** Items that are objects only: a repeat item is a JSON object of answers. */
export function rowsAreObjects(scope: Scope): RawBuilder<unknown> {
  return scope.levels.length === 0 ? sql`TRUE` : sql`jsonb_typeof(${scope.answers}) = 'object'`;
}
