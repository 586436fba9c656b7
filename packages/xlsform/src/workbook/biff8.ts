// Legacy .xls (BIFF8, Excel 97-2003) cells: the workbook globals (sheet list,
// shared strings, number formats, cell styles, date system) and each sheet's
// cell records. Anything unusual (BIFF5, encryption) is reported as an error so
// the caller can fall back to SheetJS.
import { readCfbStream } from './cfb.ts';
import type { RawCell, RawGrid } from './grid.ts';
import { BUILTIN_DATE_FORMATS, isDateFormat } from './number-formats.ts';

export class BiffError extends Error {
  /** True for files in a format this reader does not handle (older BIFF, encryption). */
  constructor(
    message: string,
    readonly unsupported = false,
  ) {
    super(message);
  }
}

const BOF = 0x0809;
const EOF = 0x000a;
const BOUNDSHEET = 0x0085;
const SST = 0x00fc;
const CONTINUE = 0x003c;
const DATEMODE = 0x0022;
const FORMAT = 0x041e;
const XF = 0x00e0;
const FILEPASS = 0x002f;
const LABELSST = 0x00fd;
const LABEL = 0x0204;
const NUMBER = 0x0203;
const RK = 0x027e;
const MULRK = 0x00bd;
const BOOLERR = 0x0205;
const FORMULA = 0x0006;
const STRING = 0x0207;

interface BiffRecord {
  type: number;
  /** Offset of the record's data in the stream. */
  start: number;
  length: number;
}

/** Reads text that may run on into CONTINUE records (each resumes with a fresh flags byte). */
class SegmentReader {
  private segment = 0;
  private pos: number;
  constructor(
    private readonly stream: Uint8Array,
    private readonly segments: BiffRecord[],
  ) {
    this.pos = segments[0]?.start ?? 0;
  }
  private end(): number {
    const s = this.segments[this.segment];
    return s ? s.start + s.length : 0;
  }
  private advanceIfAtEnd(): boolean {
    if (this.pos < this.end()) return false;
    this.segment++;
    const s = this.segments[this.segment];
    if (!s) throw new BiffError('string runs past its record');
    this.pos = s.start;
    return true;
  }
  u8(): number {
    this.advanceIfAtEnd();
    return this.stream[this.pos++] ?? 0;
  }
  u16(): number {
    return this.u8() | (this.u8() << 8);
  }
  u32(): number {
    return (this.u16() | (this.u16() << 16)) >>> 0;
  }
  skip(n: number): void {
    let left = n;
    while (left > 0) {
      this.advanceIfAtEnd();
      const step = Math.min(left, this.end() - this.pos);
      this.pos += step;
      left -= step;
    }
  }
  chars(count: number, highByteAtStart: boolean): string {
    let high = highByteAtStart;
    let out = '';
    for (let i = 0; i < count; i++) {
      if (this.advanceIfAtEnd()) high = ((this.stream[this.pos++] ?? 0) & 1) === 1;
      if (high) {
        const code = (this.stream[this.pos] ?? 0) | ((this.stream[this.pos + 1] ?? 0) << 8);
        this.pos += 2;
        out += String.fromCharCode(code);
      } else out += String.fromCharCode(this.stream[this.pos++] ?? 0);
    }
    return out;
  }
  /** XLUnicodeRichExtendedString (or XLUnicodeString when the flags carry no extras). */
  richString(): string {
    const count = this.u16();
    const flags = this.u8();
    const runs = flags & 0x08 ? this.u16() : 0;
    const extension = flags & 0x04 ? this.u32() : 0;
    const text = this.chars(count, (flags & 1) === 1);
    this.skip(runs * 4 + extension);
    return text;
  }
}

function records(stream: Uint8Array, from: number, to: number): BiffRecord[] {
  const out: BiffRecord[] = [];
  let pos = from;
  while (pos + 4 <= to) {
    const type = (stream[pos] ?? 0) | ((stream[pos + 1] ?? 0) << 8);
    const length = (stream[pos + 2] ?? 0) | ((stream[pos + 3] ?? 0) << 8);
    if (pos + 4 + length > to) throw new BiffError('truncated record');
    out.push({ type, start: pos + 4, length });
    pos += 4 + length;
    if (type === EOF && out.length > 1) break;
  }
  return out;
}


function rkValue(view: DataView, at: number): number {
  const rk = view.getInt32(at, true);
  let value: number;
  if (rk & 2) value = rk >> 2;
  else {
    const buffer = new DataView(new ArrayBuffer(8));
    buffer.setInt32(4, rk & ~3, true);
    value = buffer.getFloat64(0, true);
  }
  return rk & 1 ? value / 100 : value;
}

export interface BiffSheet {
  name: string;
  grid: () => RawGrid;
}

export interface BiffBook {
  sheets: BiffSheet[];
  date1904: boolean;
}

