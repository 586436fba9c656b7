// Flow Results (FLOIP) data package → XLSForm in pyxform's CSV layout, so that a package
// publishes through the same converter and checks as any uploaded spreadsheet.
// Pure: text in, CSV text or an error message out.
//
// The package format is the Flow Results specification (github.com/FLOIP/flow-results):
//   {"profile": "flow-results-package", "name", "title",
//    "resources": [{"schema": {"questions": {"<id>": {"type", "label", "type_options"}}}}]}
// onadata reads it through the `floip` package, whose mapping this follows where the
// specification leaves room (first resource only; `open` is text; questions may also be a
// list of one-entry objects; a `data-package` profile, which onadata's own export writes).

export interface FloipXlsForm {
  ok: true;
  /** The form's id_string: the package name, cleaned to a slug. */
  idString: string;
  title: string;
  /** `<idString>.csv`: the name the publish path sees, so the converter reads CSV. */
  fileName: string;
  csv: string;
}

export interface FloipProblem {
  ok: false;
  message: string;
}

type XlsFormType =
  | 'select_one'
  | 'select_multiple'
  | 'decimal'
  | 'integer'
  | 'text'
  | 'image'
  | 'video'
  | 'audio'
  | 'geopoint'
  | 'dateTime'
  | 'date'
  | 'time';

/** FLOIP question type → XLSForm type; `numeric` is decided per question (decimal or integer). */
const QUESTION_TYPES = {
  select_one: 'select_one',
  multiple_choice_one: 'select_one',
  select_many: 'select_multiple',
  multiple_choice_many: 'select_multiple',
  numeric: 'decimal',
  text: 'text',
  open: 'text',
  image: 'image',
  video: 'video',
  audio: 'audio',
  geo_point: 'geopoint',
  geopoint: 'geopoint',
  datetime: 'dateTime',
  date: 'date',
  time: 'time',
} as const satisfies Record<string, XlsFormType>;

type FloipType = keyof typeof QUESTION_TYPES;

const SUPPORTED_TYPES =
  'select_one, select_many, numeric, text, open, image, video, audio, geo_point, datetime, date, time';

/** Profiles accepted: the specification's, and `data-package`, which onadata writes on export. */
const PROFILES = new Set(['flow-results-package', 'data-package']);

interface SurveyRow {
  type: string;
  name: string;
  label: string;
  constraint: string;
}

interface ChoiceRow {
  listName: string;
  name: string;
  label: string;
}

class PackageProblem extends Error {}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isFloipType(type: string): type is FloipType {
  return Object.hasOwn(QUESTION_TYPES, type);
}

// XML NameStartChar / NameChar (XML 1.0 §2.3) without the colon: question names become
// element names in the XForm, and pyxform accepts exactly these.
const NAME_START =
  /^[A-Z_a-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD]$/;
// eslint-disable-next-line no-misleading-character-class -- combining marks are NameChars on purpose
const NAME_CHAR = /^[-.0-9\u00B7\u0300-\u036F\u203F-\u2040]$/;

function isNameStart(ch: string): boolean {
  return NAME_START.test(ch);
}

function isNameChar(ch: string): boolean {
  return NAME_START.test(ch) || NAME_CHAR.test(ch);
}

/** A question id as an XML element name: invalid characters become `_`, and a name may not start with a digit, `-` or `.`. */
export function questionName(id: string): string {
  const chars = Array.from(id.trim()).map((ch) => (isNameChar(ch) ? ch : '_'));
  const first = chars[0];
  if (first === undefined) return '_';
  if (!isNameStart(first)) chars.unshift('_');
  return chars.join('');
}

/** Gives every question a distinct name (compared case-insensitively, as exports do) by suffixing `_1`, `_2`, …; `meta` is taken by the form's metadata group. */
class NameAllocator {
  private readonly taken = new Set(['meta']);

  allocate(base: string): string {
    let name = base;
    for (let n = 1; this.taken.has(name.toLowerCase()); n++) name = `${base}_${n}`;
    this.taken.add(name.toLowerCase());
    return name;
  }
}

/** The package name as an id_string slug: letters, digits, `_` and `-` (the specification also allows `.`). */
function idStringOf(name: string): string {
  return name.trim().replace(/[^\p{L}\p{N}_-]+/gu, '_');
}

