// Flat CSV lines written from stored records' UTF-8 JSON bytes (raw-json.ts) straight into UTF-8
// output: a text answer that needs no change is copied byte for byte, so most cells make no
// string at all. Anything else (formula protection, quoting, escapes, numbers that are not plain
// integers, values given by the caller) goes through the same cell functions as the compiled rows
// (RULE_CELLS), so a line is the compiled writer's line for the same record: raw-rows.test.ts
// holds it to that.
//
// Only layouts whose every column has a rule can be written this way (rawCsvWriter says when).
import { NA, text, type ColumnRule, type FlatColumn } from '../layout/flat.ts';
import { choiceNames, pointParts, riskyFirst } from '../layout/values.ts';
import { RULE_CELLS } from './compiled-rows.ts';
import { csvField } from './writer.ts';
import { GIVEN, MISSING, NUMBER, OTHER, RawRecordReader, TEXT } from './raw-json.ts';

const SPACE = 32;
const COMMA = 44;
const PIPE = 124;
const MINUS = 45;
const PLUS = 43;
const DOT = 46;
const ZERO = 48;
const NINE = 57;
const UPPER_E = 69;
const LOWER_E = 101;
const QUOTE = 34;
const CR = 13;
const NEWLINE = 10;
/** Output is cut into chunks of about this size. */
const CHUNK_BYTES = 64 * 1024;
/** A chunk's buffer: room for the line that takes it past CHUNK_BYTES (longer lines grow it). */
const BUFFER_BYTES = CHUNK_BYTES + 16 * 1024;
/** Digits of an integer written as stored: any such integer is exact as a double. */
const PLAIN_DIGITS = 15;

const utf8 = (text: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(text);
const NA_BYTES = utf8(NA);
const NOTHING = new Uint8Array(0);
const POINT_ZERO = utf8('.0');

const VALUE = 0;
const CHOICE = 1;
const PART = 2;
const TAGS = 3;
const EMPTY = 4;
const MEDIA = 5;

function isDigit(b: number | undefined): boolean {
  return b !== undefined && b >= ZERO && b <= NINE;
}

/**
 * Whether src[start..end) is numbers separated by single spaces (GPS answers, negative numbers):
 * the bytes values.ts's numbersOnly accepts, which formula protection leaves as they are. Each
 * token is `[+-]?(digits[.digits] | .digits)([eE][+-]?digits)?`.
 */
export function numberTokens(src: Uint8Array, start: number, end: number): boolean {
  let i = start;
  for (;;) {
    if (i < end && (src[i] === PLUS || src[i] === MINUS)) i++;
    let digits = 0;
    while (i < end && isDigit(src[i])) {
      i++;
      digits++;
    }
    if (i < end && src[i] === DOT) {
      i++;
      while (i < end && isDigit(src[i])) {
        i++;
        digits++;
      }
    }
    if (digits === 0) return false;
    if (i < end && (src[i] === UPPER_E || src[i] === LOWER_E)) {
      i++;
      if (i < end && (src[i] === PLUS || src[i] === MINUS)) i++;
      let exponent = 0;
      while (i < end && isDigit(src[i])) {
        i++;
        exponent++;
      }
      if (exponent === 0) return false;
    }
    if (i === end) return true;
    if (src[i] !== SPACE) return false;
    i++;
  }
}

class Op {
  constructor(
    readonly op: number,
    readonly rule: ColumnRule,
    readonly slot: number,
    /** media: the slot of the record's `_attachments`. */
    readonly attachments = -1,
    readonly decimal = false,
    readonly part = 0,
    readonly choice = NOTHING,
    readonly chosen = NOTHING,
    readonly unchosen = NOTHING,
  ) {}
}


/** UTF-8 output gathered in chunks of about CHUNK_BYTES. */
class ByteOut {
  buf: Buffer = Buffer.allocUnsafeSlow(BUFFER_BYTES);
  len = 0;
  readonly chunks: Uint8Array[] = [];

  ensure(bytes: number): void {
    if (this.len + bytes <= this.buf.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.len + bytes));
    this.buf.copy(bigger, 0, 0, this.len);
    this.buf = bigger;
  }

  bytes(bytes: Uint8Array): void {
    this.copy(bytes, 0, bytes.length);
  }

  /** Copies src[start..end). A loop: Buffer#copy costs more than the copy for a cell's few bytes. */
  copy(src: Uint8Array, start: number, end: number): void {
    this.ensure(end - start);
    const buf = this.buf;
    let at = this.len;
    for (let i = start; i < end; i++) buf[at++] = src[i] as number;
    this.len = at;
  }

  text(text: string): void {
    const length = text.length;
    this.ensure(length * 3);
    // Short ASCII text (meta values, numbers) by hand: a call into Buffer#write costs more.
    if (length <= 64) {
      const buf = this.buf;
      const at = this.len;
      let i = 0;
      for (; i < length; i++) {
        const code = text.charCodeAt(i);
        if (code >= 128) break;
        buf[at + i] = code;
      }
      if (i === length) {
        this.len = at + length;
        return;
      }
    }
    this.len += this.buf.write(text, this.len);
  }

  /**
   * Writes `text` when it is a CSV cell as it stands (ASCII, no first character that formula
   * protection marks, nothing to quote or escape) and says so; else writes nothing.
   */
  plainText(text: string): boolean {
    const length = text.length;
    if (length === 0) return true;
    if (riskyFirst(text.charCodeAt(0))) return false;
    this.ensure(length);
    const buf = this.buf;
    const at = this.len;
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 128 || code === COMMA || code === QUOTE || code === PIPE || code === NEWLINE || code === CR) return false;
      buf[at + i] = code;
    }
    this.len = at + length;
    return true;
  }

  /**
   * Cuts a chunk once enough has gathered, or when `last` whatever has: a short last chunk is
   * copied out, so that the buffer it would hold stays here for the next lines.
   */
  cut(last: boolean): void {
    if (this.len === 0 || (!last && this.len < CHUNK_BYTES)) return;
    if (this.len < CHUNK_BYTES) {
      this.chunks.push(new Uint8Array(this.buf.subarray(0, this.len)));
    } else {
      this.chunks.push(this.buf.subarray(0, this.len));
      this.buf = Buffer.allocUnsafeSlow(BUFFER_BYTES);
    }
    this.len = 0;
  }
}

