// The entities sheet (ODK entities): each row declares that a submission
// creates, updates or upserts an entity of a list. Survey rows link to an
// entity through save_to, or by being referenced from the declaration; the
// declaration is then placed in a meta block of the container those links
// share (the survey, or a repeat).
import { XlsFormError, rowPrefix } from '../errors.ts';
import { ENTITIES_HEADER_ALIASES } from '../spec/aliases.ts';
import { ENTITIES_COLUMNS } from '../spec/columns.ts';
import type { JsonObject } from '../types.ts';
import type { Workbook } from '../workbook/model.ts';
import { isXmlTag, parseReferences } from './expression.ts';
import { groupSheet } from './headers.ts';
import { SUPPRESS_SPELLING_HINT, child, isObject, nested, sheetMisspelling, text } from './json-helpers.ts';

interface ContainerNode {
  name: string;
  type: string;
}
type ContainerPath = ContainerNode[];

const SURVEY_PATH: ContainerPath = [{ name: 'survey', type: 'survey' }];
const keyOf = (path: ContainerPath): string => path.map((n) => `${n.type}:${n.name}`).join('/');
const same = (a: ContainerPath, b: ContainerPath): boolean => keyOf(a) === keyOf(b);
const asString = (path: ContainerPath): string => `/${path.map((n) => n.name).join('/')}`;

/** The path up to and including the nearest repeat (or the survey). */
function scopeBoundary(path: ContainerPath): ContainerPath {
  for (let i = path.length - 1; i >= 0; i--) {
    const type = path[i]?.type;
    if (type === 'repeat' || type === 'survey') return path.slice(0, i + 1);
  }
  return SURVEY_PATH;
}
function boundaryCount(path: ContainerPath): number {
  let n = 0;
  for (let i = path.length - 1; i > 0; i--) if (path[i]?.type === 'repeat') n++;
  return n;
}
function subpathCount(path: ContainerPath): number {
  let n = 0;
  for (let i = path.length - 1; i >= 0; i--) {
    const type = path[i]?.type;
    if (type === 'repeat' || type === 'survey') break;
    n++;
  }
  return n;
}

interface ReferenceSource {
  path: ContainerPath;
  row: number;
  property?: string;
  question?: string;
}

interface Declaration {
  dataset: string;
  row: number;
  entity: JsonObject;
  variables: Set<string>;
}

interface AllocationRequest {
  scope: ContainerPath;
  dataset: string;
  requested: ContainerPath;
  row: number;
  savetoLineages: ContainerPath[];
}

function sheetError(message: string, sheet: string, row: number, column?: string): XlsFormError {
  return new XlsFormError(`${rowPrefix(row)} ${message}`, { code: 'entities', sheet, row, ...(column ? { column } : {}) });
}

function invalidName(sheet: string, row: number, column: string, rule: string): XlsFormError {
  return sheetError(`On the '${sheet}' sheet, the '${column}' value is invalid. ${rule}`, sheet, row, column);
}

const XML_NAME_RULE =
  'Names must begin with a letter or underscore. After the first character, names may contain letters, digits, underscores, hyphens, or periods.';

function checkDatasetName(dataset: string | undefined, row: number): asserts dataset is string {
  if (!dataset) throw sheetError("On the 'entities' sheet, the 'list_name' value is invalid. Entity lists must have a name.", 'entities', row, 'list_name');
  if (dataset.startsWith('__')) throw invalidName('entities', row, 'dataset', 'Names used here must not begin with two underscores.');
  if (dataset.includes('.')) throw invalidName('entities', row, 'dataset', 'Names used here must not contain a period.');
  if (!isXmlTag(dataset)) throw invalidName('entities', row, 'dataset', XML_NAME_RULE);
}

