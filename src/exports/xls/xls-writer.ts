// A legacy Excel 97-2003 (.xls, BIFF8 in a compound file) writer with bounded memory. Cell records
// are encoded into a caller-provided spool as rows arrive; once the last row is in, the sizes are
// known, and the file is emitted: compound-file tables, workbook globals (with the sheets'
// offsets and the shared strings), then each sheet's records read back from the spool. So every
// failure — a row wider than 256 columns, a workbook past 2 GiB — happens before the first byte.
// Sheets past 65,536 rows continue on further sheets (`name (2)`, …), as in the XLSX writer.
import type { Cell, SheetSource } from '../xlsx/cell.ts';
import { excelSerial } from '../xlsx/excel-dates.ts';
import { sheetParts, SpreadsheetLimitError, type SheetLimits } from '../xlsx/sheet-parts.ts';
import { MAX_CELL_CHARS, truncateCell } from '../xlsx/xml-text.ts';
import {
  bof,
  boundSheet,
  dimensions,
  eof,
  font,
  format,
  isCompressible,
  MAX_LABEL_CHARS,
  normalStyle,
  RECORD,
  uint16Record,
  window1,
  window2,
  xf,
  XF_DATE,
  XF_DATETIME,
  XF_GENERAL,
} from './biff.ts';
import { cfbEpilogue, cfbLayout, cfbPrologue, MAX_STREAM_SIZE, MIN_STREAM_SIZE } from './cfb.ts';
import type { SpoolFactory } from './spool.ts';
import { SpoolWriter, type Spool } from './spool.ts';
import { SstWriter } from './sst.ts';

export const XLS_LIMITS: SheetLimits = { maxRows: 65_536, maxColumns: 256 };

export interface XlsOptions {
  /** Storage for the cell records and long strings until the file can be emitted. */
  readonly createSpool: SpoolFactory;
  /** Row limit per sheet; only tests lower it. */
  readonly maxRows?: number;
}

const DATE_FORMAT = 164;
/** Thrown inside a row's encoding when the spool buffer is full. */
const FULL = Symbol('spool buffer full');
const DATETIME_FORMAT = 165;

function globalsPrologue(): Buffer {
  const styleXfs = Array.from({ length: 15 }, () => xf({ style: true, formatIndex: 0 }));
  return Buffer.concat([
    bof('globals'),
    uint16Record(RECORD.CODEPAGE, 1200), // UTF-16
    window1(),
    uint16Record(RECORD.DATEMODE, 0), // 1900 date system
    font(),
    font(),
    font(),
    font(),
    format(DATE_FORMAT, 'yyyy-mm-dd'),
    format(DATETIME_FORMAT, 'yyyy-mm-dd hh:mm:ss'),
    ...styleXfs,
    xf({ style: false, formatIndex: 0 }), // XF_GENERAL
    xf({ style: false, formatIndex: DATE_FORMAT }), // XF_DATE
    xf({ style: false, formatIndex: DATETIME_FORMAT }), // XF_DATETIME
    normalStyle(),
  ]);
}

/** Encodes one sheet's cells into the spool; returns the rows and columns used. */
class CellEncoder {
  constructor(
    private readonly out: SpoolWriter,
    private readonly sst: SstWriter,
  ) {}

  /** Room for a record: the row is encoded again after a flush, so this never waits. */
  private slot(bytes: number): number {
    const offset = this.out.reserve(bytes);
    if (offset < 0) throw FULL;
    return offset;
  }

  private number(row: number, column: number, xfIndex: number, value: number): void {
    const offset = this.slot(18);
    const buffer = this.out.buffer;
    buffer.writeUInt16LE(RECORD.NUMBER, offset);
    buffer.writeUInt16LE(14, offset + 2);
    buffer.writeUInt16LE(row, offset + 4);
    buffer.writeUInt16LE(column, offset + 6);
    buffer.writeUInt16LE(xfIndex, offset + 8);
    buffer.writeDoubleLE(value, offset + 10);
  }

