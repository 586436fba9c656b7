// The one model of a published form, read once from its form JSON (pyxform's `children` tree):
// groups, repeats and questions with their slash paths (the record keys onadata stores), types,
// labels by language, choices, and the meta fields a record's facts come from. Submission
// parsing, imports, exports, the data API and OData all read this model; where they need
// different things from a type, type-table.ts says what each gets.
import { OMITTED_TYPE, usesOf, type TypeUses } from './type-table.ts';

/** A label: plain text, or text by language (`{English: …, French: …}`). */
export type Label = string | Readonly<Record<string, string>> | undefined;

export interface Choice {
  readonly name: string;
  readonly label: Label;
}

export interface FormQuestion {
  readonly kind: 'question';
  readonly name: string;
  /** Slash path below the root: the record key (inside a repeat's items too). */
  readonly path: string;
  readonly type: string;
  readonly label: Label;
  /** The list of a select (its own items, else its list in the form), form order; empty for others. */
  readonly choices: readonly Choice[];
  /** Choice names a value can be checked against; null when the list is not in the form (a file, or dynamic). */
  readonly choiceNames: readonly string[] | null;
  /** `or_other` lists also accept `other`. */
  readonly allowsOther: boolean;
  /** `instance::hxl` tag, e.g. `#age`. */
  readonly hxl: string | undefined;
  /** The nearest enclosing repeat, or null. */
  readonly repeat: FormSection | null;
  readonly uses: TypeUses;
}

export interface FormSection {
  readonly kind: 'group' | 'repeat';
  readonly name: string;
  /** Slash path below the root; '' for the root. */
  readonly path: string;
  readonly label: Label;
  readonly children: readonly FormNode[];
  /** Children by element name (the last of a name wins, as the XML parser finds it). */
  readonly childByName: ReadonlyMap<string, FormNode>;
  /** The nearest enclosing repeat (not this one), or null. */
  readonly repeat: FormSection | null;
}

export type FormNode = FormQuestion | FormSection;

export interface FormModel {
  /** The root element's name (`name` of the survey, `data` by default). */
  readonly rootName: string;
  /** `id_string` as published, else the root's name. */
  readonly idString: string;
  readonly version: string | null;
  /** The title, else the id. */
  readonly title: string;
  readonly defaultLanguage: string;
  /** A form with a public key: its submissions arrive encrypted. */
  readonly encrypted: boolean;
  /** The root element: a group with path ''. */
  readonly root: FormSection;
  /** Every repeat, depth-first in form order (a nested repeat right after its parent). */
  readonly repeats: readonly FormSection[];
  /** Geopoint questions, form order: the first with a value gives `_geolocation`. */
  readonly geopointPaths: readonly string[];
  /** Questions whose answers name attachments (osm included), form order. */
  readonly mediaPaths: readonly string[];
  /** osm questions, form order. */
  readonly osmQuestions: readonly FormQuestion[];
  /** osm questions outside repeats: onadata reads their `.osm` answers by top-level keys only (save_osm_data). */
  readonly topLevelOsmPaths: readonly string[];
  /** The first `start`/`end` question, or the bare names onadata falls back to. */
  readonly startPath: string;
  readonly endPath: string;
  /** Answers stored as JSON numbers. */
  readonly numberPaths: ReadonlySet<string>;
}

type JsonObject = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

