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

/** Parsed pieces of an ISO date, time or date-time; absent parts are undefined. */
interface IsoParts {
  year?: number;
  month?: number;
  day?: number;
  /** Seconds since midnight, fraction included. */
  clock?: number;
  /** Seconds east of UTC. */
  offset: number;
}

/**
 * A small cursor parser rather than a regular expression: exports convert millions of
 * these and this is several times faster. Accepts `[-]YYYY-MM-DD`, then optionally `T` or a
 * space and a time; a time is `HH:MM[:SS[.fff]]` followed by `Z`, `±HH`, `±HHMM` or `±HH:MM`.
 */
class IsoCursor {
  at = 0;
  constructor(readonly text: string) {}

  get done(): boolean {
    return this.at >= this.text.length;
  }

  peek(): number {
    return this.text.charCodeAt(this.at);
  }

  /** Exactly `count` digits as a number, or -1. */
  digits(count: number): number {
    let value = 0;
    for (let i = 0; i < count; i += 1) {
      const digit = this.text.charCodeAt(this.at + i) - 48;
      if (!(digit >= 0 && digit <= 9)) return -1;
      value = value * 10 + digit;
    }
    this.at += count;
    return value;
  }

  accept(char: string): boolean {
    if (this.text[this.at] !== char) return false;
    this.at += 1;
    return true;
  }

  date(parts: IsoParts): boolean {
    const negative = this.accept('-');
    const start = this.at;
    let year = 0;
    for (let digit = this.peek() - 48; digit >= 0 && digit <= 9; digit = this.peek() - 48) {
      year = year * 10 + digit;
      this.at += 1;
    }
    if (this.at - start < 4 || !this.accept('-')) return false;
    const month = this.digits(2);
    if (month < 0 || !this.accept('-')) return false;
    const day = this.digits(2);
    if (day < 0) return false;
    parts.year = negative ? -year : year;
    parts.month = month;
    parts.day = day;
    return true;
  }

  time(parts: IsoParts): boolean {
    const hours = this.digits(2);
    if (hours < 0 || !this.accept(':')) return false;
    const minutes = this.digits(2);
    if (minutes < 0) return false;
    let seconds = 0;
    if (this.accept(':')) {
      seconds = this.digits(2);
      if (seconds < 0) return false;
      if (this.accept('.')) {
        // Digits over a power of ten: both exact integers (up to 15 digits), so one rounding.
        let numerator = 0;
        let denominator = 1;
        for (let digit = this.peek() - 48; digit >= 0 && digit <= 9; digit = this.peek() - 48) {
          if (denominator < 1e15) {
            numerator = numerator * 10 + digit;
            denominator *= 10;
          }
          this.at += 1;
        }
        if (denominator === 1) return false;
        seconds += numerator / denominator;
      }
    }
    // 24:00:00 is ISO 8601's end of a day; 60 seconds allows a leap second.
    if (hours > 24 || minutes > 59 || seconds >= 61 || (hours === 24 && (minutes > 0 || seconds > 0))) return false;
    parts.clock = hours * 3600 + minutes * 60 + seconds;
    if (this.accept('Z')) return true;
    const sign = this.accept('+') ? 1 : this.accept('-') ? -1 : 0;
    if (sign === 0) return true;
    const offsetHours = this.digits(2);
    if (offsetHours < 0) return false;
    let offsetMinutes = 0;
    if (!this.done) {
      this.accept(':');
      offsetMinutes = this.digits(2);
      if (offsetMinutes < 0) return false;
    }
    parts.offset = sign * (offsetHours * 3600 + offsetMinutes * 60);
    return true;
  }
}

function parseIsoDateTime(text: string): IsoParts | null {
  const cursor = new IsoCursor(text.trim());
  const parts: IsoParts = { offset: 0 };
  if (!cursor.date(parts)) return null;
  if (!cursor.done && !((cursor.accept('T') || cursor.accept(' ')) && cursor.time(parts))) return null;
  return cursor.done ? parts : null;
}

function parseIsoTime(text: string): IsoParts | null {
  const cursor = new IsoCursor(text.trim());
  const parts: IsoParts = { offset: 0 };
  return cursor.time(parts) && cursor.done ? parts : null;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/**
 * Days since 1970-01-01 in the proleptic Gregorian calendar, or null for an impossible date.
 * Plain arithmetic (the "days from civil" algorithm) rather than a Date per value: exports
 * convert millions of these.
 */
function civilDays(year: number, month: number, day: number): number | null {
  const monthDays = month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1];
  if (monthDays === undefined || day < 1 || day > monthDays) return null;
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/**
 * `YYYY-MM-DD`, optionally followed by a time and offset, as seconds since 1582-10-14.
 * A date alone is midnight. Fractions of seconds are kept.
 */
export function spssDateTimeFromIso(text: string, zone: SpssZone = 'wall'): number | null {
  const parts = parseIsoDateTime(text);
  if (parts?.year === undefined || parts.month === undefined || parts.day === undefined) return null;
  const days = civilDays(parts.year, parts.month, parts.day);
  if (days === null) return null;
  const clock = (parts.clock ?? 0) - (zone === 'utc' ? parts.offset : 0);
  return days * SECONDS_PER_DAY + GREGORIAN_EPOCH_TO_UNIX_SECONDS + clock;
}

/** The calendar date of an ISO date or date-time (its time of day dropped), as seconds since 1582-10-14. */
export function spssDateFromIso(text: string, zone: SpssZone = 'wall'): number | null {
  const seconds = spssDateTimeFromIso(text, zone);
  return seconds === null ? null : Math.floor(seconds / SECONDS_PER_DAY) * SECONDS_PER_DAY;
}

/** `HH:MM[:SS[.fff]][offset]` (ODK's time) as seconds since midnight. */
export function spssTimeFromIso(text: string, zone: SpssZone = 'wall'): number | null {
  const parts = parseIsoTime(text);
  if (parts?.clock === undefined) return null;
  if (zone === 'wall') return parts.clock;
  const utc = parts.clock - parts.offset;
  return ((utc % SECONDS_PER_DAY) + SECONDS_PER_DAY) % SECONDS_PER_DAY;
}

/** A JavaScript Date (an instant) as SPSS seconds, in UTC. */
export function spssDateTimeFromDate(date: Date): number {
  return date.getTime() / 1000 + GREGORIAN_EPOCH_TO_UNIX_SECONDS;
}
