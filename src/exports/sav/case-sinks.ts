// Where encoded cases go: straight 8-byte slots, or simple bytecode compression ("$FL2"
// compression 1). In the latter each slot becomes one command byte: a small integer is
// stored in the command itself, system-missing and all-blank string slots need no data,
// anything else is copied as 8 raw bytes after its block of 8 commands. Blocks run on across
// case boundaries, so bytes become final only once their block's 8 commands are known.
import { COMPRESSION_BIAS, SYSMIS } from './dictionary.ts';

const SPACE = 0x20;
const RAW = 253;
const BLANKS = 254;
const MISSING = 255;
/** Command bytes 1…251 carry the integers 1 − bias … 251 − bias. */
const SMALLEST_INLINE = 1 - COMPRESSION_BIAS;
const LARGEST_INLINE = 251 - COMPRESSION_BIAS;

export interface CaseSink {
  /** Makes room for one whole case, before its slots are written. */
  beginCase(): void;
  number(value: number): void;
  /**
   * A string segment of `slotCount` slots whose first `used` bytes are `source[start…]`;
   * the rest of the segment is blanks.
   */
  text(source: Uint8Array, start: number, used: number, slotCount: number): void;
  /** Bytes that are final and can be handed out. */
  readonly readyLength: number;
  /** Hands out (a copy of) the final bytes and forgets them. */
  take(): Uint8Array;
  /** Makes everything final: the end of the data. */
  finish(): void;
}

abstract class GrowableBuffer {
  protected buffer = new Uint8Array(64 * 1024);
  protected view = new DataView(this.buffer.buffer);
  protected length = 0;

  constructor(private readonly maxCaseBytes: number) {}

  beginCase(): void {
    const needed = this.length + this.maxCaseBytes;
    if (needed <= this.buffer.length) return;
    let capacity = this.buffer.length * 2;
    while (capacity < needed) capacity *= 2;
    const grown = new Uint8Array(capacity);
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
    this.view = new DataView(grown.buffer);
  }

  /** Copies out the first `count` bytes and moves the rest to the front. */
  protected takeFirst(count: number): Uint8Array {
    const taken = this.buffer.slice(0, count);
    this.buffer.copyWithin(0, count, this.length);
    this.length -= count;
    return taken;
  }
}

export class PlainSink extends GrowableBuffer implements CaseSink {
  constructor(slotCount: number) {
    super(slotCount * 8);
  }

  get readyLength(): number {
    return this.length;
  }

  number(value: number): void {
    this.view.setFloat64(this.length, value, true);
    this.length += 8;
  }

  text(source: Uint8Array, start: number, used: number, slotCount: number): void {
    this.buffer.set(source.subarray(start, start + used), this.length);
    const end = this.length + slotCount * 8;
    this.buffer.fill(SPACE, this.length + used, end);
    this.length = end;
  }

  take(): Uint8Array {
    return this.takeFirst(this.length);
  }

  finish(): void {}
}

export class CompressedSink extends GrowableBuffer implements CaseSink {
  /** Where the open block's command bytes are. */
  private commandsAt = 0;
  /** Commands used in the open block; 8 means there is no open block. */
  private commandCount = 8;

  constructor(slotCount: number) {
    // Every slot may need a command byte and 8 data bytes, plus one block of commands.
    super(slotCount * 9 + 16);
  }

  get readyLength(): number {
    return this.commandCount === 8 ? this.length : this.commandsAt;
  }

  private command(code: number): void {
    if (this.commandCount === 8) {
      this.commandsAt = this.length;
      this.length += 8;
      this.commandCount = 0;
    }
    this.buffer[this.commandsAt + this.commandCount] = code;
    this.commandCount += 1;
  }

  number(value: number): void {
    if (value === SYSMIS) {
      this.command(MISSING);
    } else if (Number.isInteger(value) && value >= SMALLEST_INLINE && value <= LARGEST_INLINE && !Object.is(value, -0)) {
      this.command(value + COMPRESSION_BIAS);
    } else {
      this.command(RAW);
      this.view.setFloat64(this.length, value, true);
      this.length += 8;
    }
  }

  text(source: Uint8Array, start: number, used: number, slotCount: number): void {
    const buffer = this.buffer;
    const fullSlots = used >> 3;
    for (let slot = 0; slot < fullSlots; slot += 1) {
      const at = start + slot * 8;
      let blank = true;
      for (let i = 0; i < 8; i += 1) {
        if (source[at + i] !== SPACE) {
          blank = false;
          break;
        }
      }
      if (blank) {
        this.command(BLANKS);
      } else {
        this.command(RAW);
        const to = this.length;
        for (let i = 0; i < 8; i += 1) buffer[to + i] = source[at + i] ?? SPACE;
        this.length += 8;
      }
    }
    let slotsLeft = slotCount - fullSlots;
    const tail = used & 7;
    if (tail > 0) {
      // The last, partly used slot: its bytes and then blanks (it cannot be all blank unless the text is).
      const at = start + fullSlots * 8;
      this.command(RAW);
      const to = this.length;
      for (let i = 0; i < 8; i += 1) buffer[to + i] = i < tail ? (source[at + i] ?? SPACE) : SPACE;
      this.length += 8;
      slotsLeft -= 1;
    }
    for (; slotsLeft > 0; slotsLeft -= 1) this.command(BLANKS);
  }

  take(): Uint8Array {
    const ready = this.readyLength;
    const taken = this.takeFirst(ready);
    if (this.commandCount !== 8) this.commandsAt -= ready;
    return taken;
  }

  /** Closes the open block; its unused commands are 0, which readers skip. */
  finish(): void {
    if (this.commandCount === 8) return;
    this.buffer.fill(0, this.commandsAt + this.commandCount, this.commandsAt + 8);
    this.commandCount = 8;
  }
}
