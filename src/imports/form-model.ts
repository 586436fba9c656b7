// What an import needs to know about a form, read once from its form JSON (pyxform's `children`
// tree): every element with its slash path, the kind of value each question holds, and the
// choice names of its list when the form carries them.

/** The value rules a column is checked against. */
export type ValueKind =
  | 'text'
  | 'integer'
  | 'decimal'
  | 'date'
  | 'datetime'
  | 'time'
  | 'geopoint'
  | 'select_one'
  | 'select_multiple';

export interface ImportQuestion {
  readonly kind: 'question';
  readonly name: string;
  /** Slash path below the root, e.g. `grp/rep/q`. */
  readonly path: string;
  readonly valueKind: ValueKind;
  /** Choice names in form order; null when the list is not in the form (from a file, or dynamic). */
  readonly choices: readonly string[] | null;
  /** `or_other` lists also accept `other`. */
  readonly allowsOther: boolean;
  /** The nearest enclosing repeat, or null. */
  readonly repeat: ImportSection | null;
}

export interface ImportSection {
  readonly kind: 'group' | 'repeat';
  readonly name: string;
  /** '' for the root. */
  readonly path: string;
  readonly children: readonly ImportElement[];
  readonly repeat: ImportSection | null;
}

export type ImportElement = ImportQuestion | ImportSection;

export interface ImportForm {
  readonly rootName: string;
  readonly root: ImportSection;
  /** Every group, repeat and question by slash path. */
  readonly byPath: ReadonlyMap<string, ImportElement>;
  /** Questions outside repeats, in form order: the columns a file must carry (onadata's rule). */
  readonly topLevelQuestions: readonly ImportQuestion[];
}

const KINDS: ReadonlyArray<readonly [ValueKind, readonly string[]]> = [
  ['integer', ['integer', 'int', 'q int', 'add integer prompt']],
  ['decimal', ['decimal', 'q decimal', 'add decimal prompt', 'range']],
  ['date', ['date', 'q date', 'add date prompt', 'today']],
  ['datetime', [
    'datetime', 'dateTime', 'date time', 'q date time', 'q dateTime', 'add date time prompt', 'add dateTime prompt',
    'start', 'start time', 'get start time', 'end', 'end time', 'get end time',
  ]],
  ['time', ['time', 'q time', 'add time prompt']],
  ['geopoint', ['geopoint', 'q geopoint', 'location', 'q location', 'add location prompt', 'gps', 'start-geopoint', 'background-geopoint']],
  ['select_one', ['select one', 'select_one', 'q select1', 'add select one prompt using', 'select one from', 'select_one_from_file', 'select one from file', 'select one external']],
  ['select_multiple', [
    'select all that apply', 'select all that apply from', 'select multiple', 'select multiple from', 'select_multiple',
    'select multiple using', 'add select multiple prompt using', 'q select', 'select_multiple_from_file', 'select multiple from file',
  ]],
];
const KIND_OF_TYPE: ReadonlyMap<string, ValueKind> = new Map(KINDS.flatMap(([kind, types]) => types.map((t) => [t, kind] as const)));

/** Elements that hold no answer in an instance. */
const VALUELESS_TYPES: ReadonlySet<string> = new Set(['note', 'q note', 'add note prompt', 'comment']);

type JsonObject = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function choiceNames(list: unknown): string[] | null {
  if (!Array.isArray(list)) return null;
  const names: string[] = [];
  for (const item of list) {
    if (!isObject(item)) continue;
    const name = item['name'];
    if (typeof name === 'string') names.push(name);
    else if (typeof name === 'number') names.push(String(name));
  }
  return names.length > 0 ? names : null;
}

/** Lists that come from a file or depend on other answers cannot be checked here. */
function staticChoices(element: JsonObject, choices: JsonObject): string[] | null {
  const itemset = element['itemset'];
  if (typeof itemset === 'string' && /\.(csv|xml|geojson)$/i.test(itemset)) return null;
  const fromChildren = choiceNames(element['children']);
  if (fromChildren) return fromChildren;
  const listName = typeof element['list_name'] === 'string' ? element['list_name'] : typeof itemset === 'string' ? itemset : null;
  return listName !== null ? choiceNames(choices[listName]) : null;
}

function valueKindOf(element: JsonObject, type: string): ValueKind {
  const kind = KIND_OF_TYPE.get(type);
  if (kind) return kind;
  const bind = element['bind'];
  const bindType = isObject(bind) && typeof bind['type'] === 'string' ? bind['type'] : '';
  if (bindType === 'int') return 'integer';
  if (bindType === 'decimal') return 'decimal';
  if (bindType === 'geopoint') return 'geopoint';
  return 'text';
}

class ModelBuilder {
  readonly byPath = new Map<string, ImportElement>();
  readonly topLevel: ImportQuestion[] = [];

  constructor(private readonly choices: JsonObject) {}

  section(kind: 'group' | 'repeat', name: string, path: string, children: unknown, repeat: ImportSection | null): ImportSection {
    const list: ImportElement[] = [];
    const section: ImportSection = { kind, name, path, children: list, repeat };
    const enclosing = kind === 'repeat' ? section : repeat;
    if (!Array.isArray(children)) return section;
    for (const child of children) {
      if (!isObject(child)) continue;
      const childName = child['name'];
      const type = child['type'];
      if (typeof childName !== 'string' || childName === '' || typeof type !== 'string') continue;
      if (VALUELESS_TYPES.has(type)) continue;
      const childPath = path === '' ? childName : `${path}/${childName}`;
      let element: ImportElement;
      if (type === 'group' || type === 'repeat') {
        element = this.section(type, childName, childPath, child['children'], enclosing);
      } else {
        const valueKind = valueKindOf(child, type);
        const isSelect = valueKind === 'select_one' || valueKind === 'select_multiple';
        element = {
          kind: 'question',
          name: childName,
          path: childPath,
          valueKind,
          choices: isSelect ? staticChoices(child, this.choices) : null,
          allowsOther: isSelect && (child['or_other'] === true || /\bor_other$/.test(type)),
          repeat: enclosing,
        };
        if (enclosing === null) this.topLevel.push(element);
      }
      if (!this.byPath.has(childPath)) this.byPath.set(childPath, element);
      list.push(element);
    }
    return section;
  }
}

/** Reads the import's view of a form from its form JSON. */
export function buildImportForm(formJson: JsonObject): ImportForm {
  const choices = isObject(formJson['choices']) ? formJson['choices'] : {};
  const builder = new ModelBuilder(choices);
  const root = builder.section('group', '', '', formJson['children'], null);
  const rootName = typeof formJson['name'] === 'string' && formJson['name'] !== '' ? formJson['name'] : 'data';
  return { rootName, root, byPath: builder.byPath, topLevelQuestions: builder.topLevel };
}
