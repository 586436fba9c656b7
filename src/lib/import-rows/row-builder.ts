// One row of an import file → the OpenRosa instance a device would have sent for it (as
// onadata's csv_import builds one with dict2xmlsubmission), in form order, and the record the
// submission parser would make of that instance, built in the same walk (instance-record.ts) so
// that an import does not parse its own XML again. Values are checked first; a row with bad
// values yields its problems (column, value) and no instance.
import type { RecordValue } from '../instance-xml.ts';
import type { FormModel, FormNode, FormQuestion, FormSection } from '../form-model/model.ts';
import { answerChildren } from './answers.ts';
import type { ColumnRole, HeaderPlan, RepeatStep } from './header-plan.ts';
import { itemPosition, repeatCountKey } from '../writers/layout/repeat-counts.ts';
import { canBuildRecords, recordFacts, storedText, storedValue, type RecordFacts, type RecordRules } from './instance-record.ts';
import { checkValue, normaliseDateTime } from './values.ts';

export interface CellProblem {
  readonly column: string;
  readonly value: string;
  /** `integer`, `date`, `choice`… (see problemLabel). */
  readonly problem: string;
}

/**
 * A checked row, waiting to learn whether it adds a record or edits one. It holds only flat text
 * (a file's rows wait in batches of hundreds, and the less they hold the less the collector copies).
 */
export class PreparedRow {
  constructor(
    /** `_uuid` (or else the uuid of `meta/instanceID`): the record this row edits, when one has it. */
    readonly matchUuid: string | null,
    /** `_submission_time`, as an ISO timestamp with a zone. */
    readonly submissionTime: string | null,
    /** `_submitted_by` as written. */
    readonly submittedBy: string | null,
    private readonly xml: { open: string; before: string; after: string | null; close: string },
    /** The record's answers as JSON members (`"a":1,"b":"x"`), null when the parser must read the XML. */
    private readonly members: string | null,
    /** What storage needs to know of the record; null when members is. */
    readonly facts: RecordFacts | null,
    private readonly metaRules: RecordRules | null,
  ) {}

  /** The instance XML with this instanceID (and the deprecatedID of the record it edits). */
  render(instanceUuid: string, deprecatedUuid: string | null): string {
    const { open, before, after, close } = this.xml;
    const meta = `<instanceID>uuid:${escapeText(instanceUuid)}</instanceID>${deprecatedUuid === null ? '' : `<deprecatedID>uuid:${escapeText(deprecatedUuid)}</deprecatedID>`}`;
    const attributes = ` instanceID="uuid:${escapeAttribute(instanceUuid)}"${this.submissionTime === null ? '' : ` submissionDate="${escapeAttribute(this.submissionTime)}"`}>`;
    return `${open}${attributes}${before}${after === null ? `<meta>${meta}</meta>` : `${meta}${after}`}${close}`;
  }

  /**
   * The record the parser would make of `render(instanceUuid, deprecatedUuid)` as JSON text, with
   * `extra`'s keys after the answers (they win over an answer of the same name, as a later key
   * does in jsonb); null when the form's records must come from the parser (see canBuildRecords).
   */
  recordJson(instanceUuid: string, deprecatedUuid: string | null, extra: Readonly<Record<string, unknown>>): string | null {
    if (this.members === null || this.metaRules === null) return null;
    let json = `{${this.members}`;
    let first = this.members === '';
    for (const [key, value] of [['meta/instanceID', instanceUuid], ['meta/deprecatedID', deprecatedUuid]] as const) {
      const text = value === null ? null : storedText(`uuid:${value}`);
      if (text === null) continue;
      json += `${first ? '' : ','}${JSON.stringify(key)}:${JSON.stringify(storedValue(this.metaRules, key, text))}`;
      first = false;
    }
    const members = JSON.stringify(extra).slice(1, -1);
    return `${json}${first || members === '' ? '' : ','}${members}}`;
  }
}

export type PreparedResult = { ok: true; row: PreparedRow } | { ok: false; problems: CellProblem[] };

export interface InstanceIdentity {
  rootName: string;
  idString: string;
  /** The form's uuid, written as `formhub/uuid` like every device does. */
  formUuid: string;
}

/** Answers of one instance or repeat entry, by question. */
class Entry {
  readonly values = new Map<FormQuestion, string>();
  choices: Map<FormQuestion, Set<string>> | undefined;
  geoParts: Map<FormQuestion, Array<string | undefined>> | undefined;
  repeats: Map<FormSection, Map<number, Entry>> | undefined;

