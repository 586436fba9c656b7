// A worksheet's rows written straight into UTF-8 bytes: the same XML as rowXml (sheet-xml.ts),
// without building it as a string first. XML gathered by `+=` grew into ropes of thousands of
// pieces that Buffer.from had to flatten and measure before encoding, and that young-generation
// collections kept copying (by `perf`, the largest parts of an XLSX export's main thread besides
// JSON.parse). Plain ASCII text is copied a character at a time; anything else (escapes, other
// characters, long cells) goes through rowXml's own string functions, so the bytes are rowXml's.
import type { Cell } from './cell.ts';
import { excelSerial } from './excel-dates.ts';
import { columnName, numberText, STYLE_DATE, STYLE_DATETIME } from './sheet-xml.ts';
import { escapeText, MAX_CELL_CHARS, needsPreserve, truncateCell } from './xml-text.ts';
import { Utf8Builder } from '../../utf8-builder.ts';

const ascii = (text: string): Uint8Array => Buffer.from(text, 'latin1');

const ROW_OPEN = ascii('<row r="');
const TAG_CLOSE = ascii('">');
const ROW_CLOSE = ascii('</row>');
const CELL_OPEN = ascii('<c');
const CELL_REF = ascii(' r="');
const QUOTE_END = ascii('"');
const STRING_OPEN = ascii(' t="inlineStr"><is><t>');
const STRING_OPEN_PRESERVE = ascii(' t="inlineStr"><is><t xml:space="preserve">');
const STRING_CLOSE = ascii('</t></is></c>');
const NUMBER_OPEN = ascii('><v>');
const VALUE_CLOSE = ascii('</v></c>');
const TRUE_CELL = ascii(' t="b"><v>1</v></c>');
const FALSE_CELL = ascii(' t="b"><v>0</v></c>');
/** A string cell's opening when no gap came before it (most do). */
const CELL_STRING_OPEN = ascii('<c t="inlineStr"><is><t>');
/**
 * Per byte of text: 1 where it is copied as it is (ASCII that needs no escape), 2 for `_` (which
 * needs the next byte looked at), 0 where the text needs escapeText.
 */
const PLAIN_BYTE = new Uint8Array(256);
for (let b = 32; b < 128; b++) PLAIN_BYTE[b] = 1;
PLAIN_BYTE[9] = 1;
PLAIN_BYTE[10] = 1;
PLAIN_BYTE[38] = 0;
PLAIN_BYTE[60] = 0;
PLAIN_BYTE[62] = 0;
PLAIN_BYTE[95] = 2;
const STYLED_DATE = ascii(` s="${STYLE_DATE}"><v>`);
const STYLED_DATETIME = ascii(` s="${STYLE_DATETIME}"><v>`);

const AMPERSAND = 38;
const LESS = 60;
const GREATER = 62;
const UNDERSCORE = 95;
const LOWER_X = 120;
const TAB = 9;
const LINE_FEED = 10;

/** Bytes gathered before a chunk is cut: chunks go to the compressor and must not be reused. */
export const SHEET_CHUNK_BYTES = 64 * 1024;

/** UTF-8 output of a worksheet part, cut into chunks that are handed on and never written again. */
export class SheetBytes extends Utf8Builder {
  constructor(private readonly chunkBytes = SHEET_CHUNK_BYTES) {
    super(chunkBytes + 16 * 1024);
  }

  /** Whether a chunk's worth has gathered. */
  get full(): boolean {
    return this.len >= this.chunkBytes;
  }

  /** The bytes gathered so far (possibly none), which belong to the caller from now on. */
  take(): Uint8Array {
    const out = this.buf.subarray(0, this.len);
    this.buf = Buffer.allocUnsafeSlow(this.chunkBytes + 16 * 1024);
    this.len = 0;
    return out;
  }

  /** A number as numberText writes it. */
  number(n: number): void {
    if (Number.isInteger(n) && n >= 0 && n < 2_147_483_648) this.digits(n);
    else this.asciiText(numberText(n));
  }

