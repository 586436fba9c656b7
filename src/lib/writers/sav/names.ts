// Variable naming. The caller's names (XLSForm xpaths like `group/question`) become valid,
// unique SPSS names written in the long variable names record (7/13); each variable also
// gets an ASCII short name of at most 8 bytes for its variable records.
import { truncateUtf8 } from './utf8.ts';

export const MAX_NAME_BYTES = 64;
const MAX_SHORT_NAME_BYTES = 8;

/** SPSS keywords that can never be variable names. */
const RESERVED_WORDS: ReadonlySet<string> = new Set([
  'ALL', 'AND', 'BY', 'EQ', 'GE', 'GT', 'LE', 'LT', 'NE', 'NOT', 'OR', 'TO', 'WITH',
]);

/** SPSS compares names without regard to case. */
function fold(name: string): string {
  return name.toUpperCase();
}

/**
 * One name made valid, not yet unique. First onadata's replacements (`/` → `.`, `-` and `:` →
 * `_`, braces dropped, `@` before a leading `_`), then what SPSS itself demands: only letters,
 * digits, marks and `_ . @ # $`; a first character that is a letter or `@`; at most 64 bytes;
 * no trailing `.` (it would end the command in syntax); no reserved word.
 */
export function validSpssName(raw: string): string {
  let name = raw
    .normalize('NFC')
    .replaceAll('/', '.')
    .replaceAll('-', '_')
    .replaceAll(':', '_')
    .replace(/[{}]/g, '')
    // Emoji sequences become one `_` rather than `_` plus dangling joiners and selectors.
    .replace(/(?:\p{Extended_Pictographic}|\u200d|\ufe0f)+/gu, '_')
    .replace(/[^\p{L}\p{N}\p{M}_.@#$]/gu, '_');
  if (name === '') name = 'var';
  if (!/^[\p{L}@]/u.test(name)) name = `@${name}`;
  name = truncateUtf8(name, MAX_NAME_BYTES).replace(/\.+$/, (dots) => '_'.repeat(dots.length));
  if (RESERVED_WORDS.has(fold(name))) name = `${name}_`;
  return name;
}

/**
 * Valid names, unique without regard to case: a name already taken gets `@1`, `@2`, … (onadata
 * appends `@` and random hex; a counter keeps exports reproducible), cut to stay within 64 bytes.
 */
export function uniqueSpssNames(raws: ReadonlyArray<string>): string[] {
  const taken = new Set<string>();
  return raws.map((raw) => {
    const base = validSpssName(raw);
    let candidate = base;
    for (let n = 1; taken.has(fold(candidate)); n += 1) {
      const suffix = `@${n}`;
      candidate = truncateUtf8(base, MAX_NAME_BYTES - suffix.length) + suffix;
    }
    taken.add(fold(candidate));
    return candidate;
  });
}

/**
 * Short names for every segment of every variable (a very long string has several segments,
 * each a variable record of its own). Short names are ASCII, upper case and unique. None may
 * equal another variable's long name: readers rename short → long one variable at a time
 * and refuse a long name that is still in use as a short name.
 */
export function shortNamesFor(longNames: ReadonlyArray<string>, segmentCounts: ReadonlyArray<number>): string[][] {
  const ownerOfLongName = new Map<string, number>();
  longNames.forEach((name, index) => ownerOfLongName.set(fold(name), index));
  const taken = new Set<string>();
  // Where numbering resumes for each base, so thousands of `question_…` names stay linear.
  const nextNumber = new Map<string, number>();

  const claim = (base: string, variableIndex: number, isFirstSegment: boolean): string => {
    const isFree = (candidate: string): boolean => {
      if (taken.has(candidate) || RESERVED_WORDS.has(candidate)) return false;
      const owner = ownerOfLongName.get(candidate);
      return owner === undefined || (isFirstSegment && owner === variableIndex);
    };
    const numbered = (n: number): string => {
      const suffix = String(n);
      return base.slice(0, MAX_SHORT_NAME_BYTES - suffix.length) + suffix;
    };
    let candidate = base;
    if (!isFirstSegment || !isFree(candidate)) {
      let n = nextNumber.get(base) ?? 1;
      candidate = numbered(n);
      while (!isFree(candidate)) {
        n += 1;
        candidate = numbered(n);
      }
      nextNumber.set(base, n + 1);
    }
    taken.add(candidate);
    return candidate;
  };

  return longNames.map((longName, index) => {
    const ascii = fold(longName).replace(/[^A-Z0-9_@]/g, '');
    const base = (/^[A-Z@]/.test(ascii) ? ascii : `V${ascii}`).slice(0, MAX_SHORT_NAME_BYTES);
    const first = claim(base, index, true);
    const names = [first];
    const segments = segmentCounts[index] ?? 1;
    // Later segments get the first one's name with a number, as SPSS does.
    for (let segment = 1; segment < segments; segment += 1) {
      names.push(claim(first.slice(0, 5), index, false));
    }
    return names;
  });
}
