// The stored record of an imported row, built straight from the row's answers instead of by
// parsing the instance XML the row also becomes. It must equal what the submission parser makes
// of that XML (src/lib/instance-xml.ts; instance-record.test.ts compares the two
// over many generated rows), so it follows the parser's rules: slash-path keys, groups flattened,
// repeats as arrays of objects, whitespace-only values dropped, line ends read as XML reads them,
// integer and decimal answers as numbers. Forms where the XML would not map one element to one
// answer (prefixed names, names used twice, a `formhub` or non-group `meta` of their own, or
// facts read from the meta ids) are left to the parser.
import { coerceNumeric, secondsOf, type RecordValue } from '../instance-xml.ts';
import type { FormModel, FormSection } from '../form-model/model.ts';
import { answerChildren } from './answers.ts';

/** What the record builder reads of the form, as the parser reads it. */
export type RecordRules = Pick<FormModel, 'numberPaths' | 'geopointPaths' | 'mediaPaths' | 'startPath' | 'endPath' | 'encrypted'>;

/** What storage needs besides the record, as the parser reports it. */
export interface RecordFacts {
  /** `[lat, lng]` of the first geopoint answer; `[null, null]` when there is none or any is unreadable. */
  geolocation: [number, number] | [null, null];
  /** Seconds from `start` to `end`, `''` when either is missing or unreadable. */
  duration: number | '';
  /** Distinct attachment names the record's answers name. */
  mediaFiles: string[];
  /** Items of each repeat, as stored beside the record (src/lib/writers/layout/repeat-counts.ts). */
  repeatCounts: string;
}

// Python's str.isspace(): the parser drops text made only of these between two tags.
const PYTHON_BLANK = /^[\t-\r\u001C-\u0020\u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]*$/;
// Python's float() syntax, which decides whether a geopoint is readable.
const PYTHON_FLOAT = /^\s*[+-]?(?:\d+(?:_\d+)*(?:\.(?:\d+(?:_\d+)*)?)?|\.\d+(?:_\d+)*)(?:[eE][+-]?\d+(?:_\d+)*)?\s*$/;

/** The answer as the parser would read it back from the XML, or null when it would find none. */
export function storedText(value: string): string | null {
  const text = value.includes('\r') ? value.replace(/\r\n?/g, '\n') : value;
  return PYTHON_BLANK.test(text) ? null : text;
}

export function storedValue(rules: RecordRules, path: string, text: string): RecordValue {
  return rules.numberPaths.has(path) ? coerceNumeric(text) : text;
}

function sectionMapsOneToOne(section: FormSection): boolean {
  const names = new Set<string>();
  for (const child of answerChildren(section)) {
    if (child.name.includes(':') || names.has(child.name)) return false;
    names.add(child.name);
    if (child.kind !== 'question' && !sectionMapsOneToOne(child)) return false;
  }
  return true;
}

/** Whether records of this form can be built directly (else the parser reads each row's XML). */
export function canBuildRecords(form: FormModel): boolean {
  if (form.encrypted || form.rootName.includes(':')) return false;
  // Facts are computed from the answers alone: no fact may come from the ids added around them.
  const factPaths = [...form.geopointPaths, ...form.mediaPaths, form.startPath, form.endPath];
  if (factPaths.some((path) => path === 'formhub/uuid' || path === 'meta/instanceID' || path === 'meta/deprecatedID')) return false;
  for (const child of answerChildren(form.root)) {
    if (child.name === 'formhub' || (child.name === 'meta' && child.kind !== 'group')) return false;
  }
  return sectionMapsOneToOne(form.root);
}

function pythonFloat(text: string): number | null {
  if (!PYTHON_FLOAT.test(text)) return null;
  const value = Number(text.replaceAll('_', ''));
  return Number.isFinite(value) ? value : null;
}

/**
 * The facts of a record from its top-level start and end answers (undefined when it has none)
 * and the geopoint and media answers found anywhere in it (by path, in document order).
 */
export function recordFacts(
  rules: RecordRules,
  top: { start: RecordValue | undefined; end: RecordValue | undefined },
  found: ReadonlyMap<string, readonly string[]>,
  repeatCounts: Readonly<Record<string, number>>,
): RecordFacts {
  let geolocation: [number, number] | [null, null] | null = null;
  scan: for (const path of rules.geopointPaths) {
    for (const value of found.get(path) ?? []) {
      const parts = value.trim().split(/\s+/);
      const lat = pythonFloat(parts[0] ?? '');
      const lng = pythonFloat(parts[1] ?? '');
      if (lat === null || lng === null || parts.slice(2).some((p) => pythonFloat(p) === null)) {
        geolocation = [null, null];
        break scan;
      }
      geolocation ??= [lat, lng];
    }
  }
  const mediaFiles = new Set<string>();
  for (const path of rules.mediaPaths) for (const value of found.get(path) ?? []) mediaFiles.add(value);
  const start = secondsOf(top.start);
  const end = secondsOf(top.end);
  return {
    geolocation: geolocation ?? [null, null],
    duration: start === null || end === null ? '' : end - start,
    mediaFiles: [...mediaFiles],
    repeatCounts: Object.keys(repeatCounts).length === 0 ? '{}' : JSON.stringify(repeatCounts),
  };
}