  /**
   * Escaped element text when every character is ASCII and needs no escape (written, true); else
   * nothing is written (false). Control characters other than TAB and LF, `&`, `<`, `>` and `_x`
   * (which may start an `_xHHHH_` escape) send the text to escapeText.
   */
  private plainText(text: string): boolean {
    const length = text.length;
    this.ensure(length);
    const buf = this.buf;
    const at = this.len;
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 128 || code === AMPERSAND || code === LESS || code === GREATER) return false;
      if (code < 32 && code !== TAB && code !== LINE_FEED) return false;
      if (code === UNDERSCORE && text.charCodeAt(i + 1) === LOWER_X) return false;
      buf[at + i] = code;
    }
    this.len = at + length;
    return true;
  }

  /** A string cell's text, escaped and cut as rowXml writes it. */
  cellText(text: string): void {
    if (text.length <= MAX_CELL_CHARS && this.plainText(text)) return;
    this.text(escapeText(truncateCell(text)));
  }

  /** Where the row being written began, and where its cells begin. */
  private rowStart = 0;
  private rowOpened = 0;
  private rowNumber = 0;
  /** Whether a blank cell came since the last written one (the next one then names its place). */
  private gap = false;

  /**
   * Appends one row (1-based `rowNumber`) as rowXml would write it: nothing at all for a row with
   * no values.
   */
  row(rowNumber: number, cells: readonly Cell[]): void {
    this.beginRow(rowNumber);
    for (let i = 0; i < cells.length; i += 1) this.cell(i, cells[i] as Cell);
    this.endRow();
  }

  /** Begins a row that cell() and textBytes() fill, column by column, and endRow() ends. */
  beginRow(rowNumber: number): void {
    this.rowStart = this.len;
    this.bytes(ROW_OPEN);
    this.digits(rowNumber);
    this.bytes(TAG_CLOSE);
    this.rowOpened = this.len;
    this.rowNumber = rowNumber;
    this.gap = false;
  }

  /** Ends the row: a row with no values leaves nothing. */
  endRow(): void {
    if (this.len === this.rowOpened) this.len = this.rowStart;
    else this.bytes(ROW_CLOSE);
  }

  /** A cell's opening, with its reference after a gap. */
  private open(column: number): void {
    this.bytes(CELL_OPEN);
    if (this.gap) {
      this.bytes(CELL_REF);
      this.asciiText(columnName(column));
      this.digits(this.rowNumber);
      this.bytes(QUOTE_END);
      this.gap = false;
    }
  }

  /** The row's cell in `column` (0-based; columns come in order, blanks too). */
  cell(column: number, cell: Cell): void {
    if (cell === null || cell === undefined || cell === '' || (typeof cell === 'number' && !Number.isFinite(cell))) {
      this.gap = true;
      return;
    }
    this.open(column);
    if (typeof cell === 'string') {
      const cut = cell.length > MAX_CELL_CHARS ? truncateCell(cell) : cell;
      this.bytes(needsPreserve(cut) ? STRING_OPEN_PRESERVE : STRING_OPEN);
      this.cellText(cut);
      this.bytes(STRING_CLOSE);
    } else if (typeof cell === 'number') {
      this.bytes(NUMBER_OPEN);
      this.number(cell);
      this.bytes(VALUE_CLOSE);
    } else if (typeof cell === 'boolean') {
      this.bytes(cell ? TRUE_CELL : FALSE_CELL);
    } else {
      const serial = excelSerial(cell);
      if (serial === undefined) {
        this.bytes(STRING_OPEN);
        this.text(escapeText(truncateCell(cell.iso)));
        this.bytes(STRING_CLOSE);
      } else {
        this.bytes(cell.kind === 'date' ? STYLED_DATE : STYLED_DATETIME);
        this.asciiText(String(serial));
        this.bytes(VALUE_CLOSE);
      }
    }
  }

  /**
   * The row's text cell in `column` from the UTF-8 bytes src[start..end): copied as they are when
   * they are ASCII that needs no escape (as plainText checks), else decoded and written by cell().
   */
  textBytes(column: number, src: Uint8Array, start: number, end: number): void {
    const length = end - start;
    if (length === 0) {
      this.gap = true;
      return;
    }
    if (length <= MAX_CELL_CHARS) {
      const mark = this.len;
      const gap = this.gap;
      const preserve = (src[start] as number) <= 32 || (src[end - 1] as number) <= 32;
      if (gap || preserve) {
        this.open(column);
        this.bytes(preserve ? STRING_OPEN_PRESERVE : STRING_OPEN);
      } else this.bytes(CELL_STRING_OPEN);
      const buf = this.ensure(length + STRING_CLOSE.length);
      let at = this.len;
      let i = start;
      for (; i < end; i++) {
        const code = src[i] as number;
        const plain = PLAIN_BYTE[code] as number;
        if (plain !== 1 && (plain === 0 || (i + 1 < end && src[i + 1] === LOWER_X))) break;
        buf[at++] = code;
      }
      if (i === end) {
        for (let k = 0; k < STRING_CLOSE.length; k++) buf[at + k] = STRING_CLOSE[k] as number;
        this.len = at + STRING_CLOSE.length;
        return;
      }
      this.len = mark;
      this.gap = gap;
    }
    this.cell(column, Buffer.from(src.buffer, src.byteOffset, src.byteLength).toString('utf8', start, end));
  }
}
