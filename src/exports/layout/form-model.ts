// The form as exports see it: pyxform's form JSON (the `children` tree) reduced to groups,
// repeats and questions, each question classified once (select, geopoint, media, numeric…).
// Types are matched as onadata matches them, plus the spreadsheet synonyms our converter keeps.

export type Label = string | Readonly<Record<string, string>> | undefined;

export interface Choice {
  readonly name: string;
  readonly label: Label;
}

export type ValueKind = 'int' | 'decimal' | 'date' | 'text';

export interface ExportQuestion {
  readonly kind: 'question';
  readonly name: string;
  /** Slash path below the root: the record key (inside a repeat's items too). */
  readonly path: string;
  readonly type: string;
  readonly label: Label;
  readonly value: ValueKind;
  readonly selectOne: boolean;
  readonly selectMultiple: boolean;
  readonly choices: readonly Choice[];
  readonly geopoint: boolean;
  readonly media: boolean;
  readonly osm: boolean;
  /** `instance::hxl` tag, e.g. `#age`. */
  readonly hxl: string | undefined;
}

export interface ExportSection {
  readonly kind: 'group' | 'repeat';
  readonly name: string;
  readonly path: string;
  readonly label: Label;
  readonly children: readonly ExportNode[];
}

export type ExportNode = ExportQuestion | ExportSection;

export interface ExportForm {
  readonly idString: string;
  readonly title: string;
  readonly defaultLanguage: string;
  readonly children: readonly ExportNode[];
  /** Every repeat, depth-first in form order (a nested repeat right after its parent). */
  readonly repeats: readonly ExportSection[];
  /** The repeats enclosing each repeat, outermost first (empty for a top-level repeat). */
  readonly repeatAncestors: ReadonlyMap<string, readonly ExportSection[]>;
  /** Questions of type osm, form order. */
  readonly osmQuestions: readonly ExportQuestion[];
}

const INT_TYPES = new Set(['integer', 'int', 'q int', 'add integer prompt']);
const DECIMAL_TYPES = new Set(['decimal', 'q decimal', 'add decimal prompt']);
const DATE_TYPES = new Set(['date', 'q date', 'add date prompt', 'today']);
const GEOPOINT_TYPES = new Set(['geopoint', 'q geopoint', 'location', 'q location', 'add location prompt', 'gps', 'start-geopoint', 'background-geopoint']);
const MEDIA_TYPES = new Set([
  'photo', 'image', 'q picture', 'q image', 'add image prompt',
  'audio', 'q audio', 'add audio prompt', 'background-audio',
  'video', 'q video', 'add video prompt',
  'file', 'add file prompt',
]);
/** onadata leaves notes out of every export. */
const EXCLUDED_TYPES = new Set(['note']);

type JsonObject = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

function labelOf(value: unknown): Label {
  if (typeof value === 'string') return value;
  if (isObject(value)) {
    const out: Record<string, string> = {};
    for (const [language, text] of Object.entries(value)) if (typeof text === 'string') out[language] = text;
    return out;
  }
  return undefined;
}

function isSelectMultiple(type: string): boolean {
  return /^(select all that apply|select multiple|select_multiple|add select multiple prompt|q select\b)/.test(type);
}

function isSelectOne(type: string): boolean {
  return /^(select one|select_one|select1|q select1|add select one prompt)/.test(type);
}

function bindType(element: JsonObject): string | undefined {
  const bind = element['bind'];
  return isObject(bind) && typeof bind['type'] === 'string' ? bind['type'] : undefined;
}

function choicesOf(element: JsonObject, choiceLists: JsonObject): Choice[] {
  const own = Array.isArray(element['children']) ? element['children'] : undefined;
  const listName = textOf(element['itemset']) ?? textOf(element['list_name']);
  const list = own && own.length > 0 ? own : listName !== undefined ? choiceLists[listName] : undefined;
  if (!Array.isArray(list)) return [];
  const out: Choice[] = [];
  for (const item of list) {
    if (!isObject(item)) continue;
    const name = textOf(item['name']);
    if (name !== undefined) out.push({ name, label: labelOf(item['label']) });
  }
  return out;
}

