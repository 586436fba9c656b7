// Dates as Excel stores them: a serial number of days since 1899-12-30 in the 1900 date system,
// with the time of day as the fraction. Excel believes 1900 was a leap year, so serials before
// 1900-03-01 would be off by one: such dates (and anything unparseable) stay text.
// Parsed by hand: exports hold millions of dates and this is on the hot path.
import type { ExportDate } from './cell.ts';

/** Days from 1970-01-01 to 1899-12-30. */
const EPOCH_DAYS = -25_569;
/** Serial of 1900-03-01. */
const FIRST_SAFE_SERIAL = 61;

function digits(text: string, start: number, count: number): number {
  let value = 0;
  for (let i = start; i < start + count; i += 1) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Seconds since midnight of `THH:MM[:SS[.fff]]` at `at`, or -1. */
function timeOfDay(iso: string, at: number): number {
  if (iso.length === at) return 0;
  const sep = iso.charCodeAt(at);
  if ((sep !== 84 && sep !== 32) || iso.charCodeAt(at + 3) !== 58) return -1; // 'T' or ' ', ':'
  const hours = digits(iso, at + 1, 2);
  const minutes = digits(iso, at + 4, 2);
  if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return -1;
  let seconds = 0;
  if (iso.charCodeAt(at + 6) === 58) {
    seconds = digits(iso, at + 7, 2);
    if (seconds < 0 || seconds > 59) return -1;
    if (iso.charCodeAt(at + 9) === 46) {
      // Milliseconds: at most three digits count.
      let scale = 0.1;
      for (let i = at + 10; i < iso.length && scale > 0.0001; i += 1) {
        const d = iso.charCodeAt(i) - 48;
        if (d < 0 || d > 9) break;
        seconds += d * scale;
        scale /= 10;
      }
    }
  }
  return hours * 3600 + minutes * 60 + seconds;
}

/** The Excel serial for an export date, or undefined when it cannot be one. */
export function excelSerial(value: ExportDate): number | undefined {
  const iso = value.iso;
  if (iso.length < 10 || iso.charCodeAt(4) !== 45 || iso.charCodeAt(7) !== 45) return undefined;
  const year = digits(iso, 0, 4);
  const month = digits(iso, 5, 2);
  const day = digits(iso, 8, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  const serial = daysFromCivil(year, month, day) - EPOCH_DAYS;
  if (serial < FIRST_SAFE_SERIAL) return undefined;
  if (value.kind === 'date') return serial;
  // The zone, if any, is dropped, as onadata does: the clock time the device showed.
  const seconds = timeOfDay(iso, 10);
  if (seconds < 0) return undefined;
  return serial + Math.round(seconds * 1000) / 86_400_000;
}