/** A number written as an XPath literal: never in exponent notation. */
function xpathNumber(value: number): string {
  return value.toLocaleString('en-US', { useGrouping: false, maximumFractionDigits: 20 });
}

function describe(id: string): string {
  return `Question "${id}"`;
}

function readChoices(id: string, listName: string, multiple: boolean, options: Record<string, unknown>): ChoiceRow[] {
  const choices = options['choices'];
  if (!Array.isArray(choices) || choices.length === 0) {
    throw new PackageProblem(`${describe(id)} (${multiple ? 'select_many' : 'select_one'}) needs type_options.choices: a non-empty list of strings.`);
  }
  const rows: ChoiceRow[] = [];
  const seen = new Map<string, string>();
  for (const choice of choices) {
    if (typeof choice !== 'string' && !(typeof choice === 'number' && Number.isFinite(choice))) {
      throw new PackageProblem(`${describe(id)} has a choice that is not a string: ${JSON.stringify(choice)}.`);
    }
    const label = String(choice).trim();
    if (!label) throw new PackageProblem(`${describe(id)} has an empty choice.`);
    // Multiple-choice answers are stored space-separated, so their choice names cannot hold spaces.
    const name = multiple ? label.replace(/\s+/g, '_') : label;
    const earlier = seen.get(name);
    if (earlier !== undefined) {
      throw new PackageProblem(
        earlier === label
          ? `${describe(id)} lists the choice "${label}" more than once.`
          : `${describe(id)} has the choices "${earlier}" and "${label}", which are the same once spaces become underscores.`,
      );
    }
    seen.set(name, label);
    rows.push({ listName, name, label });
  }
  return rows;
}

function numericType(id: string, options: Record<string, unknown>): 'decimal' | 'integer' {
  // The specification has no integer flag; `format` is the key it uses for other types' details.
  const format = options['format'];
  if (format === undefined || format === 'decimal') return 'decimal';
  if (format === 'integer') return 'integer';
  throw new PackageProblem(`${describe(id)} (numeric) has type_options.format ${JSON.stringify(format)}: expected "integer" or "decimal".`);
}

function rangeConstraint(id: string, options: Record<string, unknown>): string {
  const range = options['range'];
  if (range === undefined || range === null) return '';
  if (!Array.isArray(range) || range.length !== 2 || !range.every((v) => typeof v === 'number' && Number.isFinite(v))) {
    throw new PackageProblem(`${describe(id)} (numeric) has type_options.range ${JSON.stringify(range)}: expected [minimum, maximum], two numbers.`);
  }
  const [min, max] = range as [number, number];
  if (min > max) throw new PackageProblem(`${describe(id)} (numeric) has type_options.range [${min}, ${max}]: the minimum is above the maximum.`);
  return `. >= ${xpathNumber(min)} and . <= ${xpathNumber(max)}`;
}

function readQuestion(id: string, question: unknown, names: NameAllocator, choices: ChoiceRow[]): SurveyRow {
  if (!isObject(question)) throw new PackageProblem(`${describe(id)} must be an object with type, label and type_options.`);
  const type = question['type'];
  if (typeof type !== 'string' || !type) throw new PackageProblem(`${describe(id)} has no type.`);
  if (!isFloipType(type)) throw new PackageProblem(`${describe(id)} has the unsupported type "${type}". Supported types: ${SUPPORTED_TYPES}.`);
  const label = question['label'];
  if (typeof label !== 'string' || !label.trim()) throw new PackageProblem(`${describe(id)} has no label: every question needs a non-empty label.`);
  const rawOptions = question['type_options'] ?? {};
  if (!isObject(rawOptions)) throw new PackageProblem(`${describe(id)} has type_options that is not an object.`);

  const name = names.allocate(questionName(id));
  const xlsType = QUESTION_TYPES[type];
  switch (xlsType) {
    case 'select_one':
    case 'select_multiple':
      choices.push(...readChoices(id, name, xlsType === 'select_multiple', rawOptions));
      return { type: `${xlsType} ${name}`, name, label, constraint: '' };
    case 'decimal':
      return { type: numericType(id, rawOptions), name, label, constraint: rangeConstraint(id, rawOptions) };
    default:
      return { type: xlsType, name, label, constraint: '' };
  }
}

