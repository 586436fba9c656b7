// Checks one imported cell against its question's kind of value. A value that already has the
// form a device would submit is kept exactly as written (an export re-imports unchanged); a few
// common spellings are rewritten to that form (onadata normalises dates with dateutil); anything
// else is refused with the problem named, as onadata's "Unknown date format(s)" messages do.
import type { FormQuestion } from '../form-model/model.ts';

export type CheckedValue = { ok: true; value: string } | { ok: false; problem: string };

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const LOOSE_YMD = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[T ]00:00(?::00(?:\.0+)?)?)?$/;
const MDY = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;
const ZONE = '(Z|[+-]\\d{2}(?::?\\d{2})?)?';
const ISO_DATE_TIME = new RegExp(`^(\\d{4})-(\\d{2})-(\\d{2})T(\\d{2}):(\\d{2}):(\\d{2})(\\.\\d+)?${ZONE}$`);
const LOOSE_DATE_TIME = new RegExp(`^(\\d{4})[-/](\\d{1,2})[-/](\\d{1,2})(?:[T ](\\d{1,2}):(\\d{2})(?::(\\d{2})(\\.\\d+)?)?)?${ZONE}$`);
const MDY_TIME = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?: (\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;
const ISO_TIME = new RegExp(`^(\\d{2}):(\\d{2}):(\\d{2})(\\.\\d+)?${ZONE}$`);
const LOOSE_TIME = new RegExp(`^(\\d{1,2}):(\\d{2})(?::(\\d{2})(\\.\\d+)?)?${ZONE}$`);

const pad = (n: number | string): string => String(n).padStart(2, '0');

function validDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function validTime(hour: number, minute: number, second: number): boolean {
  return hour <= 23 && minute <= 59 && second <= 59;
}

function validZone(zone: string | undefined): boolean {
  if (zone === undefined || zone === 'Z') return true;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  return hours <= 14 && minutes <= 59;
}

/** `YYYY-MM-DD`, or null when the text is not a date this importer reads. */
export function normaliseDate(text: string): string | null {
  if (ISO_DATE.test(text)) {
    const [, y, m, d] = ISO_DATE.exec(text) as RegExpExecArray;
    return validDate(Number(y), Number(m), Number(d)) ? text : null;
  }
  let parts: [number, number, number] | null = null;
  const ymd = LOOSE_YMD.exec(text);
  if (ymd) parts = [Number(ymd[1]), Number(ymd[2]), Number(ymd[3])];
  const mdy = MDY.exec(text);
  // dateutil reads month first, as the US spelling has it.
  if (mdy) parts = [Number(mdy[3]), Number(mdy[1]), Number(mdy[2])];
  if (!parts || !validDate(...parts)) return null;
  return `${parts[0]}-${pad(parts[1])}-${pad(parts[2])}`;
}

/** An XML Schema dateTime, or null. Times without a zone stay without one, as devices send them. */
export function normaliseDateTime(text: string): string | null {
  const iso = ISO_DATE_TIME.exec(text);
  if (iso) {
    const ok = validDate(Number(iso[1]), Number(iso[2]), Number(iso[3])) && validTime(Number(iso[4]), Number(iso[5]), Number(iso[6])) && validZone(iso[8]);
    return ok ? text : null;
  }
  let date: [number, number, number];
  let time: [number, number, number] = [0, 0, 0];
  let fraction = '';
  let zone = '';
  const loose = LOOSE_DATE_TIME.exec(text);
  const mdy = loose ? null : MDY_TIME.exec(text);
  if (loose) {
    date = [Number(loose[1]), Number(loose[2]), Number(loose[3])];
    if (loose[4] !== undefined) time = [Number(loose[4]), Number(loose[5]), Number(loose[6] ?? 0)];
    fraction = loose[7] ?? '';
    zone = loose[8] ?? '';
    if (loose[4] === undefined && zone !== '') return null;
  } else if (mdy) {
    date = [Number(mdy[3]), Number(mdy[1]), Number(mdy[2])];
    if (mdy[4] !== undefined) time = [Number(mdy[4]), Number(mdy[5]), Number(mdy[6] ?? 0)];
  } else {
    return null;
  }
  if (!validDate(...date) || !validTime(...time) || !validZone(zone || undefined)) return null;
  return `${date[0]}-${pad(date[1])}-${pad(date[2])}T${pad(time[0])}:${pad(time[1])}:${pad(time[2])}${fraction}${zone}`;
}

export function normaliseTime(text: string): string | null {
  const iso = ISO_TIME.exec(text);
  if (iso) return validTime(Number(iso[1]), Number(iso[2]), Number(iso[3])) && validZone(iso[5]) ? text : null;
  const loose = LOOSE_TIME.exec(text);
  if (!loose) return null;
  const time: [number, number, number] = [Number(loose[1]), Number(loose[2]), Number(loose[3] ?? 0)];
  if (!validTime(...time) || !validZone(loose[5])) return null;
  return `${pad(time[0])}:${pad(time[1])}:${pad(time[2])}${loose[4] ?? ''}${loose[5] ?? ''}`;
}

/** "lat lon [alt [accuracy]]" with a latitude and longitude in range. */
export function checkGeopoint(text: string): string | null {
  const parts = text.split(/\s+/);
  if (parts.length < 2 || parts.length > 4 || !parts.every((p) => DECIMAL.test(p))) return null;
  const lat = Number(parts[0]);
  const lon = Number(parts[1]);
  if (Math.abs(lat) > 90 || Math.abs(lon) > 180) return null;
  return parts.join(' ');
}

function inChoices(question: FormQuestion, name: string): boolean {
  return question.choiceNames === null || question.choiceNames.includes(name) || (question.allowsOther && name === 'other');
}

function checked(value: string | null, problem: string): CheckedValue {
  return value === null ? { ok: false, problem } : { ok: true, value };
}

/** Checks a non-empty cell (already trimmed of `n/a`) for the question it fills. */
export function checkValue(question: FormQuestion, raw: string): CheckedValue {
  const kind = question.uses.importValue;
  if (kind === 'text' || kind === null) return { ok: true, value: raw };
  const text = raw.trim();
  switch (kind) {
    case 'integer':
      return checked(INTEGER.test(text) ? text : null, 'integer');
    case 'decimal':
      return checked(DECIMAL.test(text) ? text : null, 'decimal');
    case 'date':
      return checked(normaliseDate(text), 'date');
    case 'datetime':
      return checked(normaliseDateTime(text), 'datetime');
    case 'time':
      return checked(normaliseTime(text), 'time');
    case 'geopoint':
      return checked(checkGeopoint(text), 'geopoint');
    case 'select_one':
      return checked(inChoices(question, text) ? text : null, 'choice');
    case 'select_multiple': {
      const names = text.split(/\s+/).filter((n) => n !== '');
      return checked(names.every((n) => inChoices(question, n)) ? names.join(' ') : null, 'choice');
    }
  }
}

/** onadata's wording for each problem ("Unknown date format(s): …"). */
export function problemLabel(problem: string): string {
  switch (problem) {
    case 'choice':
      return 'Unknown choice(s)';
    case 'geopoint':
      return 'Invalid geopoint(s)';
    case 'select':
      return 'Unknown choice value(s)';
    default:
      return `Unknown ${problem} format(s)`;
  }
}
