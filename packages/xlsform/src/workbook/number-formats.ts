// Does a cell's number format display a date or time? Excel's built-in date
// format ids, and for custom formats the presence of date/time codes outside
// quoted text, escapes, colours and conditions.

export const BUILTIN_DATE_FORMATS: ReadonlySet<number> = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54, 55, 56, 57, 58,
]);

const QUOTED = /"[^"]*"/g;
const ESCAPED = /\\./g;
const PADDING = /[_*]./g;
const BRACKETS = /\[[^\]]*\]/g;
const ELAPSED = /\[(h+|m+|s+)\]/i;
const DATE_CODES = /[ymdhs]/i;

export function isDateFormat(code: string): boolean {
  if (/^general$/i.test(code.trim())) return false;
  const section = code.split(';')[0] ?? '';
  if (ELAPSED.test(section)) return true;
  const stripped = section.replace(QUOTED, '').replace(ESCAPED, '').replace(PADDING, '').replace(BRACKETS, '');
  return DATE_CODES.test(stripped);
}
