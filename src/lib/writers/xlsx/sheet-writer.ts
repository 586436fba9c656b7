// One worksheet written row by row into zip entries: the sheet's first part, and past the row
// limit further parts, each starting with the sheet's repeated header rows. Rows are added
// synchronously (an await per row would cost more than its XML); the caller flushes when
// `wantsFlush` says enough XML is waiting or a part has ended.
import type { ZipEntryWriter } from '../zip/zip-writer.ts';
import type { Cell } from './cell.ts';
import { fitRow, type SheetLimits } from './sheet-parts.ts';
import { rowXml, SHEET_END, SHEET_START } from './sheet-xml.ts';

export class SheetWriter<Entry extends ZipEntryWriter> {
  /** The entries of the parts begun so far, in order. */
  readonly entries: Entry[] = [];
  /** Rows still go to the first part (whose leading rows are the header repeated on the others). */
  private firstPart = true;
  private readonly header: Array<readonly Cell[]> = [];
  private readonly repeat: number;
  private rowsInPart = 0;
  private xml = SHEET_START;
  /** The last XML of parts that are full, each ending the part. */
  private endedParts: string[] = [];
  private current: Entry | undefined;

  constructor(
    /** The sheet's requested name (for error messages; final names are given at the end). */
    readonly name: string,
    repeatRows: number,
    private readonly limits: SheetLimits,
    private readonly chunkChars: number,
    private readonly openPart: () => Promise<Entry>,
  ) {
    this.repeat = Math.max(0, Math.min(repeatRows, limits.maxRows - 1));
  }

  add(row: readonly Cell[]): void {
    const fitted = fitRow(row, this.limits, this.name);
    if (this.rowsInPart === this.limits.maxRows) {
      this.endedParts.push(this.xml + SHEET_END);
      this.firstPart = false;
      this.rowsInPart = 0;
      this.xml = SHEET_START;
      for (const headerRow of this.header) this.xml += rowXml(++this.rowsInPart, headerRow);
    }
    if (this.firstPart && this.header.length < this.repeat) this.header.push([...fitted]);
    this.xml += rowXml(++this.rowsInPart, fitted);
  }

  get wantsFlush(): boolean {
    return this.xml.length >= this.chunkChars || this.endedParts.length > 0;
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
    for (const xml of ended) {
      const entry = await this.entry();
      await entry.write(xml);
      await entry.close();
      this.current = undefined;
    }
    if (this.xml.length > 0) {
      const xml = this.xml;
      this.xml = '';
      await (await this.entry()).write(xml);
    }
  }

  /** Ends the sheet: its last part is closed (an empty sheet still gets one). */
  async end(): Promise<void> {
    this.endedParts.push(this.xml + SHEET_END);
    this.xml = '';
    await this.flush();
  }
}
