// SPSS keeps dates and times as numbers of seconds: dates and date-times count from the start
// of the Gregorian calendar (1582-10-14 00:00), times from midnight. These helpers turn the ISO
// strings that ODK submissions hold into those numbers; null means "not a date" (→ system-missing).

const SECONDS_PER_DAY = 86_400;
/** 1582-10-14 is 141,428 days before 1970-01-01. */
const GREGORIAN_EPOCH_TO_UNIX_SECONDS = 141_428 * SECONDS_PER_DAY;

/**
 * How to treat a UTC offset (`Z`, `+03:00`): 'wall' keeps the clock time as written (what the
 * enumerator's device showed; SPSS has no time zones), 'utc' converts to UTC first.
 */
export type SpssZone = 'wall' | 'utc';

const DATE = String.raw`(-?\d{4,})-(\d{2})-(\d{2})`;
const TIME = String.raw`(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?`;
const OFFSET = String.raw`(Z|[+-]\d{2}(?::?\d{2})?)`;
const DATE_TIME_PATTERN = new RegExp(`^${DATE}(?:[T ]${TIME}${OFFSET}?)?$`);
const TIME_PATTERN = new RegExp(`^${TIME}${OFFSET}?$`);

/** Seconds east of UTC for `Z`, `+03`, `+0330` or `-03:30`. */
function offsetSeconds(offset: string | undefined): number {
  if (offset === undefined || offset === 'Z') return 0;
  const sign = offset.startsWith('-') ? -1 : 1;
  const digits = offset.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
  return sign * (hours * 3600 + minutes * 60);
}

/** Days since 1970-01-01 in the proleptic Gregorian calendar, or null for an impossible date. */
function civilDays(year: number, month: number, day: number): number | null {
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not read years 0–99 as 1900–1999.
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return Math.round(date.getTime() / 1000 / SECONDS_PER_DAY);
}

function clockSeconds(hours: string, minutes: string, seconds: string | undefined, fraction: string | undefined): number | null {
  const h = Number(hours);
  const m = Number(minutes);
  const s = Number(seconds ?? '0');
  // 24:00:00 is allowed by ISO 8601 as the end of a day; 60 seconds allows a leap second.
  if (h > 24 || m > 59 || s > 60 || (h === 24 && (m > 0 || s > 0))) return null;
  return h * 3600 + m * 60 + s + (fraction === undefined ? 0 : Number(fraction));
}

/**
 * `YYYY-MM-DD`, optionally followed by a time and offset, as seconds since 1582-10-14.
 * A date alone is midnight. Fractions of seconds are kept.
 */
export function spssDateTimeFromIso(text: string, zone: SpssZone = 'wall'): number | null {
  const match = DATE_TIME_PATTERN.exec(text.trim());
  if (!match) return null;
  const [, year = '', month = '', day = '', hours, minutes, seconds, fraction, offset] = match;
  const days = civilDays(Number(year), Number(month), Number(day));
  if (days === null) return null;
  let clock = 0;
  if (hours !== undefined && minutes !== undefined) {
    const parsed = clockSeconds(hours, minutes, seconds, fraction);
    if (parsed === null) return null;
    clock = parsed - (zone === 'utc' ? offsetSeconds(offset) : 0);
  }
  return days * SECONDS_PER_DAY + GREGORIAN_EPOCH_TO_UNIX_SECONDS + clock;
}

/** The calendar date of an ISO date or date-time (its time of day dropped), as seconds since 1582-10-14. */
export function spssDateFromIso(text: string, zone: SpssZone = 'wall'): number | null {
  const seconds = spssDateTimeFromIso(text, zone);
  return seconds === null ? null : Math.floor(seconds / SECONDS_PER_DAY) * SECONDS_PER_DAY;
}

/** `HH:MM[:SS[.fff]][offset]` (ODK's time) as seconds since midnight. */
export function spssTimeFromIso(text: string, zone: SpssZone = 'wall'): number | null {
  const match = TIME_PATTERN.exec(text.trim());
  if (!match) return null;
  const [, hours = '', minutes = '', seconds, fraction, offset] = match;
  const clock = clockSeconds(hours, minutes, seconds, fraction);
  if (clock === null) return null;
  if (zone === 'wall') return clock;
  const utc = clock - offsetSeconds(offset);
  return ((utc % SECONDS_PER_DAY) + SECONDS_PER_DAY) % SECONDS_PER_DAY;
}

/** A JavaScript Date (an instant) as SPSS seconds, in UTC. */
export function spssDateTimeFromDate(date: Date): number {
  return date.getTime() / 1000 + GREGORIAN_EPOCH_TO_UNIX_SECONDS;
}
