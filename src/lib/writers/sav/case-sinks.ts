// Where encoded cases go: straight 8-byte slots, or simple bytecode compression ("$FL2"
// compression 1). In the latter each slot becomes one command byte: a small integer is
// stored in the command itself, system-missing and all-blank string slots need no data,
// anything else is copied as 8 raw bytes after its block of 8 commands. Blocks run on across
// case boundaries, so bytes become final only once their block's 8 commands are known.
import { COMPRESSION_BIAS, SYSMIS } from './constants.ts';

const SPACE = 0x20;
const RAW = 253;
const BLANKS = 254;
const MISSING = 255;
const SMALLEST_INLINE = 1 - COMPRESSION_BIAS;
const LARGEST_INLINE = 251 - COMPRESSION_BIAS;
const ALL_SPACES = 0x20202020;
const ALL_BLANKS = 0xfefefefe;

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
    this.reserve(this.maxCaseBytes);
  }

  /** Makes room for `more` bytes after those written. */
  protected reserve(more: number): void {
    const needed = this.length + more;
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

/**
 * Compressed cases encoded apart from the cases before them (another thread), beginning at
 * command `phase` of a block (0: a block of their own): CompressedSink.join puts them in place.
 */
export interface CasePiece {
  /** The bytes; with a phase, the first block's first `phase` commands are placeholders. */
  readonly bytes: Uint8Array;
  readonly phase: number;
  /** Where the first block's data ends (0 without a phase). */
  readonly firstEnd: number;
  /** Where the block still open begins (the end of the bytes when none is), and its commands (8: none open). */
  readonly tailStart: number;
  readonly tailCount: number;
}

export class CompressedSink extends GrowableBuffer implements CaseSink {
  /** Where the open block's command bytes are. */
  private commandsAt = 0;
  /** Commands used in the open block; 8 means there is no open block. */
  private commandCount = 8;
  /** Where the second block began since startAt() (-1: not yet; -2: not a piece). */
  private firstEnd = -2;
  private lastSource: Uint8Array | undefined;
  private sourceView: DataView = new DataView(new ArrayBuffer(0));
  private otherSource: Uint8Array | undefined;
  private otherView: DataView = new DataView(new ArrayBuffer(0));

  constructor(slotCount: number) {
    // Every slot may need a command byte and 8 data bytes, plus one block of commands.
    super(slotCount * 9 + 16);
  }

  get readyLength(): number {
    return this.commandCount === 8 ? this.length : this.commandsAt;
  }

  private openBlock(): void {
    if (this.firstEnd === -1) this.firstEnd = this.length;
    this.commandsAt = this.length;
    this.length += 8;
    this.commandCount = 0;
  }

  private command(code: number): void {
    if (this.commandCount === 8) this.openBlock();
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
    const from = this.viewOf(source);
    const fullSlots = used >> 3;
    for (let slot = 0; slot < fullSlots; slot += 1) {
      const at = start + slot * 8;
      const low = from.getUint32(at, true);
      const high = from.getUint32(at + 4, true);
      if (low === ALL_SPACES && high === ALL_SPACES) {
        this.command(BLANKS);
      } else {
        this.command(RAW);
        this.view.setUint32(this.length, low, true);
        this.view.setUint32(this.length + 4, high, true);
        this.length += 8;
      }
    }
    const tail = used & 7;
    if (tail > 0) {
      // The last, partly used slot: its bytes, then blanks.
      const at = start + fullSlots * 8;
      this.command(RAW);
      const to = this.length;
      for (let i = 0; i < 8; i += 1) this.buffer[to + i] = i < tail ? (source[at + i] ?? SPACE) : SPACE;
      this.length += 8;
    }
    this.blankSlots(slotCount - fullSlots - (tail > 0 ? 1 : 0));
  }

  /** The unused rest of a string: one BLANKS command per slot, no data. */
  private blankSlots(count: number): void {
    let left = count;
    while (left > 0) {
      if (this.commandCount === 8) this.openBlock();
      const n = Math.min(left, 8 - this.commandCount);
      const at = this.commandsAt + this.commandCount;
      if (n === 8) {
        // A whole block of blanks (long strings mostly unused): two stores instead of eight.
        this.view.setUint32(at, ALL_BLANKS, true);
        this.view.setUint32(at + 4, ALL_BLANKS, true);
      } else {
        for (let i = 0; i < n; i += 1) this.buffer[at + i] = BLANKS;
      }
      this.commandCount += n;
      left -= n;
    }
  }

  /** A DataView of the source buffer, made once per buffer of the last two (an encoder's own, and stored records' bytes). */
  private viewOf(source: Uint8Array): DataView {
    if (source === this.lastSource) return this.sourceView;
    if (source !== this.otherSource) {
      this.otherSource = source;
      this.otherView = new DataView(source.buffer, source.byteOffset, source.byteLength);
    }
    const view = this.otherView;
    this.otherSource = this.lastSource;
    this.otherView = this.sourceView;
    this.lastSource = source;
    this.sourceView = view;
    return view;
  }

  take(): Uint8Array {
    const ready = this.readyLength;
    const taken = this.takeFirst(ready);
    if (this.commandCount !== 8) this.commandsAt -= ready;
    return taken;
  }

  /** Where the cases before these leave the block (see CasePiece): forgets everything written, and begins there. */
  startAt(phase: number): void {
    this.length = 0;
    this.commandCount = 8;
    this.firstEnd = -2;
    if (phase === 0) return;
    this.openBlock();
    this.firstEnd = -1;
    this.buffer.fill(0, this.commandsAt, this.commandsAt + 8);
    this.commandCount = phase;
  }

  /** The commands the open block holds (0 when none is open): where the next case's slots begin. */
  get phase(): number {
    return this.commandCount === 8 ? 0 : this.commandCount;
  }

  /** The cases written since startAt(phase), as a piece to join elsewhere. */
  piece(phase: number): CasePiece {
    const open = this.commandCount !== 8;
    const firstEnd = phase === 0 ? 0 : this.firstEnd >= 0 ? this.firstEnd : this.length;
    return { bytes: this.buffer.slice(0, this.length), phase, firstEnd, tailStart: open ? this.commandsAt : this.length, tailCount: open ? this.commandCount : 8 };
  }

  /**
   * Puts a piece of cases after those written, whose open block must hold the piece's phase of
   * commands: the bytes now final, the piece's own where they can be (not copied); the piece's open
   * block stays open here.
   */
  join(piece: CasePiece): Uint8Array[] {
    if (this.phase !== piece.phase) throw new Error(`sav writer: cases joined at command ${piece.phase} of a block at ${this.phase}`);
    const { bytes } = piece;
    let from = 0;
    if (piece.phase > 0) {
      const stillOpen = piece.tailStart === 0;
      const count = stillOpen ? piece.tailCount : 8;
      this.buffer.set(bytes.subarray(piece.phase, count), this.commandsAt + piece.phase);
      const data = bytes.subarray(8, piece.firstEnd);
      this.reserve(data.length);
      this.buffer.set(data, this.length);
      this.length += data.length;
      this.commandCount = count;
      if (stillOpen) return [];
      from = piece.firstEnd;
    }
    const out = [this.take()];
    if (piece.tailStart > from) out.push(bytes.subarray(from, piece.tailStart));
    if (piece.tailCount < 8) {
      const tail = bytes.subarray(piece.tailStart);
      this.reserve(tail.length);
      this.commandsAt = this.length;
      this.buffer.set(tail, this.length);
      this.length += tail.length;
      this.commandCount = piece.tailCount;
    }
    return out;
  }

  /** Closes the open block; its unused commands are 0, which readers skip. */
  finish(): void {
    if (this.commandCount === 8) return;
    this.buffer.fill(0, this.commandsAt + this.commandCount, this.commandsAt + 8);
    this.commandCount = 8;
  }
}