/** Writes records' CSV lines from their JSON bytes; made by rawCsvWriter. */
export class RawCsvWriter {
  private readonly reader = new RawRecordReader();
  private readonly ops: Op[];
  /** Per key the caller gives: its top-level slot, or -1 when no column reads it. */
  private readonly givenSlots: Int32Array;
  private out = new ByteOut();
  /** The slots of the record's own keys that the columns read. */
  private readonly topSlots = new Map<string, number>();

  constructor(columns: readonly FlatColumn[], givenKeys: readonly string[]) {
    this.ops = columns.map((column) => this.op(column.rule as ColumnRule));
    this.givenSlots = Int32Array.from(givenKeys, (key) => this.topSlots.get(key) ?? -1);
  }

  private slot(steps: ColumnRule['steps'], key: string): number {
    const slot = this.reader.slot(steps, key);
    if (steps.length === 0) this.topSlots.set(key, slot);
    return slot;
  }

  private op(rule: ColumnRule): Op {
    const slot = this.slot(rule.steps, rule.key);
    switch (rule.kind) {
      case 'value':
        return new Op(VALUE, rule, slot, -1, rule.decimal);
      case 'choice':
        return new Op(CHOICE, rule, slot, -1, false, 0, utf8(rule.choice), utf8(csvField(rule.chosen)), utf8(csvField(rule.unchosen)));
      case 'part':
        return new Op(PART, rule, slot, -1, false, rule.part);
      case 'media':
        return new Op(MEDIA, rule, slot, this.slot([], '_attachments'));
      case 'tags':
        return new Op(TAGS, rule, slot);
      case 'empty':
        return new Op(EMPTY, rule, slot);
    }
  }

  /**
   * Writes the line of the record in src[start..end). `given` holds a value per given key (in
   * their order), and it wins over the stored one.
   */
  line(src: Buffer, start: number, end: number, given: readonly unknown[]): void {
    const reader = this.reader;
    reader.read(src, start, end);
    const givenSlots = this.givenSlots;
    for (let i = 0; i < givenSlots.length; i++) {
      const slot = givenSlots[i] as number;
      if (slot >= 0) reader.setGiven(slot, given[i]);
    }
    const out = this.out;
    const ops = this.ops;
    for (let i = 0; i < ops.length; i++) {
      if (i > 0) {
        out.ensure(1);
        out.buf[out.len++] = COMMA;
      }
      const op = ops[i] as Op;
      switch (op.op) {
        case VALUE:
          this.value(src, op);
          break;
        case CHOICE:
          this.choice(src, op);
          break;
        case PART:
          this.part(src, op);
          break;
        case TAGS:
          this.tags(src, op);
          break;
        case MEDIA:
          this.media(op);
          break;
      }
    }
    out.ensure(1);
    out.buf[out.len++] = NEWLINE;
    out.cut(false);
  }

  /** The lines written since the last call, as UTF-8 chunks. */
  take(): Uint8Array[] {
    this.out.cut(true);
    const chunks = this.out.chunks.splice(0);
    return chunks;
  }