function declaration(data: JsonObject, row: number): Declaration {
  const extra = Object.keys(data).filter((k) => !ENTITIES_COLUMNS.has(k));
  if (extra.length > 0) {
    throw new XlsFormError(
      `[row : 1] On the 'entities' sheet, one or more column names are invalid. The following column(s) are not supported by this version of pyxform: ${extra.map((k) => `'${k}'`).join(', ')}. Please either: check the spelling of the column names, remove the columns, or update pyxform.`,
      { code: 'entities', sheet: 'entities', row: 1 },
    );
  }
  const dataset = text(data['dataset']);
  const entityId = text(data['entity_id']);
  const createIf = text(data['create_if']);
  const updateIf = text(data['update_if']);
  const label = text(data['label']);
  checkDatasetName(dataset, row);
  const declarationError = (detail: string) =>
    sheetError(`On the 'entities' sheet, the entity declaration is invalid. The entity list name '${dataset}' ${detail}`, 'entities', row);
  if (!entityId && updateIf) {
    throw declarationError(
      "does not have an 'entity_id' expression, but an 'entity_id' is required when updating entities. Updating entities is indicated by using 'entity_id' and/or 'update_if' expressions. Please either: add an 'entity_id' for this entity declaration, or to only create entities instead move the 'update_if' to 'create_if'.",
    );
  }
  if (entityId && createIf && !updateIf) {
    throw declarationError(
      "does not have an 'update_if' expression, but an 'update_if' is required when upserting entities. Upserting entities is indicated by using 'create_if' and 'entity_id' expressions. Please either: add an 'update_if' for this entity declaration, or to only create entities instead remove the 'entity_id' expression.",
    );
  }
  if (!entityId && !label) {
    throw declarationError(
      "does not have a label, but a 'label' is required when creating entities. Creating entities is indicated by using a 'create_if' expression, or by not using 'entity_id' expression. Please either: add a 'label' for this entity declaration, or to update entities instead provide an 'entity_id' (and optionally 'update_if') expression.",
    );
  }
  const variables = new Set<string>();
  for (const value of [entityId, createIf, updateIf, label]) {
    if (value === undefined) continue;
    const refs = parseReferences(value);
    if (refs === 'malformed') {
      throw sheetError("On the 'entities' sheet, the value is invalid. Reference variables must start with '${', then a question name, and end with '}'.", 'entities', row);
    }
    for (const ref of refs) variables.add(ref.name);
  }
  const readonly = (calculate: string): JsonObject => ({ calculate, readonly: 'true()', type: 'string' });
  const children: JsonObject[] = [{ name: 'dataset', type: 'attribute', value: dataset }];
  const idActions: JsonObject[] = [];
  const idAttr: JsonObject = { name: 'id', type: 'attribute', bind: { readonly: 'true()', type: 'string' }, actions: idActions };
  if (!entityId || createIf) {
    const create: JsonObject = { name: 'create', type: 'attribute', value: '1' };
    if (createIf) create['bind'] = readonly(createIf);
    children.push(create);
    if (!entityId) idActions.push({ name: 'setvalue', event: 'odk-instance-first-load', value: 'uuid()' });
  }
  if (entityId) {
    const update: JsonObject = { name: 'update', type: 'attribute', value: '1' };
    if (updateIf) update['bind'] = readonly(updateIf);
    children.push(update);
    child(idAttr, 'bind')['calculate'] = entityId;
    const item = `instance('${dataset}')/root/item[name=${entityId}]`;
    children.push(
      { name: 'baseVersion', type: 'attribute', bind: readonly(`${item}/__version`) },
      { name: 'trunkVersion', type: 'attribute', bind: readonly(`${item}/__trunkVersion`) },
      { name: 'branchId', type: 'attribute', bind: readonly(`${item}/__branchId`) },
    );
  }
  children.push(idAttr);
  if (label) children.push({ type: 'label', name: 'label', bind: readonly(label) });
  return { dataset, row, entity: { name: 'entity', type: 'entity', children }, variables };
}

export interface EntityContext {
  noteRow(row: JsonObject, rowNumber: number, name: string | undefined, isBegin: boolean, isEnd: boolean): void;
  pushContainer(type: string, name: string): void;
  popContainer(): void;
  hasDataset(name: string): boolean;
  apply(json: JsonObject): void;
}

export function parseEntities(workbook: Workbook, warnings: string[]): EntityContext | undefined {
  const sheet = workbook.sheets.get('entities');
  if (!sheet) {
    const similar = sheetMisspelling('entities', workbook.sheetNames);
    if (similar) warnings.push(similar + SUPPRESS_SPELLING_HINT);
    return undefined;
  }
  const grouped = groupSheet(sheet, { sheetName: 'entities', aliases: ENTITIES_HEADER_ALIASES, columns: ENTITIES_COLUMNS });
  const declarations = new Map<string, Declaration>();
  for (const { row, data } of grouped.rows) {
    const d = declaration(data, row);
    if (declarations.has(d.dataset)) {
      throw sheetError("On the 'entities' sheet, the 'list_name' value is invalid. The 'list_name' column must not have any duplicate names.", 'entities', row, 'list_name');
    }
    declarations.set(d.dataset, d);
  }
  if (declarations.size === 0) return undefined;
  return new Entities(declarations);
}

class Entities implements EntityContext {
  private readonly path: ContainerPath[] = [SURVEY_PATH];
  private readonly referencesByDataset = new Map<string, ReferenceSource[]>();
  private readonly variableDatasets = new Map<string, string[]>();

