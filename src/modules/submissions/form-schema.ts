// What the submission parser needs to know about a form, computed once from its
// form JSON (pyxform's `children` tree) and cached per form version.
// Paths are slash paths below the root element (`grp/q`, `rep/q`), the keys
// onadata stores; types are matched as onadata matches them, plus the
// spreadsheet synonyms our converter keeps in the JSON (`int`, `gps`, `q image`).

/** Per-path flags looked up once per element while parsing. */
export const FIELD_REPEAT = 1;
export const FIELD_NUMERIC = 2;

/** An element the form defines, with its children: the parser walks this instead of joining paths. */
export interface SchemaNode {
  /** Slash path below the root ('' for the root). */
  readonly path: string;
  readonly flags: number;
  readonly children: ReadonlyMap<string, SchemaNode>;
}

export interface FormSchema {
  /** The form's root element name (`name` of the survey, `data` by default). */
  readonly rootName: string;
  readonly idString: string | null;
  readonly version: string | null;
  /** Bit flags (FIELD_REPEAT, FIELD_NUMERIC) by path; absent means plain. */
  readonly fieldFlags: ReadonlyMap<string, number>;
  /** The root element and the tree of elements below it. */
  readonly tree: SchemaNode;
  readonly repeatPaths: ReadonlySet<string>;
  /** integer and decimal questions: their values become JSON numbers. */
  readonly numericPaths: ReadonlySet<string>;
  /** Questions whose values name attachments (photo, audio, video, file, osm…), form order. */
  readonly mediaPaths: readonly string[];
  /** osm questions outside repeats, form order: their `.osm` answers are read (src/modules/osm). */
  readonly osmPaths: readonly string[];
  /** Questions of XForm type geopoint, form order: the first with a value gives `_geolocation`. */
  readonly geopointPaths: readonly string[];
  readonly selectMultiplePaths: ReadonlySet<string>;
  /** The first `start`/`end` question, or the bare names onadata falls back to. */
  readonly startPath: string;
  readonly endPath: string;
  /** A form with a public key: its submissions arrive encrypted. */
  readonly encrypted: boolean;
}

// onadata: get_survey_elements_of_type('integer' | 'decimal'); the synonyms write the same binds.
const NUMERIC_TYPES: ReadonlySet<string> = new Set([
  'integer', 'int', 'q int', 'add integer prompt',
  'decimal', 'q decimal', 'add decimal prompt',
]);
// onadata: bind type geopoint (geopoint_xpaths).
const GEOPOINT_TYPES: ReadonlySet<string> = new Set([
  'geopoint', 'q geopoint', 'location', 'q location', 'add location prompt', 'gps',
  'start-geopoint', 'background-geopoint',
]);
// onadata: KNOWN_MEDIA_TYPES + osm (get_media_survey_xpaths, get_osm_survey_xpaths).
const MEDIA_TYPES: ReadonlySet<string> = new Set([
  'photo', 'image', 'q picture', 'q image', 'add image prompt',
  'audio', 'q audio', 'add audio prompt', 'background-audio',
  'video', 'q video', 'add video prompt',
  'file', 'add file prompt',
  'osm',
]);
const SELECT_MULTIPLE_TYPES: ReadonlySet<string> = new Set([
  'select all that apply', 'select all that apply from', 'select multiple', 'select multiple from',
  'select multiple using', 'add select multiple prompt using', 'q select', 'select_multiple',
]);
const START_TYPES: ReadonlySet<string> = new Set(['start', 'start time', 'get start time']);
const END_TYPES: ReadonlySet<string> = new Set(['end', 'end time', 'get end time']);
/** Elements whose children are further elements of the instance (a question's children are choices). */
const SECTION_TYPES: ReadonlySet<string> = new Set(['group', 'repeat']);

type JsonRecord = Readonly<Record<string, unknown>>;

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringField(source: JsonRecord, key: string): string | null {
  const value = source[key];
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number') return String(value);
  return null;
}

function bindType(element: JsonRecord): string | null {
  const bind = element['bind'];
  return isRecord(bind) && typeof bind['type'] === 'string' ? bind['type'] : null;
}

interface MutableNode extends SchemaNode {
  readonly children: Map<string, SchemaNode>;
}

class SchemaBuilder {
  readonly fieldFlags = new Map<string, number>();
  readonly repeatPaths = new Set<string>();
  readonly numericPaths = new Set<string>();
  readonly mediaPaths: string[] = [];
  readonly osmPaths: string[] = [];
  readonly geopointPaths: string[] = [];
  readonly selectMultiplePaths = new Set<string>();
  startPath: string | null = null;
  endPath: string | null = null;

  visit(children: unknown, parent: MutableNode): void {
    if (!Array.isArray(children)) return;
    for (const child of children) {
      if (!isRecord(child)) continue;
      const name = child['name'];
      const type = child['type'];
      if (typeof name !== 'string' || name === '' || typeof type !== 'string') continue;
      const path = parent.path === '' ? name : `${parent.path}/${name}`;
      this.classify(child, type, path);
      const node: MutableNode = { path, flags: this.fieldFlags.get(path) ?? 0, children: new Map() };
      parent.children.set(name, node);
      if (SECTION_TYPES.has(type)) this.visit(child['children'], node);
    }
  }

  private classify(element: JsonRecord, type: string, path: string): void {
    const bind = bindType(element);
    if (type === 'repeat') {
      this.repeatPaths.add(path);
      this.flag(path, FIELD_REPEAT);
    } else if (NUMERIC_TYPES.has(type)) {
      this.numericPaths.add(path);
      this.flag(path, FIELD_NUMERIC);
    } else if (MEDIA_TYPES.has(type)) {
      this.mediaPaths.push(path);
      // onadata reads osm answers by the record's top-level keys only (save_osm_data).
      if (type === 'osm' && ![...this.repeatPaths].some((r) => path.startsWith(`${r}/`))) this.osmPaths.push(path);
    } else if (SELECT_MULTIPLE_TYPES.has(type)) {
      this.selectMultiplePaths.add(path);
    } else if (START_TYPES.has(type)) {
      this.startPath ??= path;
    } else if (END_TYPES.has(type)) {
      this.endPath ??= path;
    }
    if (GEOPOINT_TYPES.has(type) || bind === 'geopoint') this.geopointPaths.push(path);
  }

  private flag(path: string, flag: number): void {
    this.fieldFlags.set(path, (this.fieldFlags.get(path) ?? 0) | flag);
  }
}

/** Precomputes the parser's view of a form from its form JSON. */
export function buildFormSchema(formJson: Readonly<Record<string, unknown>>): FormSchema {
  const builder = new SchemaBuilder();
  const tree: MutableNode = { path: '', flags: 0, children: new Map() };
  builder.visit(formJson['children'], tree);
  return {
    rootName: stringField(formJson, 'name') ?? 'data',
    idString: stringField(formJson, 'id_string'),
    version: stringField(formJson, 'version'),
    fieldFlags: builder.fieldFlags,
    tree,
    repeatPaths: builder.repeatPaths,
    numericPaths: builder.numericPaths,
    mediaPaths: builder.mediaPaths,
    osmPaths: builder.osmPaths,
    geopointPaths: builder.geopointPaths,
    selectMultiplePaths: builder.selectMultiplePaths,
    // onadata falls back to the bare tag name when the form has no such question.
    startPath: builder.startPath ?? 'start',
    endPath: builder.endPath ?? 'end',
    encrypted: stringField(formJson, 'public_key') !== null,
  };
}