function question(element: JsonObject, name: string, type: string, path: string, choiceLists: JsonObject): ExportQuestion {
  const bind = bindType(element);
  const selectMultiple = isSelectMultiple(type);
  const selectOne = !selectMultiple && isSelectOne(type);
  const instance = element['instance'];
  const value: ValueKind = INT_TYPES.has(type) || bind === 'int' ? 'int' : DECIMAL_TYPES.has(type) || bind === 'decimal' ? 'decimal' : DATE_TYPES.has(type) || bind === 'date' ? 'date' : 'text';
  return {
    kind: 'question',
    name,
    path,
    type,
    label: labelOf(element['label']),
    value,
    selectOne,
    selectMultiple,
    choices: selectOne || selectMultiple ? choicesOf(element, choiceLists) : [],
    geopoint: GEOPOINT_TYPES.has(type) || bind === 'geopoint',
    media: MEDIA_TYPES.has(type) || type === 'osm',
    osm: type === 'osm',
    hxl: isObject(instance) ? textOf(instance['hxl']) : undefined,
  };
}

class ModelBuilder {
  readonly repeats: ExportSection[] = [];
  readonly ancestorPaths = new Map<string, readonly string[]>();
  readonly osmQuestions: ExportQuestion[] = [];
  constructor(private readonly choiceLists: JsonObject) {}

  nodes(children: unknown, parentPath: string, enclosing: readonly string[]): ExportNode[] {
    if (!Array.isArray(children)) return [];
    const out: ExportNode[] = [];
    for (const child of children) {
      if (!isObject(child)) continue;
      const name = textOf(child['name']);
      const type = textOf(child['type']);
      if (name === undefined || name === '' || type === undefined || EXCLUDED_TYPES.has(type)) continue;
      const path = parentPath === '' ? name : `${parentPath}/${name}`;
      if (type === 'group' || type === 'repeat') {
        // Nested repeats register while the children are built: insert this one before them.
        const slot = this.repeats.length;
        const inner = type === 'repeat' ? [...enclosing, path] : enclosing;
        const section: ExportSection = { kind: type, name, path, label: labelOf(child['label']), children: this.nodes(child['children'], path, inner) };
        if (type === 'repeat') {
          this.repeats.splice(slot, 0, section);
          this.ancestorPaths.set(path, enclosing);
        }
        out.push(section);
      } else {
        const q = question(child, name, type, path, this.choiceLists);
        if (q.osm) this.osmQuestions.push(q);
        out.push(q);
      }
    }
    return out;
  }
}

/** Builds the export model of a form from its form JSON. */
export function buildExportForm(formJson: JsonObject): ExportForm {
  const choiceLists = isObject(formJson['choices']) ? formJson['choices'] : {};
  const builder = new ModelBuilder(choiceLists);
  const children = builder.nodes(formJson['children'], '', []);
  const byPath = new Map(builder.repeats.map((r) => [r.path, r]));
  const ancestors = new Map<string, readonly ExportSection[]>();
  for (const [path, chain] of builder.ancestorPaths) {
    ancestors.set(path, chain.flatMap((p) => byPath.get(p) ?? []));
  }
  const idString = textOf(formJson['id_string']) ?? textOf(formJson['name']) ?? 'data';
  return {
    idString,
    title: textOf(formJson['title']) ?? idString,
    defaultLanguage: textOf(formJson['default_language']) ?? 'default',
    children,
    repeats: builder.repeats,
    repeatAncestors: ancestors,
    osmQuestions: builder.osmQuestions,
  };
}

/** A label in the wanted language, else the form's default, else the first one given. */
export function labelText(label: Label, language: string | undefined, defaultLanguage: string): string | undefined {
  if (label === undefined || typeof label === 'string') return label;
  return (language !== undefined ? label[language] : undefined) ?? label[defaultLanguage] ?? label['default'] ?? Object.values(label)[0];
}

/** Questions of a section in form order, through groups, stopping at nested repeats. */
export function sectionQuestions(children: readonly ExportNode[]): ExportQuestion[] {
  const out: ExportQuestion[] = [];
  const walk = (nodes: readonly ExportNode[]): void => {
    for (const node of nodes) {
      if (node.kind === 'question') out.push(node);
      else if (node.kind === 'group') walk(node.children);
    }
  };
  walk(children);
  return out;
}
