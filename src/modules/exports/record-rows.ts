// Stored rows into export records: the record's JSON with the meta keys its row's columns hold,
// users named once per export. Used by the export source and by CSV helper threads alike.
import type { FormModel, FormNode } from '../../lib/form-model/model.ts';
import type { ExportRecord } from '../../lib/writers/layout/types.ts';
import type { RawCsvWriter } from '../../lib/writers/csv/raw-rows.ts';
import type { DbOrTx } from '../../platform/db.ts';
import { CopyBuffers } from '../../platform/pg-copy.ts';
import * as repo from './repository.ts';

/** Usernames by user id for one export, each asked for once (see repo.listExportRecords). */
class Usernames {
  private readonly known = new Map<number, string | null>();

  constructor(private readonly db: DbOrTx) {}

  /** Looks up the users of these rows not seen before. */
  async learn(rows: readonly repo.ExportRecordRow[]): Promise<void> {
    const missing = new Set<number>();
    for (const row of rows) {
      if (row.submitted_by !== null && !this.known.has(row.submitted_by)) missing.add(row.submitted_by);
      if (row.last_edited_by !== null && !this.known.has(row.last_edited_by)) missing.add(row.last_edited_by);
    }
    if (missing.size === 0) return;
    const found = await repo.listUsernames(this.db, [...missing]);
    for (const id of missing) this.known.set(id, found.get(id) ?? null);
  }

  name(id: number | null): string | null {
    return id === null ? null : (this.known.get(id) ?? null);
  }
}

const TWO_DIGITS = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, '0'));
const DAY_SECONDS = 86_400;

/**
 * Times as `YYYY-MM-DDTHH:MM:SS+00:00`, to the second (fractions cut, as onadata's exports show
 * them). An export's records mostly share their day, so the date is made once per day: a Date and
 * toISOString per time cost more than the database's formatting it saved.
 */
export class IsoSeconds {
  private day = Number.NaN;
  private datePart = '';

  format(epochSeconds: number): string {
    const seconds = Math.floor(epochSeconds);
    const day = Math.floor(seconds / DAY_SECONDS);
    if (day !== this.day) {
      this.day = day;
      this.datePart = new Date(day * DAY_SECONDS * 1000).toISOString().slice(0, 11);
    }
    const time = seconds - day * DAY_SECONDS;
    return `${this.datePart}${TWO_DIGITS[Math.floor(time / 3600)] ?? ''}:${TWO_DIGITS[Math.floor(time / 60) % 60] ?? ''}:${TWO_DIGITS[time % 60] ?? ''}+00:00`;
  }
}

/**
 * Parsed JSON with no Object.prototype under its objects, nested ones too: an answer to a question
 * named `constructor` or `toString` that a record lacks must read as missing, not as the function
 * every object inherits (exports of such forms failed). Only for forms with such names: records
 * whose prototype was changed made a CSV export of 1,000,000 records three times slower.
 */
function withoutPrototypes(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    for (const item of value) withoutPrototypes(item);
    return;
  }
  Object.setPrototypeOf(value, null);
  const object = value as Record<string, unknown>;
  for (const key in object) {
    const inner = object[key];
    if (typeof inner === 'object' && inner !== null) withoutPrototypes(inner);
  }
}

/** Whether a form has a field or repeat whose record key every object inherits (`constructor`, `toString`…). */
export function hasInheritedNames(form: FormModel): boolean {
  const walk = (nodes: readonly FormNode[]): boolean => nodes.some((node) => node.path in Object.prototype || (node.kind !== 'question' && walk(node.children)));
  return walk(form.root.children);
}

/** The meta keys a record gets from its row's columns (they win over stored keys), in metaValues' order. */
export const ROW_META_KEYS = [
  '_id', '_uuid', '_submission_time', '_date_modified', '_version', '_submitted_by', '_last_edited_by',
  '_total_media', '_media_count', '_media_all_received', '_attachments',
] as const;

/** The row's meta values, in ROW_META_KEYS' order, into `into`. */
function metaValues(row: repo.ExportRecordRow, users: Usernames, times: IsoSeconds, into: unknown[]): void {
  into[0] = Number(row.id);
  into[1] = row.uuid;
  into[2] = times.format(row.submission_time);
  into[3] = times.format(row.date_modified);
  into[4] = row.version;
  into[5] = users.name(row.submitted_by);
  into[6] = users.name(row.last_edited_by);
  into[7] = row.total_media;
  into[8] = row.media_count;
  into[9] = row.media_count >= row.total_media;
  into[10] = row.attachments === null ? {} : (JSON.parse(row.attachments) as unknown);
}

/** A stored record's JSON text, as read (a string) or decoded from the bytes COPY read. */
function textOf(json: string | repo.RecordBytes): string {
  return typeof json === 'string' ? json : json.src.toString('utf8', json.start, json.end);
}

/** The stored record (its text) with the meta keys its row's columns hold. */
function recordOf(json: string | repo.RecordBytes, meta: readonly unknown[], ownKeysOnly: boolean): ExportRecord {
  const record = JSON.parse(textOf(json)) as Record<string, unknown>;
  if (ownKeysOnly) withoutPrototypes(record);
  for (let i = 0; i < ROW_META_KEYS.length; i++) record[ROW_META_KEYS[i] as string] = meta[i];
  return record as ExportRecord;
}