/** A non-empty text field, numbers as text. */
function fieldOf(source: JsonObject, key: string): string | null {
  const value = textOf(source[key]);
  return value === undefined || value === '' ? null : value;
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

function choicesIn(list: unknown): Choice[] {
  if (!Array.isArray(list)) return [];
  const out: Choice[] = [];
  for (const item of list) {
    if (!isObject(item)) continue;
    const name = textOf(item['name']);
    if (name !== undefined) out.push({ name, label: labelOf(item['label']) });
  }
  return out;
}

/** A select's own items, else its list (`itemset`, or `list_name`) from the form's choices. */
function choicesOf(element: JsonObject, lists: JsonObject): Choice[] {
  const own = choicesIn(element['children']);
  if (Array.isArray(element['children']) && element['children'].length > 0) return own;
  const listName = textOf(element['itemset']) ?? textOf(element['list_name']);
  return listName !== undefined ? choicesIn(lists[listName]) : [];
}

/** Lists from a file cannot be checked here. */
function fromFile(element: JsonObject): boolean {
  const itemset = element['itemset'];
  return typeof itemset === 'string' && /\.(csv|xml|geojson)$/i.test(itemset);
}

function bindTypeOf(element: JsonObject): string | undefined {
  const bind = element['bind'];
  return isObject(bind) && typeof bind['type'] === 'string' ? bind['type'] : undefined;
}

class Builder {
  readonly repeats: FormSection[] = [];
  readonly geopointPaths: string[] = [];
  readonly mediaPaths: string[] = [];
  readonly osmQuestions: FormQuestion[] = [];
  readonly numberPaths = new Set<string>();
  startPath: string | null = null;
  endPath: string | null = null;

  constructor(private readonly lists: JsonObject) {}

  section(kind: 'group' | 'repeat', element: JsonObject, name: string, path: string, repeat: FormSection | null): FormSection {
    const children: FormNode[] = [];
    const childByName = new Map<string, FormNode>();
    const section: FormSection = { kind, name, path, label: labelOf(element['label']), children, childByName, repeat };
    // Nested repeats register while the children are built: this one goes before them.
    if (kind === 'repeat') this.repeats.push(section);
    const enclosing = kind === 'repeat' ? section : repeat;
    const list = element['children'];
    if (!Array.isArray(list)) return section;
    for (const child of list) {
      if (!isObject(child)) continue;
      const childName = child['name'];
      const type = child['type'];
      if (typeof childName !== 'string' || childName === '' || typeof type !== 'string' || type === OMITTED_TYPE) continue;
      const childPath = path === '' ? childName : `${path}/${childName}`;
      const node = type === 'group' || type === 'repeat' ? this.section(type, child, childName, childPath, enclosing) : this.question(child, childName, type, childPath, enclosing);
      children.push(node);
      childByName.set(childName, node);
    }
    return section;
  }

  question(element: JsonObject, name: string, type: string, path: string, repeat: FormSection | null): FormQuestion {
    const uses = usesOf(type, bindTypeOf(element));
    const isSelect = uses.selectOne || uses.selectMultiple;
    const choices = isSelect ? choicesOf(element, this.lists) : [];
    const instance = element['instance'];
    const question: FormQuestion = {
      kind: 'question',
      name,
      path,
      type,
      label: labelOf(element['label']),
      choices,
      choiceNames: isSelect && !fromFile(element) && choices.length > 0 ? choices.map((c) => c.name) : null,
      allowsOther: element['or_other'] === true || /\bor_other$/.test(type),
      hxl: isObject(instance) ? textOf(instance['hxl']) : undefined,
      repeat,
      uses,
    };
    if (uses.geopoint) this.geopointPaths.push(path);
    if (uses.media) this.mediaPaths.push(path);
    if (uses.osm) this.osmQuestions.push(question);
    if (uses.numberInRecord) this.numberPaths.add(path);
    if (uses.timestamp === 'start') this.startPath ??= path;
    if (uses.timestamp === 'end') this.endPath ??= path;
    return question;
  }
}

/** Reads the model of a form from its form JSON. */
export function buildFormModel(formJson: JsonObject): FormModel {
  const builder = new Builder(isObject(formJson['choices']) ? formJson['choices'] : {});
  const root = builder.section('group', { children: formJson['children'] }, '', '', null);
  const rootName = fieldOf(formJson, 'name') ?? 'data';
  const idString = fieldOf(formJson, 'id_string') ?? rootName;
  return {
    rootName,
    idString,
    version: fieldOf(formJson, 'version'),
    title: textOf(formJson['title']) ?? idString,
    defaultLanguage: textOf(formJson['default_language']) ?? 'default',
    encrypted: fieldOf(formJson, 'public_key') !== null,
    root,
    repeats: builder.repeats,
    geopointPaths: builder.geopointPaths,
    mediaPaths: builder.mediaPaths,
    osmQuestions: builder.osmQuestions,
    topLevelOsmPaths: builder.osmQuestions.filter((q) => q.repeat === null).map((q) => q.path),
    // onadata falls back to the bare tag name when the form has no such question.
    startPath: builder.startPath ?? 'start',
    endPath: builder.endPath ?? 'end',
    numberPaths: builder.numberPaths,
  };
}

/** The repeats enclosing a repeat, outermost first (empty for a top-level repeat). */
export function repeatAncestors(repeat: FormSection): FormSection[] {
  const out: FormSection[] = [];
  for (let r = repeat.repeat; r !== null; r = r.repeat) out.unshift(r);
  return out;
}

/** A label in the wanted language, else the form's default, else the first one given. */
export function labelText(label: Label, language: string | undefined, defaultLanguage: string): string | undefined {
  if (label === undefined || typeof label === 'string') return label;
  return (language !== undefined ? label[language] : undefined) ?? label[defaultLanguage] ?? label['default'] ?? Object.values(label)[0];
}

/** Questions of a section in form order, through groups, stopping at nested repeats. */
export function sectionQuestions(children: readonly FormNode[]): FormQuestion[] {
  const out: FormQuestion[] = [];
  const walk = (nodes: readonly FormNode[]): void => {
    for (const node of nodes) {
      if (node.kind === 'question') out.push(node);
      else if (node.kind === 'group') walk(node.children);
    }
  };
  walk(children);
  return out;
}