  constructor(private readonly declarations: Map<string, Declaration>) {
    for (const d of declarations.values()) {
      for (const q of d.variables) this.variableDatasets.set(q, [...(this.variableDatasets.get(q) ?? []), d.dataset]);
    }
  }

  hasDataset(name: string): boolean {
    return this.declarations.has(name);
  }

  pushContainer(type: string, name: string): void {
    this.path.push([...this.current(), { name, type }]);
  }

  popContainer(): void {
    if (this.path.length > 1) this.path.pop();
  }

  private current(): ContainerPath {
    return this.path[this.path.length - 1] ?? SURVEY_PATH;
  }

  private references(dataset: string): ReferenceSource[] {
    let list = this.referencesByDataset.get(dataset);
    if (!list) {
      list = [];
      this.referencesByDataset.set(dataset, list);
    }
    return list;
  }

  noteRow(row: JsonObject, rowNumber: number, name: string | undefined, isBegin: boolean, isEnd: boolean): void {
    const bind = nested(row, 'bind');
    let saveto = text(bind?.['entities:saveto']);
    const path = this.current();
    if (saveto && bind) {
      const hashes = saveto.split('#').length - 1;
      let dataset: string;
      if (hashes === 1) {
        const [list = '', property = ''] = saveto.split('#');
        dataset = list;
        saveto = property;
        bind['entities:saveto'] = saveto;
      } else if (hashes > 1) {
        throw sheetError("On the 'survey' sheet, the 'save_to' value is invalid. A 'save_to' value must have at most one '#' delimiter character. Please check the spelling of this 'save_to' value.", 'survey', rowNumber, 'save_to');
      } else {
        if (this.declarations.size > 1) {
          throw sheetError(
            "On the 'survey' sheet, the 'save_to' value is invalid. When there is more than one entity declaration, 'save_to' names must be prefixed with the entity 'list_name' that the property belongs to. Please either: add the entity 'list_name' prefix separated with a '#' e.g. my_list#my_save_to (where 'my_list' is the entity 'list_name', and 'my_save_to' is the 'save_to' property name), or remove all but one entity declaration.",
            'survey',
            rowNumber,
            'save_to',
          );
        }
        dataset = [...this.declarations.keys()][0] ?? '';
      }
      if (!this.declarations.has(dataset)) {
        throw sheetError(
          `On the 'survey' sheet, the 'save_to' value is invalid. The entity list name '${dataset}' was not found on the entities sheet. Please either: check the spelling of the list name in the save_to value, or on the entities sheet add a row for this entity list, or check the spelling of existing entity list names.`,
          'survey',
          rowNumber,
          'save_to',
        );
      }
      const refs = this.references(dataset);
      this.checkSaveto(saveto, rowNumber, isBegin, isEnd, refs);
      refs.push({ path, row: rowNumber, property: saveto });
    }
    if (name !== undefined) {
      for (const dataset of this.variableDatasets.get(name) ?? []) this.references(dataset).push({ path, row: rowNumber, question: name });
    }
  }

  private checkSaveto(saveto: string, row: number, isBegin: boolean, isEnd: boolean, refs: ReferenceSource[]): void {
    if (!saveto) throw invalidName('survey', row, 'save_to', XML_NAME_RULE);
    if (isBegin || isEnd) {
      throw sheetError("On the 'survey' sheet, the 'save_to' value is invalid. Groups and repeats can't be saved as entity properties. Either remove or move the save_to value in this row.", 'survey', row, 'save_to');
    }
    if (['name', 'label'].includes(saveto.toLowerCase())) throw invalidName('survey', row, 'save_to', "Names used here must not be 'name' or 'label' (case-insensitive).");
    if (saveto.startsWith('__')) throw invalidName('survey', row, 'save_to', 'Names used here must not begin with two underscores.');
    if (!isXmlTag(saveto)) throw invalidName('survey', row, 'save_to', XML_NAME_RULE);
    const other = refs.find((r) => r.property === saveto);
    if (other) {
      throw sheetError(
        `On the 'survey' sheet, the 'save_to' value is invalid. The save_to property '${saveto}' is already assigned by row '${other.row}'. Either remove or change one of these duplicate save_to property names.`,
        'survey',
        row,
        'save_to',
      );
    }
  }