  child(step: RepeatStep): Entry {
    this.repeats ??= new Map();
    let entries = this.repeats.get(step.repeat);
    if (!entries) {
      entries = new Map();
      this.repeats.set(step.repeat, entries);
    }
    let entry = entries.get(step.index);
    if (!entry) {
      entry = new Entry();
      entries.set(step.index, entry);
    }
    return entry;
  }
}

const NOT_AVAILABLE = 'n/a';
/** Where the meta ids go in a row's XML (no answer can hold NUL: see unwritable). */
const META_MARKER = '\u0000meta\u0000';
const TRUE_CELL = /^(?:true|1)$/i;
const FALSE_CELL = /^(?:false|0)$/i;
// XML 1.0 cannot carry these characters at all (nor half of a surrogate pair). The first test is
// the quick one; only text that has a surrogate or a refused character gets the exact one.
const SUSPECT = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;
const REFUSED = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const unwritable = (text: string): boolean => SUSPECT.test(text) && REFUSED.test(text);

function escapeText(text: string): string {
  if (!/[&<>]/.test(text)) return text;
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

function escapeAttribute(text: string): string {
  return text.replace(/[&<>"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;'));
}

/**
 * The same text as one flat string. V8 keeps a string built by many concatenations as a tree of
 * its pieces (and pieces cut from a file's chunk keep the whole chunk alive); a row waiting in a
 * batch is copied by the young-generation collector, tree and all. Converting the text to a
 * number (the result is not wanted) makes V8 flatten it in place: a quarter less collector time.
 */
function flattened(text: string): string {
  void Number(text);
  return text;
}

/** Strips any number of `uuid:` prefixes (onadata's XLSX exports write `uuid:uuid:…` for instanceIDs). */
export function bareUuid(text: string): string | null {
  let value = text.trim();
  while (value.toLowerCase().startsWith('uuid:')) value = value.slice(5).trim();
  return value === '' ? null : value;
}

/** `_submission_time` as PostgreSQL and the data API read it; a time without a zone is UTC. */
function submissionTimeOf(text: string): string | null {
  const normalised = normaliseDateTime(text.trim());
  if (normalised === null) return null;
  return /(?:Z|[+-]\d{2}(?::?\d{2})?)$/.test(normalised) ? normalised : `${normalised}+00:00`;
}

/** An element's XML tags and the starts of its JSON member (first in its object, or after another). */
interface ElementTexts {
  readonly open: string;
  readonly close: string;
  readonly firstMember: string;
  readonly nextMember: string;
}

/**
 * Where the walk writes the record of a section, as JSON members (`"path":value,…`: written as
 * text rather than built as an object and stringified, which cost a fifth of a row's time), and
 * the answers the record's facts are read from.
 */
interface RecordSink {
  members: string;
  readonly found: Map<string, string[]>;
  /** The record's top level (not a repeat entry): where start and end are read. */
  readonly top: { start: RecordValue | undefined; end: RecordValue | undefined } | null;
  /** Items per repeat, keyed by repeatCountKey, shared by the whole record. */
  readonly counts: Record<string, number>;
  /** 1-based positions of the enclosing repeat items (`''` at the top level). */
  readonly position: string;
}

export class RowBuilder {
  readonly #plan: HeaderPlan;
  readonly #form: FormModel;
  readonly #open: string;
  readonly #formhub: string;
  readonly #close: string;
  readonly #formUuid: string | null;
  readonly #formhubMember: string;
  /** null: records come from parsing the XML. */
  readonly #rules: RecordRules | null;
  /** Paths whose answers the record's facts are computed from. */
  readonly #factPaths: ReadonlySet<string>;
  /**
   * Each element's tags and JSON member keys, written once here: spelling them out for every row
   * took a dozen small strings per answer, most of a row's allocation.
   */
  readonly #texts = new Map<FormNode, ElementTexts>();

  constructor(form: FormModel, plan: HeaderPlan, identity: InstanceIdentity) {
    this.#plan = plan;
    this.#form = form;
    this.#open = `<?xml version="1.0" ?><${form.rootName} id="${escapeAttribute(identity.idString)}"`;
    this.#formhub = `<formhub><uuid>${escapeText(identity.formUuid)}</uuid></formhub>`;
    this.#close = `</${form.rootName}>`;
    this.#formUuid = storedText(identity.formUuid);
    this.#rules = canBuildRecords(form) ? form : null;
    this.#factPaths = new Set([...form.geopointPaths, ...form.mediaPaths]);
    this.#formhubMember = `${JSON.stringify('formhub/uuid')}:`;
    const describe = (section: FormSection): void => {
      for (const element of answerChildren(section)) {
        const key = `${JSON.stringify(element.path)}:`;
        this.#texts.set(element, { open: `<${element.name}>`, close: `</${element.name}>`, firstMember: key, nextMember: `,${key}` });
        if (element.kind !== 'question') describe(element);
      }
    };
    describe(form.root);
  }

  #textsOf(element: FormNode): ElementTexts {
    return this.#texts.get(element) as ElementTexts;
  }

  prepare(cells: readonly string[]): PreparedResult {
    const root = new Entry();
    const problems: CellProblem[] = [];
    let uuid: string | null = null;
    let instanceUuid: string | null = null;
    let submissionTime: string | null = null;
    let submittedBy: string | null = null;
    const columns = this.#plan.columns;
    for (let i = 0; i < columns.length; i++) {
      const raw = cells[i];
      if (raw === undefined || raw === '' || raw === NOT_AVAILABLE) continue;
      const role = columns[i] as ColumnRole;
      const column = this.#plan.headers[i] ?? '';
      switch (role.role) {
        case 'ignored':
          break;
        case 'uuid':
        case 'instance-id':
          if (unwritable(raw)) problems.push({ column, value: raw, problem: 'character' });
          else if (role.role === 'uuid') uuid = bareUuid(raw);
          else instanceUuid = bareUuid(raw);
          break;
        case 'submitted-by':
          submittedBy = raw.trim() || null;
          break;
        case 'submission-time':
          submissionTime = submissionTimeOf(raw);
          if (submissionTime === null) problems.push({ column, value: raw, problem: 'datetime' });
          break;
        case 'value': {
          if (unwritable(raw)) {
            problems.push({ column, value: raw, problem: 'character' });
            break;
          }
          const checked = checkValue(role.question, raw);
          if (checked.ok) this.#entryFor(root, role.steps).values.set(role.question, checked.value);
          else problems.push({ column, value: raw, problem: checked.problem });
          break;
        }
        case 'choice': {
          const text = raw.trim();
          if (FALSE_CELL.test(text)) break;
          if (!TRUE_CELL.test(text) && text !== role.choice) {
            problems.push({ column, value: raw, problem: 'select' });
            break;
          }
          const entry = this.#entryFor(root, role.steps);
          entry.choices ??= new Map();
          let picked = entry.choices.get(role.question);
          if (!picked) {
            picked = new Set();
            entry.choices.set(role.question, picked);
          }
          picked.add(role.choice);
          break;
        }
        case 'geo-part': {
          const text = raw.trim();
          if (!/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(text)) {
            problems.push({ column, value: raw, problem: 'geopoint' });
            break;
          }
          const entry = this.#entryFor(root, role.steps);
          entry.geoParts ??= new Map();
          let parts = entry.geoParts.get(role.question);
          if (!parts) {
            parts = [];
            entry.geoParts.set(role.question, parts);
          }
          parts[role.part] = text;
          break;
        }
      }
    }
    this.#combineParts(root, problems);
    if (problems.length > 0) return { ok: false, problems };
    const rules = this.#rules;
    const top: { start: RecordValue | undefined; end: RecordValue | undefined } = { start: undefined, end: undefined };
    const sink: RecordSink | null = rules === null ? null : { members: '', found: new Map(), top, counts: {}, position: '' };
    if (sink !== null && rules !== null && this.#formUuid !== null) {
      sink.members = `${this.#formhubMember}${JSON.stringify(storedValue(rules, 'formhub/uuid', this.#formUuid))}`;
    }
    const body = this.#children(this.#form.root, root, true, sink);
    // Split (and so flattened) where the meta ids go; no meta group: they go in one at the end.
    const marker = body.indexOf(META_MARKER);
    const xml = {
      open: this.#open,
      before: flattened(`${this.#formhub}${marker < 0 ? body : body.slice(0, marker)}`),
      after: marker < 0 ? null : flattened(body.slice(marker + META_MARKER.length)),
      close: this.#close,
    };
    const members = sink === null ? null : flattened(sink.members);
    const facts = sink === null || rules === null ? null : recordFacts(rules, top, sink.found, sink.counts);
    return { ok: true, row: new PreparedRow(uuid ?? instanceUuid, submissionTime, submittedBy, xml, members, facts, rules) };
  }

  #entryFor(root: Entry, steps: readonly RepeatStep[]): Entry {
    let entry = root;
    for (const step of steps) entry = entry.child(step);
    return entry;
  }

  /** Split select_multiple columns and geopoint parts become the question's value (the whole column wins). */
  #combineParts(entry: Entry, problems: CellProblem[]): void {
    if (entry.choices) {
      for (const [question, picked] of entry.choices) {
        if (entry.values.has(question)) continue;
        const order = question.choiceNames ?? [...picked];
        const names = order.filter((name) => picked.has(name));
        if (names.length > 0) entry.values.set(question, names.join(' '));
      }
    }
    if (entry.geoParts) {
      for (const [question, parts] of entry.geoParts) {
        if (entry.values.has(question)) continue;
        const [lat, lon, alt, precision] = parts;
        if (lat === undefined || lon === undefined) {
          problems.push({ column: question.path, value: parts.filter((p) => p !== undefined).join(' '), problem: 'geopoint' });
          continue;
        }
        const value = [lat, lon, alt ?? (precision === undefined ? undefined : '0'), precision].filter((p) => p !== undefined).join(' ');
        const checked = checkValue(question, value);
        if (checked.ok) entry.values.set(question, checked.value);
        else problems.push({ column: question.path, value, problem: checked.problem });
      }
    }
    if (entry.repeats) for (const entries of entry.repeats.values()) for (const child of entries.values()) this.#combineParts(child, problems);
  }

  /**
   * The XML of a section's children; at the root, `meta` gets a marker where instanceID goes.
   * With a sink, the answers also go into its record as the parser would read them from this XML.
   */
  #children(section: FormSection, entry: Entry, atRoot: boolean, sink: RecordSink | null): string {
    let out = '';
    for (const element of answerChildren(section)) out += this.#element(element, entry, atRoot, sink);
    return out;
  }

  #element(element: FormNode, entry: Entry, atRoot: boolean, sink: RecordSink | null): string {
    if (element.kind === 'question') {
      if (atRoot && (element.path === 'meta/instanceID' || element.path === 'meta/deprecatedID')) return '';
      const value = entry.values.get(element);
      if (value === undefined) return '';
      const texts = this.#textsOf(element);
      if (sink !== null) this.#store(sink, element.path, texts, value);
      return `${texts.open}${escapeText(value)}${texts.close}`;
    }
    if (element.kind === 'repeat') {
      const entries = entry.repeats?.get(element);
      if (!entries) return '';
      const texts = this.#textsOf(element);
      let out = '';
      let items = '';
      let kept = 0;
      // The count is keyed before the items' own repeats are, in the parser's order.
      const countKey = sink === null ? '' : repeatCountKey(element.path, sink.position);
      if (sink !== null) sink.counts[countKey] = 0;
      for (const index of [...entries.keys()].sort((a, b) => a - b)) {
        const position = sink === null ? '' : itemPosition(sink.position, kept + 1);
        const item: RecordSink | null = sink === null ? null : { members: '', found: sink.found, top: null, counts: sink.counts, position };
        const inner = this.#children(element, entries.get(index) as Entry, false, item);
        if (inner !== '') out += `${texts.open}${inner}${texts.close}`;
        // An entry whose answers were all blank is no entry to the parser.
        if (item !== null && item.members !== '') {
          items += `${items === '' ? '{' : ',{'}${item.members}}`;
          kept++;
        }
      }
      if (sink !== null) {
        if (items !== '') {
          this.#addMember(sink, texts, `[${items}]`);
          sink.counts[countKey] = kept;
        } else {
          delete sink.counts[countKey];
        }
      }
      return out;
    }
    const texts = this.#textsOf(element);
    const isMeta = atRoot && element.path === 'meta';
    const inner = this.#children(element, entry, atRoot, sink);
    if (isMeta) return `${texts.open}${inner}${META_MARKER}${texts.close}`;
    return inner === '' ? '' : `${texts.open}${inner}${texts.close}`;
  }

  #addMember(sink: RecordSink, texts: ElementTexts, json: string): void {
    sink.members = sink.members === '' ? `${texts.firstMember}${json}` : `${sink.members}${texts.nextMember}${json}`;
  }

  #store(sink: RecordSink, path: string, texts: ElementTexts, value: string): void {
    const text = storedText(value);
    if (text === null) return;
    const rules = this.#rules as RecordRules;
    const stored = storedValue(rules, path, text);
    // Paths are unique within a record here (canBuildRecords), so each member is written once.
    this.#addMember(sink, texts, JSON.stringify(stored));
    if (sink.top !== null) {
      if (path === rules.startPath) sink.top.start = stored;
      if (path === rules.endPath) sink.top.end = stored;
    }
    if (typeof stored === 'string' && this.#factPaths.has(path)) {
      const list = sink.found.get(path);
      if (list) list.push(stored);
      else sink.found.set(path, [stored]);
    }
  }
}