  private text(row: number, column: number, value: string, longStrings: string[]): void {
    const text = truncateCell(value, MAX_CELL_CHARS).replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
    if (text.length > MAX_LABEL_CHARS) {
      // The string's SST index is the count so far plus its place among this row's long strings.
      const index = this.sst.count + longStrings.length;
      const offset = this.slot(14);
      const buffer = this.out.buffer;
      longStrings.push(text);
      buffer.writeUInt16LE(RECORD.LABELSST, offset);
      buffer.writeUInt16LE(10, offset + 2);
      buffer.writeUInt16LE(row, offset + 4);
      buffer.writeUInt16LE(column, offset + 6);
      buffer.writeUInt16LE(XF_GENERAL, offset + 8);
      buffer.writeUInt32LE(index, offset + 10);
      return;
    }
    const wide = !isCompressible(text);
    const payload = 9 + text.length * (wide ? 2 : 1);
    const offset = this.slot(4 + payload);
    const buffer = this.out.buffer;
    buffer.writeUInt16LE(RECORD.LABEL, offset);
    buffer.writeUInt16LE(payload, offset + 2);
    buffer.writeUInt16LE(row, offset + 4);
    buffer.writeUInt16LE(column, offset + 6);
    buffer.writeUInt16LE(XF_GENERAL, offset + 8);
    buffer.writeUInt16LE(text.length, offset + 10);
    buffer[offset + 12] = wide ? 1 : 0;
    buffer.write(text, offset + 13, wide ? 'utf16le' : 'latin1');
  }

  private boolean(row: number, column: number, value: boolean): void {
    const offset = this.slot(12);
    const buffer = this.out.buffer;
    buffer.writeUInt16LE(RECORD.BOOLERR, offset);
    buffer.writeUInt16LE(8, offset + 2);
    buffer.writeUInt16LE(row, offset + 4);
    buffer.writeUInt16LE(column, offset + 6);
    buffer.writeUInt16LE(XF_GENERAL, offset + 8);
    buffer[offset + 10] = value ? 1 : 0;
    buffer[offset + 11] = 0; // a boolean, not an error
  }

  /** Writes the row's cells; returns the number of columns up to the last value. */
  async row(row: number, cells: readonly Cell[]): Promise<number> {
    const mark = this.out.mark();
    const longStrings: string[] = [];
    let width: number;
    try {
      width = this.encode(row, cells, longStrings);
    } catch (error) {
      if (error !== FULL) throw error;
      // The buffer filled up mid-row: drop the partial row, flush, and encode it again.
      this.out.rewind(mark);
      longStrings.length = 0;
      await this.out.flush();
      width = this.encode(row, cells, longStrings);
    }
    for (const text of longStrings) await this.sst.add(text);
    return width;
  }

  private encode(row: number, cells: readonly Cell[], longStrings: string[]): number {
    let width = 0;
    for (let column = 0; column < cells.length; column += 1) {
      const cell = cells[column];
      if (cell === null || cell === undefined || cell === '') continue;
      if (typeof cell === 'string') this.text(row, column, cell, longStrings);
      else if (typeof cell === 'number') {
        if (!Number.isFinite(cell)) continue;
        this.number(row, column, XF_GENERAL, cell);
      } else if (typeof cell === 'boolean') this.boolean(row, column, cell);
      else {
        const serial = excelSerial(cell);
        if (serial === undefined) this.text(row, column, cell.iso, longStrings);
        else this.number(row, column, cell.kind === 'date' ? XF_DATE : XF_DATETIME, serial);
      }
      width = column + 1;
    }
    return width;
  }
}

interface EncodedSheet {
  readonly name: string;
  readonly header: Buffer;
  readonly cellBytes: number;
}