  private allocationRequest(dataset: string, refs: ReferenceSource[]): AllocationRequest {
    const declarationRow = this.declarations.get(dataset)?.row ?? 0;
    let deepestScopeRef: ReferenceSource | undefined;
    let deepestBoundary: ContainerPath | undefined;
    let deepestBoundaryCount = 0;
    let deepestContainer: ReferenceSource | undefined;
    let deepestContainerCount = 0;
    let deepestSaveto: ReferenceSource | undefined;
    let deepestSavetoCount = 0;
    const lineages = new Map<string, ContainerPath>();
    const boundaries: Array<[ReferenceSource, ContainerPath]> = [];
    for (const ref of refs) {
      const subpath = subpathCount(ref.path);
      const boundary = scopeBoundary(ref.path);
      const count = boundaryCount(boundary);
      if (deepestBoundary === undefined || count > deepestBoundaryCount) {
        if (!deepestBoundary || !same(boundary, deepestBoundary)) {
          deepestContainer = ref;
          deepestContainerCount = subpath;
          if (ref.property !== undefined) {
            deepestSaveto = ref;
            deepestSavetoCount = subpath;
          }
        }
        deepestBoundary = boundary;
        deepestBoundaryCount = count;
        deepestScopeRef = ref;
      }
      boundaries.push([ref, boundary]);
      if (!deepestContainer || (same(boundary, deepestBoundary) && subpath > deepestContainerCount)) {
        deepestContainer = ref;
        deepestContainerCount = subpath;
      }
      if (ref.property !== undefined) {
        lineages.set(keyOf(ref.path), ref.path);
        if (!deepestSaveto || (same(boundary, deepestBoundary) && subpath > deepestSavetoCount)) {
          deepestSaveto = ref;
          deepestSavetoCount = subpath;
        }
      }
    }
    const scope = deepestBoundary ?? SURVEY_PATH;
    let requested = deepestSaveto?.path ?? deepestContainer?.path ?? SURVEY_PATH;
    const lineageList = [...lineages.values()];
    const first = lineageList[0];
    if (first) {
      const minLength = Math.min(...lineageList.map((p) => p.length));
      let common = first.slice(0, minLength);
      if (lineageList.length > 1) {
        outer: for (let i = 0; i < minLength; i++) {
          for (const other of lineageList) {
            if (keyOf([other[i] ?? { name: '', type: '' }]) !== keyOf([first[i] ?? { name: '', type: '' }])) {
              common = first.slice(0, i);
              break outer;
            }
          }
        }
        const candidate = scopeBoundary(deepestSaveto?.path ?? SURVEY_PATH);
        const rank = (p: ContainerPath): [number, number] => [boundaryCount(p), subpathCount(p)];
        const [a1, a2] = rank(candidate);
        const [b1, b2] = rank(common);
        requested = b1 > a1 || (b1 === a1 && b2 > a2) ? common : candidate;
      } else requested = common;
    }
    const requestedScope = scopeBoundary(requested);
    for (const [ref, boundary] of boundaries) {
      if (keyOf(scope.slice(0, boundary.length)) !== keyOf(boundary)) {
        if (ref.property !== undefined) {
          throw sheetError(
            `On the 'survey' sheet, the 'save_to' value is invalid. The entity list name '${dataset}' has a reference in container scope '${asString(deepestScopeRef?.path ?? SURVEY_PATH)}' which is not compatible with this 'save_to' reference in scope '${asString(ref.path)}'. Please either: check the spelling of the list name in the 'save_to', or copy either value into the desired container scope with a 'calculate' question then use that 'calculate' for the 'save_to'.`,
            'survey',
            ref.row,
            'save_to',
          );
        }
        throw sheetError(
          `On the 'entities' sheet, the entity declaration is invalid. The entity list name '${dataset}' has a reference in container scope '${asString(deepestScopeRef?.path ?? SURVEY_PATH)}' which is not compatible with the variable reference to '${ref.question ?? ''}' in scope '${asString(ref.path)}'. Please either: check the spelling of the variable references, or copy either value into the desired container scope with a 'calculate' question then use that 'calculate' for the 'save_to'.`,
          'entities',
          declarationRow,
        );
      }
      if (ref.property !== undefined && !same(requestedScope, boundary)) {
        throw sheetError(
          `On the 'survey' sheet, the 'save_to' value is invalid. The entity list name '${dataset}' has a reference in container scope '${asString(requested)}' which is not compatible with this 'save_to' reference in scope '${asString(ref.path)}'. Please either: check the spelling of the list name in the 'save_to', or copy either value into the desired container scope with a 'calculate' question then use that 'calculate' for the 'save_to'.`,
          'survey',
          ref.row,
          'save_to',
        );
      }
    }
    return { scope, dataset, requested, row: declarationRow, savetoLineages: lineageList };
  }

