// Excel stores dates as day numbers with the time as a fraction. onadata's import writes a date
// cell as Python's isoformat of the datetime (`2014-09-04T12:08:04`); a whole day is written as the
// date alone, which is what a date question holds.
const DAY_MS = 86_400_000;
// Day 0 of the 1900 system as Excel counts (its phantom 29 February 1900 makes 1899-12-30 day 0
// for every date after February 1900); the 1904 system starts on 1904-01-01.
const EPOCH_1900 = Date.UTC(1899, 11, 30);
const EPOCH_1904 = Date.UTC(1904, 0, 1);

const pad = (n: number): string => String(n).padStart(2, '0');

export function excelSerialToText(serial: number, date1904: boolean): string {
  if (!Number.isFinite(serial)) return String(serial);
  const ms = Math.round(serial * DAY_MS / 1000) * 1000;
  const date = new Date((date1904 ? EPOCH_1904 : EPOCH_1900) + ms);
  const time = `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
  if (serial >= 0 && serial < 1 && !date1904) return time;
  const day = `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
  return ms % DAY_MS === 0 ? day : `${day}T${time}`;
}
