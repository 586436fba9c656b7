// A growable little-endian byte buffer. System files are written little-endian
// regardless of the host, so every multi-byte value goes through a DataView.

export class ByteWriter {
  private buffer: Uint8Array;
  private view: DataView;
  private used = 0;

  constructor(initialCapacity = 4096) {
    this.buffer = new Uint8Array(Math.max(16, initialCapacity));
    this.view = new DataView(this.buffer.buffer);
  }

  get length(): number {
    return this.used;
  }

  /** Makes room for `extra` more bytes and returns the offset where they start. */
  reserve(extra: number): number {
    const start = this.used;
    const needed = start + extra;
    if (needed > this.buffer.length) {
      let capacity = this.buffer.length * 2;
      while (capacity < needed) capacity *= 2;
      const grown = new Uint8Array(capacity);
      grown.set(this.buffer.subarray(0, start));
      this.buffer = grown;
      this.view = new DataView(grown.buffer);
    }
    this.used = needed;
    return start;
  }

  int32(value: number): void {
    const at = this.reserve(4);
    this.view.setInt32(at, value, true);
  }

  float64(value: number): void {
    const at = this.reserve(8);
    this.view.setFloat64(at, value, true);
  }

  byte(value: number): void {
    const at = this.reserve(1);
    this.buffer[at] = value;
  }

  bytes(data: Uint8Array): void {
    const at = this.reserve(data.length);
    this.buffer.set(data, at);
  }

  /** Writes `data` into a field of exactly `size` bytes, padded with `fill`. */
  padded(data: Uint8Array, size: number, fill: number): void {
    const at = this.reserve(size);
    const n = Math.min(data.length, size);
    this.buffer.set(data.subarray(0, n), at);
    this.buffer.fill(fill, at + n, at + size);
  }

  fill(value: number, count: number): void {
    const at = this.reserve(count);
    this.buffer.fill(value, at, at + count);
  }

  /** A copy of the bytes written so far (the caller may keep it). */
  toBytes(): Uint8Array {
    return this.buffer.slice(0, this.used);
  }

  /** Forgets the content but keeps the capacity, so a hot loop does not reallocate. */
  clear(): void {
    this.used = 0;
  }
}
