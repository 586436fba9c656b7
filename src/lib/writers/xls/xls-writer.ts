// A legacy Excel 97-2003 (.xls, BIFF8 in a compound file) writer with bounded memory. Cell records
// are encoded into a caller-provided spool per sheet as rows arrive, in any order of sheets (one
// pass over records feeds every sheet); once the last row is in, the sizes are known, and the file
// is emitted: compound-file tables, workbook globals (with the sheets' offsets and the shared
// strings), then each sheet's records read back from its spool. So every
// failure — a row wider than 256 columns, a workbook past 2 GiB — happens before the first byte.
// Sheets past 65,536 rows continue on further sheets (`name (2)`, …), as in the XLSX writer.
import type { Cell, SheetSource } from '../xlsx/cell.ts';
import { excelSerial } from '../xlsx/excel-dates.ts';
import { fitRow, SpreadsheetLimitError, type SheetLimits } from '../xlsx/sheet-parts.ts';
import { SheetNames } from '../xlsx/sheet-names.ts';
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

/** One sheet of the workbook (past the row limit: one part of it), its cells in a spool of its own. */
interface SheetPartCells {
  readonly spool: Spool;
  readonly cells: SpoolWriter;
  readonly encoder: CellEncoder;
  rows: number;
  columns: number;
}

/** A sheet's parts as its rows arrive: the first, and past the row limit further ones starting with its repeated header rows. */
class XlsSheet {
  readonly parts: SheetPartCells[] = [];
  private readonly header: Array<readonly Cell[]> = [];
  private readonly repeat: number;

  constructor(
    readonly name: string,
    repeatRows: number,
    private readonly limits: SheetLimits,
    private readonly openPart: () => Promise<SheetPartCells>,
  ) {
    this.repeat = Math.max(0, Math.min(repeatRows, limits.maxRows - 1));
  }

  private async write(part: SheetPartCells, row: readonly Cell[]): Promise<void> {
    part.columns = Math.max(part.columns, await part.encoder.row(part.rows, row));
    part.rows += 1;
  }

  async add(row: readonly Cell[]): Promise<void> {
    const fitted = fitRow(row, this.limits, this.name);
    let part = this.parts[this.parts.length - 1];
    if (!part || part.rows === this.limits.maxRows) {
      part = await this.openPart();
      this.parts.push(part);
      if (this.parts.length > 1) for (const headerRow of this.header) await this.write(part, headerRow);
    }
    if (this.parts.length === 1 && this.header.length < this.repeat) this.header.push([...fitted]);
    await this.write(part, fitted);
  }

  /** Ends the sheet: an empty sheet still gets its part. */
  async end(): Promise<void> {
    if (this.parts.length === 0) this.parts.push(await this.openPart());
    for (const part of this.parts) await part.cells.flush();
  }
}

/**
 * A workbook written a row at a time into any of its sheets (one pass over records feeds them
 * all), then emitted once every row is in: the compound file, the globals with each sheet's
 * offset and the shared strings, then each sheet part's records read back from its spool.
 */
export class XlsWorkbook {
  private readonly sheets: XlsSheet[] = [];
  private readonly spools: Spool[] = [];
  private readonly limits: SheetLimits;
  private sst: SstWriter | undefined;
  private sstSpool: Spool | undefined;

  constructor(
    sheets: readonly { readonly name: string; readonly repeatRows?: number }[],
    private readonly options: XlsOptions,
  ) {
    this.limits = { ...XLS_LIMITS, maxRows: Math.min(options.maxRows ?? XLS_LIMITS.maxRows, XLS_LIMITS.maxRows) };
    for (const sheet of sheets) this.addSheet(sheet.name, sheet.repeatRows ?? 0);
  }

  /** Adds a sheet after the others; returns its index. */
  addSheet(name: string, repeatRows: number): number {
    this.sheets.push(new XlsSheet(name, repeatRows, this.limits, () => this.openPart()));
    return this.sheets.length - 1;
  }

  private async strings(): Promise<SstWriter> {
    if (!this.sst) {
      this.sstSpool = await this.options.createSpool();
      this.spools.push(this.sstSpool);
      this.sst = new SstWriter(this.sstSpool);
    }
    return this.sst;
  }

  private async openPart(): Promise<SheetPartCells> {
    const sst = await this.strings();
    const spool = await this.options.createSpool();
    this.spools.push(spool);
    const cells = new SpoolWriter(spool);
    return { spool, cells, encoder: new CellEncoder(cells, sst), rows: 0, columns: 0 };
  }