/** Yields `chunks` cut into consecutive pieces of the given sizes, calling `between` at each boundary. */
async function* slices(
  chunks: AsyncIterable<Uint8Array>,
  sizes: readonly number[],
  before: (index: number) => Buffer,
  after: (index: number) => Buffer,
): AsyncGenerator<Uint8Array, void, undefined> {
  let index = 0;
  let left = sizes[0] ?? 0;
  if (sizes.length > 0) yield before(0);
  const advance = function* (): Generator<Uint8Array> {
    while (left === 0 && index < sizes.length) {
      yield after(index);
      index += 1;
      if (index < sizes.length) {
        yield before(index);
        left = sizes[index] ?? 0;
      }
    }
  };
  yield* advance();
  for await (const chunk of chunks) {
    let at = 0;
    while (at < chunk.length) {
      if (index >= sizes.length) throw new Error('xls writer: spool holds more than was written');
      const take = Math.min(left, chunk.length - at);
      yield chunk.subarray(at, at + take);
      at += take;
      left -= take;
      yield* advance();
    }
  }
  if (index < sizes.length) throw new Error('xls writer: spool holds less than was written');
}

/** The .xls file's bytes. Everything is encoded into the spools before the first chunk. */
export async function* xlsChunks(sheets: SheetSource, options: XlsOptions): AsyncGenerator<Uint8Array, void, undefined> {
  const limits: SheetLimits = { ...XLS_LIMITS, maxRows: Math.min(options.maxRows ?? XLS_LIMITS.maxRows, XLS_LIMITS.maxRows) };
  const spools: Spool[] = [];
  try {
    const cellSpool = await options.createSpool();
    spools.push(cellSpool);
    const sstSpool = await options.createSpool();
    spools.push(sstSpool);
    const cells = new SpoolWriter(cellSpool);
    const sst = new SstWriter(sstSpool);
    const encoder = new CellEncoder(cells, sst);

    const encoded: EncodedSheet[] = [];
    for await (const part of sheetParts(sheets, limits)) {
      const start = cells.total;
      let rows = 0;
      let columns = 0;
      for await (const row of part.rows) {
        columns = Math.max(columns, await encoder.row(rows, row));
        rows += 1;
      }
      const header = Buffer.concat([bof('worksheet'), dimensions(rows, columns), window2(encoded.length === 0)]);
      encoded.push({ name: part.name, header, cellBytes: cells.total - start });
    }
    if (encoded.length === 0) {
      encoded.push({ name: 'Sheet1', header: Buffer.concat([bof('worksheet'), dimensions(0, 0), window2(true)]), cellBytes: 0 });
    }
    await cells.flush();
    const strings = await sst.finish();

    // Sizes first: the globals hold each sheet's offset in the stream.
    const prologue = globalsPrologue();
    const boundSheetBytes = encoded.reduce((sum, sheet) => sum + boundSheet(0, sheet.name).length, 0);
    const stringBytes = strings ? strings.head.length + strings.spooledBytes : 0;
    const globalsSize = prologue.length + boundSheetBytes + stringBytes + eof().length;
    const offsets: number[] = [];
    let streamSize = globalsSize;
    for (const sheet of encoded) {
      offsets.push(streamSize);
      streamSize += sheet.header.length + sheet.cellBytes + eof().length;
    }
    if (streamSize > MAX_STREAM_SIZE) {
      throw new SpreadsheetLimitError(`the workbook needs ${streamSize} bytes; an XLS file holds at most ${MAX_STREAM_SIZE}`, encoded[0]?.name ?? '');
    }
    const padding = Math.max(0, MIN_STREAM_SIZE - streamSize);
    const layout = cfbLayout(streamSize + padding);

    yield* cfbPrologue(layout);
    yield prologue;
    yield Buffer.concat(encoded.map((sheet, i) => boundSheet(offsets[i] ?? 0, sheet.name)));
    if (strings) {
      yield strings.head;
      yield* sstSpool.read();
    }
    yield eof();
    yield* slices(
      cellSpool.read(),
      encoded.map((sheet) => sheet.cellBytes),
      (i) => encoded[i]?.header ?? Buffer.alloc(0),
      () => eof(),
    );
    if (padding > 0) yield Buffer.alloc(padding, 0);
    yield cfbEpilogue(layout);
  } finally {
    for (const spool of spools) await spool.dispose();
  }
}
