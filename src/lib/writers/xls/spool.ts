// Where the XLS writer keeps bytes it cannot emit yet. A legacy .xls file is a compound file whose
// header and allocation table need the size of the workbook stream, and the stream's first part
// (the globals) needs the position of every sheet: nothing can be sent before the last row is
// encoded. The writer stays pure by writing its cell records into spools the caller provides
// (a temporary file in the server; memory in tests), and reading them back once.
import type { Spool } from '../spool.ts';

export { memorySpool, type Spool, type SpoolFactory } from '../spool.ts';

/** Collects small writes into larger ones, so a file-backed spool sees few big writes. */
export class SpoolWriter {
  private current: Buffer;
  private used = 0;
  /** Bytes written so far (flushed or not). */
  total = 0;

  constructor(
    private readonly spool: Spool,
    size = 256 * 1024,
  ) {
    this.current = Buffer.allocUnsafe(size);
  }

  /**
   * The offset in `buffer` where `bytes` more may be written, or -1 when the buffer must be
   * flushed first (`await flush()`, then ask again). Synchronous on purpose: one await per cell
   * would cost more than encoding the cell.
   */
  reserve(bytes: number): number {
    if (this.used + bytes > this.buffer.length) {
      if (this.used > 0) return -1;
      this.current = Buffer.allocUnsafe(bytes);
    }
    const offset = this.used;
    this.used += bytes;
    this.total += bytes;
    return offset;
  }

  get buffer(): Buffer {
    return this.current;
  }

  /** A point to return to with rewind(), in the unflushed buffer. */
  mark(): { used: number; total: number } {
    return { used: this.used, total: this.total };
  }

  rewind(mark: { used: number; total: number }): void {
    this.used = mark.used;
    this.total = mark.total;
  }

  async flush(): Promise<void> {
    if (this.used === 0) return;
    await this.spool.write(this.current.subarray(0, this.used));
    this.used = 0;
  }
}