  /** Adds a row to sheet `index`. */
  add(index: number, row: readonly Cell[]): Promise<void> {
    const sheet = this.sheets[index];
    if (!sheet) throw new Error(`xls writer: no sheet ${index}`);
    return sheet.add(row);
  }

  /** The file's bytes; every failure (a workbook past 2 GiB) comes before the first. */
  async *finish(): AsyncGenerator<Uint8Array, void, undefined> {
    for (const sheet of this.sheets) await sheet.end();
    const names = new SheetNames();
    const parts = this.sheets.flatMap((sheet) => {
      const base = names.claim(sheet.name);
      return sheet.parts.map((part, i) => ({ part, name: i === 0 ? base : names.continuation(base, i + 1) }));
    });
    const sheets = parts.map(({ part, name }, i) => ({
      name,
      spool: part.spool,
      header: Buffer.concat([bof('worksheet'), dimensions(part.rows, part.columns), window2(i === 0)]),
      cellBytes: part.cells.total,
    }));
    if (sheets.length === 0) {
      sheets.push({ name: 'Sheet1', spool: undefined as unknown as Spool, header: Buffer.concat([bof('worksheet'), dimensions(0, 0), window2(true)]), cellBytes: 0 });
    }
    const strings = this.sst ? await this.sst.finish() : undefined;

    // Sizes first: the globals hold each sheet's offset in the stream.
    const prologue = globalsPrologue();
    const boundSheetBytes = sheets.reduce((sum, sheet) => sum + boundSheet(0, sheet.name).length, 0);
    const stringBytes = strings ? strings.head.length + strings.spooledBytes : 0;
    const globalsSize = prologue.length + boundSheetBytes + stringBytes + eof().length;
    const offsets: number[] = [];
    let streamSize = globalsSize;
    for (const sheet of sheets) {
      offsets.push(streamSize);
      streamSize += sheet.header.length + sheet.cellBytes + eof().length;
    }
    if (streamSize > MAX_STREAM_SIZE) {
      throw new SpreadsheetLimitError(`the workbook needs ${streamSize} bytes; an XLS file holds at most ${MAX_STREAM_SIZE}`, sheets[0]?.name ?? '');
    }
    const padding = Math.max(0, MIN_STREAM_SIZE - streamSize);
    const layout = cfbLayout(streamSize + padding);

    yield* cfbPrologue(layout);
    yield prologue;
    yield Buffer.concat(sheets.map((sheet, i) => boundSheet(offsets[i] ?? 0, sheet.name)));
    if (strings && this.sstSpool) {
      yield strings.head;
      yield* this.sstSpool.read();
    }
    yield eof();
    for (const sheet of sheets) {
      yield sheet.header;
      if (sheet.cellBytes > 0) yield* sheet.spool.read();
      yield eof();
    }
    if (padding > 0) yield Buffer.alloc(padding, 0);
    yield cfbEpilogue(layout);
  }

  async dispose(): Promise<void> {
    for (const spool of this.spools) await spool.dispose();
  }
}

/** The .xls file's bytes from its sheets' rows, a sheet after another. Everything is encoded into the spools before the first chunk. */
export async function* xlsChunks(sheets: SheetSource, options: XlsOptions): AsyncGenerator<Uint8Array, void, undefined> {
  const workbook = new XlsWorkbook([], options);
  try {
    for await (const sheet of sheets) {
      const index = workbook.addSheet(sheet.name, sheet.repeatRows ?? 0);
      for await (const row of sheet.rows) await workbook.add(index, row);
    }
    yield* workbook.finish();
  } finally {
    await workbook.dispose();
  }
}

/** The .xls file's bytes from one pass over rows of every sheet at once, in groups of steps (see xlsxOnePassChunks). */
export async function* xlsOnePassChunks(
  sheets: readonly { readonly name: string; readonly repeatRows?: number }[],
  batches: AsyncIterable<Iterable<ReadonlyArray<ReadonlyArray<readonly Cell[]> | undefined>>>,
  options: XlsOptions,
): AsyncGenerator<Uint8Array, void, undefined> {
  const workbook = new XlsWorkbook(sheets, options);
  try {
    for await (const steps of batches) {
      for (const batch of steps) {
        for (let i = 0; i < sheets.length; i += 1) {
          for (const row of batch[i] ?? []) await workbook.add(i, row);
        }
      }
    }
    yield* workbook.finish();
  } finally {
    await workbook.dispose();
  }
}
