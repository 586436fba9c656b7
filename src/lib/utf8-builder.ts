// A growable buffer that writers fill with UTF-8 directly (OData's entities, XLSX's worksheet
// rows): no string is made per value and nothing is encoded twice. Subclasses add what their
// format needs (JSON strings, escaped XML) and what becomes of the bytes (a view, a chunk).

export class Utf8Builder {
  protected buf: Buffer;
  /** Bytes written so far. */
  len = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafeSlow(size);
  }

  /** The buffer, with room for `more` bytes after those written (grown when needed). */
  protected ensure(more: number): Buffer {
    if (this.len + more > this.buf.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.len + more));
      this.buf.copy(grown, 0, 0, this.len);
      this.buf = grown;
    }
    return this.buf;
  }

  /** Bytes as they are (a fixed text encoded once). */
  bytes(bytes: Uint8Array): void {
    const buf = this.ensure(bytes.length);
    // Most fixed texts are a few bytes: a loop copies them faster than a call into set().
    if (bytes.length > 64) buf.set(bytes, this.len);
    else for (let i = 0; i < bytes.length; i++) buf[this.len + i] = bytes[i] as number;
    this.len += bytes.length;
  }

  /** Text known to be ASCII (names, digits, references). */
  asciiText(text: string): void {
    const length = text.length;
    const buf = this.ensure(length);
    const at = this.len;
    for (let i = 0; i < length; i++) buf[at + i] = text.charCodeAt(i);
    this.len = at + length;
  }

  /** Any text as UTF-8, as it stands: ASCII a byte at a time, the rest through Buffer's encoder. */
  text(text: string): void {
    const buf = this.ensure(text.length * 3);
    let at = this.len;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) {
        // From the start again, the ASCII already copied included.
        this.len += buf.write(text, this.len, 'utf8');
        return;
      }
      buf[at++] = c;
    }
    this.len = at;
  }

  /** A whole number from 0 to 2^31 - 1, its digits written in place (no string made). */
  digits(n: number): void {
    let width = 1;
    for (let rest = n; rest >= 10; rest = (rest / 10) | 0) width++;
    const buf = this.ensure(width);
    let at = this.len + width;
    this.len = at;
    for (let rest = n; width > 0; width--) {
      const next = (rest / 10) | 0;
      buf[--at] = 48 + rest - next * 10;
      rest = next;
    }
  }
}