export function readBiff8(bytes: Uint8Array): BiffBook {
  const stream = readCfbStream(bytes, ['Workbook']);
  if (!stream) throw new BiffError('no BIFF8 Workbook stream', true);
  const view = new DataView(stream.buffer, stream.byteOffset, stream.byteLength);
  const globals = records(stream, 0, stream.length);
  const first = globals[0];
  const version = first && first.type === BOF ? view.getUint16(first.start, true) : undefined;
  if (version !== 0x0600) throw new BiffError(`not BIFF8 (version ${version ?? 'unknown'})`, version === 0x0500);
  const sheetsInfo: Array<{ name: string; offset: number }> = [];
  const strings: string[] = [];
  const formats = new Map<number, string>();
  const xfFormats: number[] = [];
  let date1904 = false;
  for (let i = 0; i < globals.length; i++) {
    const r = globals[i];
    if (!r) continue;
    switch (r.type) {
      case FILEPASS:
        throw new BiffError('encrypted workbook', true);
      case DATEMODE:
        date1904 = view.getUint16(r.start, true) === 1;
        break;
      case BOUNDSHEET: {
        const offset = view.getUint32(r.start, true);
        const sheetType = stream[r.start + 5] ?? 0;
        const count = stream[r.start + 6] ?? 0;
        const high = ((stream[r.start + 7] ?? 0) & 1) === 1;
        const reader = new SegmentReader(stream, [{ type: r.type, start: r.start + 8, length: r.length - 8 }]);
        if (sheetType === 0) sheetsInfo.push({ name: reader.chars(count, high), offset });
        break;
      }
      case FORMAT: {
        const id = view.getUint16(r.start, true);
        const reader = new SegmentReader(stream, [{ type: r.type, start: r.start + 2, length: r.length - 2 }]);
        formats.set(id, reader.richString());
        break;
      }
      case XF:
        xfFormats.push(view.getUint16(r.start + 2, true));
        break;
      case SST: {
        const segments: BiffRecord[] = [{ type: SST, start: r.start + 8, length: r.length - 8 }];
        for (let j = i + 1; globals[j]?.type === CONTINUE; j++) {
          const c = globals[j];
          if (c) segments.push(c);
        }
        const unique = view.getUint32(r.start + 4, true);
        const reader = new SegmentReader(stream, segments);
        for (let n = 0; n < unique; n++) strings.push(reader.richString());
        break;
      }
      default:
    }
    if (r.type === EOF) break;
  }
  const isDate = xfFormats.map((id) => {
    const code = formats.get(id);
    return code !== undefined ? isDateFormat(code) : BUILTIN_DATE_FORMATS.has(id);
  });
  return {
    date1904,
    sheets: sheetsInfo.map(({ name, offset }) => ({ name, grid: () => sheetGrid(stream, view, offset, strings, isDate) })),
  };
}

function sheetGrid(stream: Uint8Array, view: DataView, offset: number, strings: string[], isDate: boolean[]): RawGrid {
  const grid: RawGrid = [];
  const put = (row: number, col: number, cell: RawCell): void => {
    (grid[row] ??= [])[col] = cell;
  };
  const number = (row: number, col: number, xf: number, value: number): void => {
    put(row, col, isDate[xf] === true ? { date: value } : value);
  };
  const list = records(stream, offset, stream.length);
  let pendingFormula: { row: number; col: number } | undefined;
  for (let i = 0; i < list.length; i++) {
    const r = list[i];
    if (!r) continue;
    const at = r.start;
    switch (r.type) {
      case LABELSST:
        put(view.getUint16(at, true), view.getUint16(at + 2, true), strings[view.getUint32(at + 6, true)] ?? '');
        break;
      case LABEL: {
        const reader = new SegmentReader(stream, [{ type: r.type, start: at + 6, length: r.length - 6 }]);
        put(view.getUint16(at, true), view.getUint16(at + 2, true), reader.richString());
        break;
      }
      case NUMBER:
        number(view.getUint16(at, true), view.getUint16(at + 2, true), view.getUint16(at + 4, true), view.getFloat64(at + 6, true));
        break;
      case RK:
        number(view.getUint16(at, true), view.getUint16(at + 2, true), view.getUint16(at + 4, true), rkValue(view, at + 6));
        break;
      case MULRK: {
        const row = view.getUint16(at, true);
        const firstCol = view.getUint16(at + 2, true);
        const count = (r.length - 6) / 6;
        for (let k = 0; k < count; k++) number(row, firstCol + k, view.getUint16(at + 4 + k * 6, true), rkValue(view, at + 6 + k * 6));
        break;
      }
      case BOOLERR: {
        const row = view.getUint16(at, true);
        const col = view.getUint16(at + 2, true);
        const value = stream[at + 6] ?? 0;
        if (stream[at + 7] === 0) put(row, col, value === 1);
        else put(row, col, ERRORS[value] ?? '#N/A');
        break;
      }
      case FORMULA: {
        const row = view.getUint16(at, true);
        const col = view.getUint16(at + 2, true);
        const xf = view.getUint16(at + 4, true);
        if (view.getUint16(at + 12, true) !== 0xffff) number(row, col, xf, view.getFloat64(at + 6, true));
        else {
          const kind = stream[at + 6] ?? 3;
          if (kind === 0) pendingFormula = { row, col };
          else if (kind === 1) put(row, col, stream[at + 8] === 1);
          else if (kind === 2) put(row, col, ERRORS[stream[at + 8] ?? 0] ?? '#N/A');
        }
        break;
      }
      case STRING:
        if (pendingFormula) {
          const segments: BiffRecord[] = [r];
          for (let j = i + 1; list[j]?.type === CONTINUE; j++) {
            const c = list[j];
            if (c) segments.push(c);
          }
          put(pendingFormula.row, pendingFormula.col, new SegmentReader(stream, segments).richString());
          pendingFormula = undefined;
        }
        break;
      case EOF:
        return grid;
      default:
    }
  }
  return grid;
}

const ERRORS: Readonly<Record<number, string>> = { 0: '#NULL!', 7: '#DIV/0!', 15: '#VALUE!', 23: '#REF!', 29: '#NAME?', 36: '#NUM!', 42: '#N/A' };