/** The question entries in document order: an object keyed by id, or onadata's list of one-entry objects. */
function questionEntries(questions: unknown): Array<[string, unknown]> {
  if (isObject(questions)) return Object.entries(questions);
  if (Array.isArray(questions)) {
    const entries: Array<[string, unknown]> = [];
    for (const item of questions) {
      if (!isObject(item)) throw new PackageProblem('Each entry of the questions list must be an object mapping a question id to its question.');
      entries.push(...Object.entries(item));
    }
    return entries;
  }
  throw new PackageProblem("The resource schema's 'questions' must be an object mapping question ids to questions.");
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** One sheet in pyxform's CSV layout: the sheet name alone, then header and rows shifted one column right. */
function csvSheet(name: string, headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  return [name, ['', ...headers].join(','), ...rows.map((row) => ['', ...row].map(csvField).join(','))];
}

function parsePackage(input: string | Uint8Array): Record<string, unknown> {
  let text: string;
  try {
    text = typeof input === 'string' ? input : new TextDecoder('utf-8', { fatal: true }).decode(input);
  } catch {
    throw new PackageProblem('The FLOIP package is not UTF-8 text.');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new PackageProblem(`The FLOIP package is not valid JSON: ${err instanceof Error ? err.message : String(err)}.`);
  }
  if (!isObject(parsed)) throw new PackageProblem('The FLOIP package must be a JSON object (a Flow Results data package descriptor).');
  return parsed;
}

function convertPackage(input: string | Uint8Array): FloipXlsForm {
  const descriptor = parsePackage(input);
  const profile = descriptor['profile'];
  if (typeof profile !== 'string' || !PROFILES.has(profile)) {
    throw new PackageProblem(
      `This is not a Flow Results package: its 'profile' is ${profile === undefined ? 'missing' : JSON.stringify(profile)}, expected "flow-results-package".`,
    );
  }
  const packageName = descriptor['name'];
  if (typeof packageName !== 'string' || !packageName.trim()) throw new PackageProblem("The FLOIP package has no 'name': it becomes the form's id.");
  const idString = idStringOf(packageName);
  const rawTitle = descriptor['title'] ?? packageName;
  if (typeof rawTitle !== 'string') throw new PackageProblem("The FLOIP package's 'title' must be a string.");
  const title = rawTitle.trim() || packageName.trim();

  const resources = descriptor['resources'];
  if (!Array.isArray(resources) || resources.length === 0) throw new PackageProblem("The FLOIP package has no 'resources': at least one data resource is required.");
  const resource: unknown = resources[0];
  if (!isObject(resource) || !isObject(resource['schema'])) throw new PackageProblem("The FLOIP package's first resource has no 'schema' object.");
  const schema = resource['schema'];
  if (!('questions' in schema)) throw new PackageProblem("The FLOIP package's resource schema has no 'questions'.");
  const entries = questionEntries(schema['questions']);
  if (entries.length === 0) throw new PackageProblem("The FLOIP package's resource schema lists no questions.");

  const names = new NameAllocator();
  const choices: ChoiceRow[] = [];
  const survey = entries.map(([id, question]) => readQuestion(id, question, names, choices));

  const lines = [
    ...csvSheet('survey', ['type', 'name', 'label', 'constraint'], survey.map((q) => [q.type, q.name, q.label, q.constraint])),
    ...(choices.length ? csvSheet('choices', ['list_name', 'name', 'label'], choices.map((c) => [c.listName, c.name, c.label])) : []),
    ...csvSheet('settings', ['form_id', 'form_title'], [[idString, title]]),
  ];
  return { ok: true, idString, title, fileName: `${idString}.csv`, csv: `${lines.join('\n')}\n` };
}

/** Converts a Flow Results package (JSON text or bytes) to a CSV XLSForm, or says what is wrong with it. */
export function floipToXlsForm(input: string | Uint8Array): FloipXlsForm | FloipProblem {
  try {
    return convertPackage(input);
  } catch (err) {
    if (err instanceof PackageProblem) return { ok: false, message: err.message };
    throw err;
  }
}