/** A page of records, to be read once, in order: as records, or written as CSV lines by `raw`. */
export interface RecordPage {
  readonly count: number;
  readonly records: Iterable<ExportRecord>;
  /**
   * The page's CSV lines written by a raw writer (made with ROW_META_KEYS as its given keys) from
   * the stored records' text, none of them parsed; instead of reading `records`.
   */
  rawLines?(raw: RawCsvWriter): Uint8Array[];
  /**
   * The page's records as their stored text's UTF-8 bytes and their meta values (ROW_META_KEYS'
   * order), one at a time in one object that the next record reuses; instead of reading `records`.
   */
  storedRecords(): Iterable<StoredRecord>;
}

/** A StoredRecord as PageReader fills it. */
interface StoredText extends StoredRecord {
  src: Buffer;
  start: number;
  end: number;
  json: string | repo.RecordBytes;
}

/** A record as stored, for readers of its bytes (valid until the next record is read). */
export interface StoredRecord {
  /** The record's JSON text as UTF-8 in src[start..end). */
  readonly src: Buffer;
  readonly start: number;
  readonly end: number;
  /** The meta values of its row, in ROW_META_KEYS' order. */
  readonly meta: readonly unknown[];
  /** The record parsed whole, as `records` would have given it. */
  parsed(): ExportRecord;
}

/**
 * Turns pages of rows into records for one export. The rows are let go by hand: the driver's
 * result objects often sit in V8's old generation, and while they point at the rows every row
 * survives young-generation collections and is promoted, which grew the heap by hundreds of
 * megabytes between full collections.
 */
export class PageReader {
  private readonly users: Usernames;
  private readonly times = new IsoSeconds();
  private readonly ownKeysOnly: boolean;
  private readonly meta: unknown[] = [];
  /** A record's text as UTF-8, for raw writers (grown when a record needs more). */
  private scratch = Buffer.allocUnsafeSlow(64 * 1024);
  /** The buffers pages are read into by COPY (repo.listExportRecords), each free again once its records are read. */
  readonly buffers = new CopyBuffers();

  /** `form`: its records are read with no prototype when it has inherited names (hasInheritedNames). */
  constructor(db: DbOrTx, form: FormModel) {
    this.users = new Usernames(db);
    this.ownKeysOnly = hasInheritedNames(form);
  }

  /**
   * The rows' records, made one at a time as they are read and each row let go once read: a
   * reader done with each record before the next keeps one parsed record alive, not a page of
   * them, so fewer objects outlive a young-generation collection.
   */
  async page(rows: repo.ExportRecordRow[]): Promise<RecordPage> {
    await this.users.learn(rows);
    const { users, times, ownKeysOnly, meta } = this;
    const count = rows.length;
    // Rows read by COPY (all of a page's are read together) point into a buffer of `buffers`, free
    // again once all the rows read into it are used: a page may be a part of them (serialPages).
    const copied = rows[0]?.json_text;
    const done = typeof copied === 'object' ? () => this.buffers.used(copied.src, count) : () => undefined;
    const records = (function* (): Generator<ExportRecord> {
      for (let i = 0; i < rows.length; i += 1) {
        const row = rows[i];
        if (row === undefined) continue;
        rows[i] = undefined as unknown as repo.ExportRecordRow;
        metaValues(row, users, times, meta);
        yield recordOf(row.json_text, meta, ownKeysOnly);
      }
      rows.length = 0;
      done();
    })();
    const stored: StoredText = { src: this.scratch, start: 0, end: 0, meta, json: '', parsed: () => recordOf(stored.json, meta, ownKeysOnly) };
    const storedRecords = (): Generator<StoredRecord> => this.storedOf(rows, stored, done);
    const rawLines = (raw: RawCsvWriter): Uint8Array[] => {
      for (const record of storedRecords()) raw.line(record.src, record.start, record.end, record.meta);
      return raw.take();
    };
    return { count, records, rawLines, storedRecords };
  }

  /**
   * The rows' records as UTF-8 bytes in `stored`, one at a time, each row let go once read: the
   * bytes COPY read where they are, a string's written into the scratch buffer.
   */
  private *storedOf(rows: repo.ExportRecordRow[], stored: StoredText, done: () => void): Generator<StoredRecord> {
    for (let i = 0; i < rows.length; i += 1) {
      const row = rows[i];
      if (row === undefined) continue;
      rows[i] = undefined as unknown as repo.ExportRecordRow;
      metaValues(row, this.users, this.times, this.meta);
      const json = row.json_text;
      stored.json = json;
      if (typeof json === 'string') {
        if (json.length * 3 > this.scratch.length) this.scratch = Buffer.allocUnsafeSlow(json.length * 3);
        stored.src = this.scratch;
        stored.start = 0;
        stored.end = this.scratch.write(json, 0);
      } else {
        stored.src = json.src;
        stored.start = json.start;
        stored.end = json.end;
      }
      yield stored;
    }
    rows.length = 0;
    stored.src = this.scratch;
    done();
  }
}
