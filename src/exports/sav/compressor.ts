// Simple bytecode compression ("$FL2" compression 1). Each 8-byte slot becomes one command
// byte: a small integer is stored in the command itself, system-missing and all-blank string
// slots take no data, anything else is copied as 8 raw bytes after its block of 8 commands.
// Blocks run on across case boundaries, so the writer holds back one unfinished block.
import { COMPRESSION_BIAS, SYSMIS } from './dictionary.ts';
import type { ByteWriter } from './byte-writer.ts';

const RAW = 253;
const BLANKS = 254;
const MISSING = 255;
/** Command bytes 1…251 carry the integers 1 − bias … 251 − bias. */
const SMALLEST_INLINE = 1 - COMPRESSION_BIAS;
const LARGEST_INLINE = 251 - COMPRESSION_BIAS;
const ALL_SPACES = 0x20202020;

export class Compressor {
  /** The unfinished block: 8 commands, then up to 8 raw slots. */
  private readonly block = new Uint8Array(72);
  private commandCount = 0;
  private dataLength = 8;

  /** `numericSlots[i]` is 1 when slot i holds a number, 0 when it holds string bytes. */
  constructor(private readonly numericSlots: Uint8Array) {}

  compress(caseBytes: Uint8Array, out: ByteWriter): void {
    const view = new DataView(caseBytes.buffer, caseBytes.byteOffset, caseBytes.byteLength);
    const slots = this.numericSlots;
    for (let slot = 0; slot < slots.length; slot += 1) {
      const at = slot * 8;
      let command = RAW;
      if (slots[slot] === 1) {
        const value = view.getFloat64(at, true);
        if (value === SYSMIS) command = MISSING;
        else if (Number.isInteger(value) && value >= SMALLEST_INLINE && value <= LARGEST_INLINE && !Object.is(value, -0)) {
          command = value + COMPRESSION_BIAS;
        }
      } else if (view.getUint32(at, true) === ALL_SPACES && view.getUint32(at + 4, true) === ALL_SPACES) {
        command = BLANKS;
      }
      this.block[this.commandCount] = command;
      this.commandCount += 1;
      if (command === RAW) {
        this.block.set(caseBytes.subarray(at, at + 8), this.dataLength);
        this.dataLength += 8;
      }
      if (this.commandCount === 8) this.flushBlock(out);
    }
  }

  /** Writes the unfinished block, its unused commands set to 0, which readers skip. */
  finish(out: ByteWriter): void {
    if (this.commandCount === 0) return;
    this.block.fill(0, this.commandCount, 8);
    this.flushBlock(out);
  }

  private flushBlock(out: ByteWriter): void {
    out.bytes(this.block.subarray(0, this.dataLength));
    this.commandCount = 0;
    this.dataLength = 8;
  }
}
