// The shared-string table (SST) for strings too long for a LABEL record, cut into records of at
// most 8,224 bytes as BIFF8 requires: a string's 3-byte header never splits, and a string that
// continues in a CONTINUE record starts it with its encoding flag again. Only the first record
// is held in memory (its counts are known at the end); the rest go to a spool.
import { isCompressible, MAX_PAYLOAD, RECORD } from './biff.ts';
import type { Spool } from './spool.ts';
import { SpoolWriter } from './spool.ts';

export class SstWriter {
  private readonly spooled: SpoolWriter;
  private first: Buffer | undefined;
  private current = Buffer.allocUnsafe(MAX_PAYLOAD);
  private used = 8; // the first record starts with the two counts
  count = 0;

  constructor(spool: Spool) {
    this.spooled = new SpoolWriter(spool);
  }

  /** Adds a string and returns its index. */
  async add(text: string): Promise<number> {
    const wide = !isCompressible(text);
    const unit = wide ? 2 : 1;
    if (this.used + 3 + unit > MAX_PAYLOAD) await this.close();
    this.current.writeUInt16LE(text.length, this.used);
    this.current[this.used + 2] = wide ? 1 : 0;
    this.used += 3;
    let at = 0;
    while (at < text.length) {
      const fit = Math.min(text.length - at, Math.floor((MAX_PAYLOAD - this.used) / unit));
      if (fit === 0) {
        await this.close();
        this.current[0] = wide ? 1 : 0;
        this.used = 1;
        continue;
      }
      this.used += this.current.write(text.slice(at, at + fit), this.used, wide ? 'utf16le' : 'latin1');
      at += fit;
    }
    const index = this.count;
    this.count += 1;
    return index;
  }

  private async close(): Promise<void> {
    if (this.first === undefined) {
      this.first = Buffer.from(this.current.subarray(0, this.used));
    } else {
      let offset = this.spooled.reserve(4 + this.used);
      if (offset < 0) {
        await this.spooled.flush();
        offset = this.spooled.reserve(4 + this.used);
      }
      const buffer = this.spooled.buffer;
      buffer.writeUInt16LE(RECORD.CONTINUE, offset);
      buffer.writeUInt16LE(this.used, offset + 2);
      this.current.copy(buffer, offset + 4, 0, this.used);
    }
    this.used = 0;
  }

  /** The SST record (in memory) and the size of its CONTINUE records (in the spool); none when empty. */
  async finish(): Promise<{ head: Buffer; spooledBytes: number } | undefined> {
    if (this.count === 0) return undefined;
    await this.close();
    await this.spooled.flush();
    const first = this.first ?? Buffer.alloc(8);
    first.writeUInt32LE(this.count, 0);
    first.writeUInt32LE(this.count, 4);
    const head = Buffer.allocUnsafe(4 + first.length);
    head.writeUInt16LE(RECORD.SST, 0);
    head.writeUInt16LE(first.length, 2);
    first.copy(head, 4);
    return { head, spooledBytes: this.spooled.total };
  }
}
