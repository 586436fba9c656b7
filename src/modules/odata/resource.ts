// The resource path of a feed request, after `odata.svc/`: an entity set (`Submissions`,
// `Submissions.member`), one entity by key (`Submissions('uuid:…')`, `Submissions.member('uuid:…/member/2')`),
// and navigation from an entity to its repeat's rows (`Submissions('uuid:…')/member`, and on down).
import { OptionError } from './options.ts';
import type { EntityModel, ODataModel, Property } from './model.ts';
import { keyName } from './scope.ts';

export interface Resource {
  /** The entity set the answer's entities belong to. */
  readonly entity: EntityModel;
  /** Only the rows of this record (its uuid, without `uuid:`). */
  readonly uuid: string | undefined;
  /** Only the rows below these positions of the enclosing repeats' items (1-based, from the record down). */
  readonly positions: readonly number[];
  /** One entity (the path ends with a key) rather than a collection. */
  readonly single: boolean;
}

/** A path that names nothing in the model (a 404, not a 400). */
export class ResourceNotFound extends Error {}

interface Segment {
  readonly name: string;
  readonly key: string | undefined;
}

/** Splits `a('k')/b('k''s')/c` into segments; quotes may hold slashes and doubled quotes. */
function segments(text: string): Segment[] {
  const out: Segment[] = [];
  let i = 0;
  while (i < text.length) {
    let name = '';
    while (i < text.length && text[i] !== '(' && text[i] !== '/') name += text[i++];
    let key: string | undefined;
    if (text[i] === '(') {
      i += 1;
      if (text[i] !== "'") throw new OptionError(`The key of ${name} must be a quoted string: ${name}('uuid:…').`);
      i += 1;
      key = '';
      for (;;) {
        if (i >= text.length) throw new OptionError(`Unterminated key in ${name}(…).`);
        if (text[i] === "'") {
          if (text[i + 1] === "'") {
            key += "'";
            i += 2;
            continue;
          }
          break;
        }
        key += text[i++];
      }
      i += 1;
      if (text[i] !== ')') throw new OptionError(`Expected ")" after the key of ${name}.`);
      i += 1;
    }
    if (name === '') throw new OptionError('An empty segment in the resource path.');
    out.push({ name, key });
    if (i < text.length) {
      if (text[i] !== '/') throw new OptionError(`Unexpected "${text[i] ?? ''}" in the resource path.`);
      i += 1;
      if (i === text.length) throw new OptionError('The resource path ends with "/".');
    }
  }
  return out;
}

function repeatsOf(properties: readonly Property[]): EntityModel[] {
  return properties.flatMap((p) => (p.kind === 'repeat' ? [p.entity] : p.kind === 'group' ? repeatsOf(p.properties) : []));
}

/** The record uuid and positions a key names, for an entity of `entity`'s set. */
function keyOf(entity: EntityModel, key: string): { uuid: string; positions: number[] } {
  const parts = key.split('/');
  const record = /^uuid:(.+)$/.exec(parts[0] ?? '');
  const levels = [...entity.parents.slice(1), ...(entity.parents.length === 0 ? [] : [entity])];
  if (!record?.[1] || parts.length !== 1 + 2 * levels.length) throw new ResourceNotFound(`No entity ${key} in ${entity.setName}.`);
  const positions = levels.map((level, index) => {
    const position = parts[2 + 2 * index] ?? '';
    if (parts[1 + 2 * index] !== keyName(level) || !/^[1-9]\d{0,8}$/.test(position)) throw new ResourceNotFound(`No entity ${key} in ${entity.setName}.`);
    return Number(position);
  });
  return { uuid: record[1], positions };
}

/** Reads the (percent-decoded) path after `odata.svc/`. */
export function parseResource(model: ODataModel, path: string): Resource {
  const [first, ...rest] = segments(path);
  if (!first) throw new ResourceNotFound('No entity set named.');
  let entity = model.sets.get(first.name);
  if (!entity) throw new ResourceNotFound(`No entity set named ${first.name}.`);
  let key = first.key;
  let uuid: string | undefined;
  let positions: number[] = [];
  const restrict = (on: EntityModel, text: string): void => {
    const named = keyOf(on, text);
    uuid = named.uuid;
    positions = named.positions;
  };
  if (key !== undefined) restrict(entity, key);
  for (const segment of rest) {
    if (key === undefined) throw new OptionError(`${segment.name}: navigation follows one entity, as in Submissions('uuid:…')/${segment.name}.`);
    const from: EntityModel = entity;
    const to = repeatsOf(from.properties).find((r) => r.setName === `${from.setName}.${segment.name}`);
    if (!to) throw new ResourceNotFound(`${segment.name} is not a repeat of ${from.setName}.`);
    entity = to;
    key = segment.key;
    if (key !== undefined) {
      const named = keyOf(entity, key);
      // The row's key must lie below the entity navigated from.
      if (named.uuid !== uuid || positions.some((p, i) => named.positions[i] !== p)) throw new ResourceNotFound(`No entity ${key} below that entity.`);
      restrict(entity, key);
    }
  }
  return { entity, uuid, positions, single: key !== undefined };
}
