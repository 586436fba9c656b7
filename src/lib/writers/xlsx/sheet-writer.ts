// One worksheet written row by row into zip entries: the sheet's first part, and past the row
// limit further parts, each starting with the sheet's repeated header rows. Rows are added
// synchronously (an await per row would cost more than its XML) as UTF-8 bytes (sheet-bytes.ts);
// the caller flushes when `wantsFlush` says a chunk is waiting or a part has ended.
import type { ZipEntryWriter } from '../zip/zip-writer.ts';
import type { Cell } from './cell.ts';
import { SheetBytes } from './sheet-bytes.ts';
import { fitRow, type SheetLimits } from './sheet-parts.ts';
import { SHEET_END, SHEET_START } from './sheet-xml.ts';

const START_BYTES = Buffer.from(SHEET_START, 'utf8');
const END_BYTES = Buffer.from(SHEET_END, 'utf8');

/** Rows a caller writes into a sheet's bytes itself: `count` of them, the k-th by `write`. */
export interface WrittenRows {
  readonly count: number;
  /** Writes row `k` as row `rowNumber` (SheetBytes' beginRow, cells, endRow). */
  write(out: SheetBytes, rowNumber: number, k: number): void;
}

export class SheetWriter<Entry extends ZipEntryWriter> {
  /** The entries of the parts begun so far, in order. */
  readonly entries: Entry[] = [];
  /** Rows still go to the first part (whose leading rows are the header repeated on the others). */
  private firstPart = true;
  private readonly header: Array<readonly Cell[]> = [];
  private readonly repeat: number;
  private rowsInPart = 0;
  private readonly out: SheetBytes;
  /** The current part's chunks not yet handed to its entry. */
  private waiting: Uint8Array[] = [];
  /** The last chunks of parts that are full, each list ending its part. */
  private endedParts: Uint8Array[][] = [];
  private current: Entry | undefined;

  constructor(
    /** The sheet's requested name (for error messages; final names are given at the end). */
    readonly name: string,
    repeatRows: number,
    private readonly limits: SheetLimits,
    /** Bytes of XML gathered before a chunk is handed on. */
    chunkBytes: number,
    private readonly openPart: () => Promise<Entry>,
  ) {
    this.repeat = Math.max(0, Math.min(repeatRows, limits.maxRows - 1));
    this.out = new SheetBytes(Math.max(1, chunkBytes));
    this.out.bytes(START_BYTES);
  }

  add(row: readonly Cell[]): void {
    const fitted = fitRow(row, this.limits, this.name);
    const out = this.out;
    this.roomForRow();
    if (this.firstPart && this.header.length < this.repeat) this.header.push([...fitted]);
    out.row(++this.rowsInPart, fitted);
    if (out.full) this.waiting.push(out.take());
  }

  /** Adds rows the caller writes (after the header rows, which come as cells). */
  addWritten(rows: WrittenRows): void {
    const out = this.out;
    for (let k = 0; k < rows.count; k++) {
      this.roomForRow();
      rows.write(out, ++this.rowsInPart, k);
      if (out.full) this.waiting.push(out.take());
    }
  }

  /**
   * Adds `count` rows whose XML the caller wrote elsewhere (numbered on from this sheet's rows so
   * far, as addWritten would number them): they must fit in the current part.
   */
  addRendered(chunks: readonly Uint8Array[], count: number): void {
    if (this.rowsInPart + count > this.limits.maxRows) throw new Error(`sheet "${this.name}": rendered rows past the row limit`);
    const out = this.out;
    if (out.len > 0) this.waiting.push(out.take());
    for (const chunk of chunks) if (chunk.byteLength > 0) this.waiting.push(chunk);
    this.rowsInPart += count;
  }

  /** The rows of the current part so far (header rows included). */
  get rowsWritten(): number {
    return this.rowsInPart;
  }

  /** Ends the part when it is full, and begins the next with the header rows. */
  private roomForRow(): void {
    const out = this.out;
    if (this.rowsInPart === this.limits.maxRows) {
      out.bytes(END_BYTES);
      this.endedParts.push([...this.waiting, out.take()]);
      this.waiting = [];
      this.firstPart = false;
      this.rowsInPart = 0;
      out.bytes(START_BYTES);
      for (const headerRow of this.header) out.row(++this.rowsInPart, headerRow);
    }
  }

  get wantsFlush(): boolean {
    return this.waiting.length > 0 || this.endedParts.length > 0;
  }

  private async entry(): Promise<Entry> {
    if (!this.current) {
      this.current = await this.openPart();
      this.entries.push(this.current);
    }
    return this.current;
  }

  /** Hands the waiting XML to the parts' entries, closing those that are full. */
  async flush(): Promise<void> {
    const ended = this.endedParts;
    this.endedParts = [];
    for (const chunks of ended) {
      const entry = await this.entry();
      for (const chunk of chunks) await entry.write(chunk);
      await entry.close();
      this.current = undefined;
    }
    const waiting = this.waiting;
    this.waiting = [];
    for (const chunk of waiting) await (await this.entry()).write(chunk);
  }

  /** Ends the sheet: its last part is closed (an empty sheet still gets one). */
  async end(): Promise<void> {
    this.out.bytes(END_BYTES);
    this.endedParts.push([...this.waiting, this.out.take()]);
    this.waiting = [];
    await this.flush();
  }
}
