// A multipart/form-data body read as it arrives, one part at a time, holding no more of it than
// the chunk at hand (plus a boundary's length kept back between chunks): a large submission's
// files go to disk part by part (upload.ts). Parts, their heads and what counts as malformed are
// as in multipart-body.ts, which splits small bodies already in memory.
import { errors } from '../../errors.ts';
import { partHead, type PartHead } from './multipart-body.ts';

/** The body's next chunk, or undefined at its end. */
export type ChunkSource = () => Promise<Buffer | undefined>;

/** A part's header lines; busboy allows about as much. */
const MAX_HEAD_BYTES = 64 * 1024;
/** Spaces and tabs allowed after a boundary, before its line ends. */
const MAX_PADDING_BYTES = 1024;
const CR = 0x0d;
const LF = 0x0a;
const DASH = 0x2d;

function malformed(): Error {
  return errors.multipartMalformed();
}

export class MultipartStream {
  readonly #pull: ChunkSource;
  /** `\r\n--boundary`: what ends every part's data. */
  readonly #delimiter: Buffer;
  #buffer: Buffer = Buffer.alloc(0);
  #at = 0;
  /** start: before the first boundary; data: in a part's data; boundary: just after a delimiter. */
  #state: 'start' | 'data' | 'boundary' | 'closed' = 'start';

  constructor(pull: ChunkSource, boundary: string) {
    this.#pull = pull;
    this.#delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  /**
   * Passes what is left of the current part and returns the next part's head, or undefined after
   * the closing boundary. Parts without a form-data Content-Disposition or without header lines
   * are passed over. Throws a 400 for a malformed body (one that ends before its closing boundary).
   */
  async nextPart(): Promise<PartHead | undefined> {
    for (;;) {
      if (this.#state === 'start') await this.#passPreamble();
      while (this.#state === 'data') await this.read();
      if (this.#state === 'closed') return undefined;
      // Just after a boundary: `--` closes the body; otherwise optional spaces, CRLF, then a part.
      if (!(await this.#need(2))) throw malformed();
      if (this.#buffer[this.#at] === DASH && this.#buffer[this.#at + 1] === DASH) {
        this.#state = 'closed';
        return undefined;
      }
      for (let padding = 0; this.#buffer[this.#at] === 0x20 || this.#buffer[this.#at] === 0x09; padding++) {
        if (padding >= MAX_PADDING_BYTES) throw malformed();
        this.#at++;
        if (!(await this.#need(2))) throw malformed();
      }
      if (this.#buffer[this.#at] !== CR || this.#buffer[this.#at + 1] !== LF) throw malformed();
      this.#at += 2;
      const head = await this.#readHead();
      if (head) return head;
    }
  }

  /** The next piece of the current part's data (a view into a chunk), or undefined at its end. */
  async read(): Promise<Buffer | undefined> {
    if (this.#state !== 'data') return undefined;
    for (;;) {
      const end = this.#buffer.indexOf(this.#delimiter, this.#at);
      if (end >= 0) {
        const piece = this.#buffer.subarray(this.#at, end);
        this.#at = end + this.#delimiter.length;
        this.#state = 'boundary';
        return piece.byteLength > 0 ? piece : undefined;
      }
      // Bytes that may be the start of a delimiter cut across chunks wait for the next chunk.
      const safe = this.#buffer.byteLength - (this.#delimiter.byteLength - 1);
      if (safe > this.#at) {
        const piece = this.#buffer.subarray(this.#at, safe);
        this.#at = safe;
        return piece;
      }
      if (!(await this.#more())) throw malformed();
    }
  }

  /** After the closing boundary: reads the rest of the body (an epilogue, usually a CRLF) and drops it. */
  async finish(): Promise<void> {
    this.#at = this.#buffer.byteLength;
    while (await this.#more()) this.#at = this.#buffer.byteLength;
  }

  async #passPreamble(): Promise<void> {
    // The first boundary opens the body or follows a preamble, which is dropped.
    const opening = this.#delimiter.subarray(2);
    if (!(await this.#need(opening.byteLength))) throw malformed();
    if (this.#buffer.subarray(this.#at, this.#at + opening.byteLength).equals(opening)) {
      this.#at += opening.byteLength;
      this.#state = 'boundary';
      return;
    }
    for (;;) {
      const found = this.#buffer.indexOf(this.#delimiter, this.#at);
      if (found >= 0) {
        this.#at = found + this.#delimiter.byteLength;
        this.#state = 'boundary';
        return;
      }
      this.#at = Math.max(this.#at, this.#buffer.byteLength - (this.#delimiter.byteLength - 1));
      if (!(await this.#more())) throw malformed();
    }
  }

  /** The head of the part starting here (null: a part to pass over); leaves the state at its data. */
  async #readHead(): Promise<PartHead | null> {
    if (!(await this.#need(2))) throw malformed();
    this.#state = 'data';
    // No header lines: the part is passed over (its data starts with the blank line's CRLF, which
    // is also how a delimiter right after it is found).
    if (this.#buffer[this.#at] === CR && this.#buffer[this.#at + 1] === LF) return null;
    for (;;) {
      const end = this.#buffer.indexOf('\r\n\r\n', this.#at, 'latin1');
      if (end >= 0) {
        const next = this.#buffer.indexOf(this.#delimiter, this.#at);
        if (next >= 0 && next < end) throw malformed();
        const head = partHead(this.#buffer.toString('utf8', this.#at, end));
        if (head === undefined) throw malformed();
        // The data follows the blank line, unless a delimiter starts at its second CRLF (an empty
        // part written without one).
        this.#at = end + 2;
        if (!((await this.#need(this.#delimiter.byteLength)) && this.#startsWithDelimiter())) this.#at += 2;
        return head;
      }
      if (this.#buffer.byteLength - this.#at > MAX_HEAD_BYTES) throw malformed();
      if (!(await this.#more())) throw malformed();
    }
  }

  #startsWithDelimiter(): boolean {
    return this.#buffer.subarray(this.#at, this.#at + this.#delimiter.byteLength).equals(this.#delimiter);
  }

  /** Pulls chunks until `bytes` are buffered past the current position; false if the body ends first. */
  async #need(bytes: number): Promise<boolean> {
    while (this.#buffer.byteLength - this.#at < bytes) {
      if (!(await this.#more())) return false;
    }
    return true;
  }

  /** Appends the next chunk to what is left unread; false at the end of the body. */
  async #more(): Promise<boolean> {
    for (;;) {
      const chunk = await this.#pull();
      if (chunk === undefined) return false;
      if (chunk.byteLength === 0) continue;
      this.#buffer = this.#at < this.#buffer.byteLength ? Buffer.concat([this.#buffer.subarray(this.#at), chunk]) : chunk;
      this.#at = 0;
      return true;
    }
  }
}