  private value(src: Buffer, op: Op): void {
    const reader = this.reader;
    const out = this.out;
    const kind = reader.kindOf[op.slot];
    if (kind === MISSING) return out.bytes(NA_BYTES);
    const start = reader.startOf[op.slot] as number;
    const end = reader.endOf[op.slot] as number;
    if (kind === TEXT) {
      if (start === end) return;
      if (!riskyFirst(src[start] as number)) {
        out.ensure(end - start);
        const buf = out.buf;
        let at = out.len;
        let i = start;
        for (; i < end; i++) {
          const b = src[i] as number;
          if (b === COMMA || b === PIPE) break;
          buf[at++] = b;
        }
        if (i === end) {
          out.len = at;
          return;
        }
      } else if (numberTokens(src, start, end)) {
        // A risky first byte, but only numbers (a GPS answer, a phone number +254…): left as they are.
        out.copy(src, start, end);
        return;
      }
    } else if (kind === NUMBER && this.plainInteger(src, start, end)) {
      out.copy(src, start, end);
      if (op.decimal) out.bytes(POINT_ZERO);
      return;
    } else if (kind === GIVEN && this.givenCell(reader.value(op.slot))) return;
    out.text(RULE_CELLS.value(reader.value(op.slot), op.decimal));
  }

  /** A meta value of the caller's written directly where its cell is plain (most are); false when it needs RULE_CELLS. */
  private givenCell(value: unknown): boolean {
    if (typeof value === 'string') return this.out.plainText(value);
    if (value === null) return true;
    if (typeof value === 'boolean') {
      this.out.text(text(value));
      return true;
    }
    return false;
  }

  /** An integer whose text JavaScript writes back the same: no `-0`, no leading zero, at most 15 digits. */
  private plainInteger(src: Buffer, start: number, end: number): boolean {
    const digits = src[start] === MINUS ? start + 1 : start;
    const count = end - digits;
    if (count < 1 || count > PLAIN_DIGITS) return false;
    if (src[digits] === ZERO && (count > 1 || digits > start)) return false;
    for (let i = digits; i < end; i++) {
      const b = src[i] as number;
      if (b < ZERO || b > ZERO + 9) return false;
    }
    return true;
  }

  private choice(src: Buffer, op: Op): void {
    const reader = this.reader;
    const kind = reader.kindOf[op.slot];
    if (kind === MISSING) return this.out.bytes(NA_BYTES);
    if (kind !== TEXT) {
      this.out.text(RULE_CELLS.choice(choiceNames(reader.value(op.slot)), op.rule as { choice: string; chosen: string; unchosen: string }));
      return;
    }
    const start = reader.startOf[op.slot] as number;
    const end = reader.endOf[op.slot] as number;
    const choice = op.choice;
    let token = start;
    for (let i = start; i <= end; i++) {
      if (i < end && src[i] !== SPACE) continue;
      if (i - token === choice.length) {
        let k = 0;
        while (k < choice.length && src[token + k] === choice[k]) k++;
        if (k === choice.length) return this.out.bytes(op.chosen);
      }
      token = i + 1;
    }
    this.out.bytes(op.unchosen);
  }

  private part(src: Buffer, op: Op): void {
    const reader = this.reader;
    const out = this.out;
    const kind = reader.kindOf[op.slot];
    if (kind === MISSING) return out.bytes(NA_BYTES);
    if (kind === TEXT) {
      const start = reader.startOf[op.slot] as number;
      const end = reader.endOf[op.slot] as number;
      // The part's bounds, when the answer has exactly four space-separated parts.
      let spaces = 0;
      let from = start;
      let to = end;
      for (let i = start; i < end; i++) {
        if (src[i] !== SPACE) continue;
        spaces++;
        if (spaces === op.part) from = i + 1;
        if (spaces === op.part + 1) to = i;
      }
      if (spaces !== 3) return;
      let comma = false;
      for (let i = from; i < to; i++) if (src[i] === COMMA) comma = true;
      if (!comma) {
        out.copy(src, from, to);
        return;
      }
    }
    out.text(RULE_CELLS.part(pointParts(reader.value(op.slot)), op.part));
  }

  /** A media answer: a link when its file arrived (rare enough in an export to be written as text). */
  private media(op: Op): void {
    const reader = this.reader;
    if (reader.kindOf[op.slot] === MISSING) return this.out.bytes(NA_BYTES);
    this.out.text(RULE_CELLS.media(reader.value(op.slot), reader.value(op.attachments), (op.rule as { baseUrl: string }).baseUrl));
  }

  private tags(src: Buffer, op: Op): void {
    const reader = this.reader;
    const kind = reader.kindOf[op.slot];
    // An empty list, as stored records mostly hold, writes nothing.
    if (kind === OTHER && (reader.endOf[op.slot] as number) - (reader.startOf[op.slot] as number) === 2 && src[reader.startOf[op.slot] as number] === 91) return;
    this.out.text(RULE_CELLS.tags(reader.value(op.slot)));
  }
}

/**
 * A writer of these columns' lines from JSON bytes, or undefined when a column has no rule (its
 * text needs the whole record) or the layout is a single column (csvLine's `""` line).
 * `givenKeys`: the keys whose values the caller gives per record.
 */
export function rawCsvWriter(columns: readonly FlatColumn[], givenKeys: readonly string[]): RawCsvWriter | undefined {
  if (columns.length < 2 || columns.some((column) => column.rule === undefined)) return undefined;
  return new RawCsvWriter(columns, givenKeys);
}