  private allocate(): Map<string, [ContainerPath, string]> {
    const byScope = new Map<string, [ContainerPath, AllocationRequest[]]>();
    const add = (req: AllocationRequest) => {
      const key = keyOf(req.scope);
      const entry = byScope.get(key) ?? [req.scope, []];
      entry[1].push(req);
      byScope.set(key, entry);
    };
    for (const [dataset, refs] of this.referencesByDataset) add(this.allocationRequest(dataset, refs));
    for (const [dataset, d] of this.declarations) {
      if (!this.referencesByDataset.has(dataset)) add({ scope: SURVEY_PATH, dataset, requested: SURVEY_PATH, row: d.row, savetoLineages: [] });
    }
    const allocations = new Map<string, [ContainerPath, string]>();
    const scopes = [...byScope.values()];
    const only = scopes[0];
    if (scopes.length === 1 && only && same(only[0], SURVEY_PATH) && only[1].length === 1) {
      allocations.set(keyOf(SURVEY_PATH), [SURVEY_PATH, only[1][0]?.dataset ?? '']);
      return allocations;
    }
    const reserved = new Map<string, string>();
    for (const [scope, requests] of scopes) {
      const depthLimit = scope.length - 1;
      for (const req of [...requests].sort((a, b) => a.row - b.row)) {
        let conflict: string | undefined;
        for (let depth = req.requested.length; depth > depthLimit; depth--) {
          const path = req.requested.slice(0, depth);
          const key = keyOf(path);
          conflict = allocations.get(key)?.[1] ?? reserved.get(key);
          if (conflict !== undefined) {
            const viaSaveto = req.savetoLineages.map((l) => reserved.get(keyOf(l))).find((v) => v !== undefined);
            if (viaSaveto) {
              conflict = viaSaveto;
              break;
            }
            continue;
          }
          allocations.set(key, [path, req.dataset]);
          reserved.set(key, req.dataset);
          for (const lineage of req.savetoLineages) {
            for (let i = lineage.length; i > path.length - 1; i--) reserved.set(keyOf(lineage.slice(0, i)), req.dataset);
          }
          break;
        }
        if (conflict !== undefined) {
          throw sheetError(
            `On the 'entities' sheet, the entity declaration is invalid. Each container (survey, group, repeat) may have only one entity declaration, but there are no valid containers available in the scope: '${asString(scope)}', which has been allocated to the entity on row '${this.declarations.get(conflict)?.row ?? 0}'. Please either: check which entities are referred to from the 'survey' sheetin the 'save_to' column, or check which questions are being referred to in the 'entities' sheet declarations, or move the entity declaration to an appropriate container.`,
            'entities',
            req.row,
          );
        }
      }
    }
    return allocations;
  }

  apply(json: JsonObject): void {
    const allocations = this.allocate();
    const prefixes = new Set<string>();
    for (const [path] of allocations.values()) for (let i = 1; i <= path.length; i++) prefixes.add(keyOf(path.slice(0, i)));
    const placed = new Set<string>();
    const inject = (node: JsonObject, path: ContainerPath, inRepeat: boolean): void => {
      const dataset = allocations.get(keyOf(path))?.[1];
      if (dataset && !placed.has(dataset)) {
        const entity = this.declarations.get(dataset)?.entity;
        if (entity) {
          if (inRepeat) {
            const children = Array.isArray(entity['children']) ? entity['children'] : [];
            const idAttr = children.find((c) => isObject(c) && c['name'] === 'id');
            const actions = isObject(idAttr) && Array.isArray(idAttr['actions']) ? idAttr['actions'] : [];
            const first = actions[0];
            if (actions.length === 1 && isObject(first)) actions.push({ name: 'setvalue', event: 'odk-new-repeat', value: first['value'] ?? '' });
          }
          const children = Array.isArray(node['children']) ? node['children'] : [];
          node['children'] = children;
          children.push({ name: 'meta', type: 'group', control: { bodyless: true }, children: [entity] });
          placed.add(dataset);
        }
      }
      let repeatAncestor = inRepeat;
      for (const c of Array.isArray(node['children']) ? node['children'] : []) {
        if (!isObject(c)) continue;
        const name = text(c['name']);
        const type = text(c['type']);
        if (!name || (type !== 'group' && type !== 'repeat')) continue;
        const childPath = [...path, { name, type }];
        if (!repeatAncestor && type === 'repeat') repeatAncestor = true;
        if (prefixes.has(keyOf(childPath))) inject(c, childPath, repeatAncestor);
      }
    };
    inject(json, SURVEY_PATH, json['type'] === 'repeat');
    const nested = this.declarations.size > 1 || [...allocations.values()].some(([p]) => boundaryCount(p) > 0);
    json['entity_version'] = nested ? '2025.1.0' : '2024.1.0';
  }
}
