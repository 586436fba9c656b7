// Reads the entries of a zip archive (an .xlsx is one) from memory. Only what spreadsheets use:
// stored and deflated entries, no encryption. An uploaded archive is hostile until read: what it
// may inflate to is capped in total and per entry, both by the sizes its directory declares (checked
// before anything is inflated) and by the bytes inflation really produces (an entry inflating past
// its declared size is stopped there), so memory never holds much more than the cap. Entries can be
// inflated ahead of use with zlib's asynchronous inflate, which runs off the event loop.
import { crc32, inflateRaw, inflateRawSync, type ZlibOptions } from 'node:zlib';

export class ZipError extends Error {
  /** True for valid archives this reader does not handle (another reader may). */
  constructor(
    message: string,
    readonly unsupported = false,
  ) {
    super(message);
  }
}

/** The archive would inflate past a limit: a zip bomb, or at any rate not a workbook to read. */
export class ZipTooLargeError extends ZipError {
  /** `limit`: "64 MB"; `detail`: what passes it, without a final stop. */
  constructor(
    readonly limit: string,
    readonly detail: string,
  ) {
    super(`The workbook is too large when uncompressed (more than ${limit}): ${detail}.`);
  }
}

export interface ZipLimits {
  /** Bytes all entries together may inflate to. */
  maxTotalBytes: number;
  /** Bytes one entry may inflate to. */
  maxEntryBytes: number;
  maxEntries: number;
}

const MB = 1024 * 1024;

/** An XLSForm is a few hundred kilobytes of XML; tens of megabytes is already generous. */
export const WORKBOOK_ZIP_LIMITS: Readonly<ZipLimits> = { maxTotalBytes: 64 * MB, maxEntryBytes: 32 * MB, maxEntries: 10_000 };

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const ZIP64_EXTRA = 0x0001;
const MAX16 = 0xffff;
const MAX32 = 0xffffffff;

interface EntryInfo {
  name: string;
  method: number;
  size: number;
  compressedSize: number;
  /** Where the entry's data starts and ends in the archive. */
  dataStart: number;
  dataEnd: number;
  localOffset: number;
}

function megabytes(bytes: number): string {
  return `${Math.round(bytes / MB)} MB`;
}

function tooLarge(limit: number, detail: string): ZipTooLargeError {
  return new ZipTooLargeError(megabytes(limit), detail);
}

const inflateRawAsync = (data: Uint8Array, options: ZlibOptions): Promise<Buffer> =>
  new Promise((resolve, reject) => inflateRaw(data, options, (error, out) => (error ? reject(error) : resolve(out))));

function isBufferTooLarge(err: unknown): boolean {
  return err instanceof Error && (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';
}

export class ZipArchive {
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  readonly #limits: ZipLimits;
  readonly #entries = new Map<string, EntryInfo>();
  readonly #inflated = new Map<string, Uint8Array>();
  #inflatedBytes = 0;

  private constructor(bytes: Uint8Array, limits: ZipLimits) {
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#limits = limits;
  }

  /** Reads the directory and checks it; inflates nothing yet. */
  static open(bytes: Uint8Array, limits: ZipLimits = WORKBOOK_ZIP_LIMITS): ZipArchive {
    const archive = new ZipArchive(bytes, limits);
    archive.#readDirectory();
    return archive;
  }

  get names(): string[] {
    return [...this.#entries.keys()];
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** The entry's bytes (inflated on the calling thread unless preloaded), or undefined if absent. */
  read(name: string): Uint8Array | undefined {
    const info = this.#entries.get(name);
    if (!info) return undefined;
    const cached = this.#inflated.get(name);
    if (cached) return cached;
    if (info.method === 0) return this.#keep(info, this.#bytes.subarray(info.dataStart, info.dataEnd));
    try {
      return this.#keep(info, inflateRawSync(this.#data(info), { maxOutputLength: Math.max(info.size, 1) }));
    } catch (err) {
      throw this.#inflateError(info, err);
    }
  }

  /** Inflates every entry ahead of use, one at a time, on zlib's thread pool. */
  async preload(): Promise<void> {
    for (const info of this.#entries.values()) {
      if (this.#inflated.has(info.name)) continue;
      if (info.method === 0) {
        this.read(info.name);
        continue;
      }
      let out: Buffer;
      try {
        out = await inflateRawAsync(this.#data(info), { maxOutputLength: Math.max(info.size, 1) });
      } catch (err) {
        throw this.#inflateError(info, err);
      }
      this.#keep(info, out);
    }
  }

  /**
   * The same entries as a zip of stored (uncompressed) entries, for a reader that parses zips its
   * own way: it then finds only the entries checked here and has nothing to inflate.
   */
  storedCopy(): Uint8Array {
    const encoder = new TextEncoder();
    const locals: Uint8Array[] = [];
    const centrals: Uint8Array[] = [];
    let offset = 0;
    for (const name of this.#entries.keys()) {
      const data = this.read(name) ?? new Uint8Array(0);
      const nameBytes = encoder.encode(name);
      const crc = crc32(data);
      const local = new Uint8Array(30 + nameBytes.length);
      const lv = new DataView(local.buffer);
      lv.setUint32(0, LOCAL, true);
      lv.setUint16(4, 20, true);
      lv.setUint16(6, 0x0800, true); // UTF-8 names
      lv.setUint32(14, crc, true);
      lv.setUint32(18, data.length, true);
      lv.setUint32(22, data.length, true);
      lv.setUint16(26, nameBytes.length, true);
      local.set(nameBytes, 30);
      const central = new Uint8Array(46 + nameBytes.length);
      const cv = new DataView(central.buffer);
      cv.setUint32(0, CENTRAL, true);
      cv.setUint16(4, 20, true);
      cv.setUint16(6, 20, true);
      cv.setUint16(8, 0x0800, true);
      cv.setUint32(16, crc, true);
      cv.setUint32(20, data.length, true);
      cv.setUint32(24, data.length, true);
      cv.setUint16(28, nameBytes.length, true);
      cv.setUint32(42, offset, true);
      central.set(nameBytes, 46);
      locals.push(local, data);
      centrals.push(central);
      offset += local.length + data.length;
    }
    const directorySize = centrals.reduce((n, c) => n + c.length, 0);
    const end = new Uint8Array(22);
    const ev = new DataView(end.buffer);
    ev.setUint32(0, EOCD, true);
    ev.setUint16(8, centrals.length, true);
    ev.setUint16(10, centrals.length, true);
    ev.setUint32(12, directorySize, true);
    ev.setUint32(16, offset, true);
    const out = new Uint8Array(offset + directorySize + end.length);
    let at = 0;
    for (const part of [...locals, ...centrals, end]) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }

  #data(info: EntryInfo): Uint8Array {
    return this.#bytes.subarray(info.dataStart, info.dataEnd);
  }

  /** Counts what inflation really produced (declared sizes are checked before, but may lie). */
  #keep(info: EntryInfo, out: Uint8Array): Uint8Array {
    if (out.length > info.size) throw new ZipError(`the part ${info.name} inflates past the size its directory declares`);
    this.#inflatedBytes += out.length;
    if (this.#inflatedBytes > this.#limits.maxTotalBytes) {
      throw tooLarge(this.#limits.maxTotalBytes, `its parts inflate to more than ${megabytes(this.#inflatedBytes)}`);
    }
    this.#inflated.set(info.name, out);
    return out;
  }

  #inflateError(info: EntryInfo, err: unknown): ZipError {
    if (err instanceof ZipError) return err;
    if (isBufferTooLarge(err)) return new ZipError(`the part ${info.name} inflates past the size its directory declares`);
    return new ZipError(`corrupt entry ${info.name}: ${err instanceof Error ? err.message : String(err)}`);
  }

  #u16(at: number): number {
    return this.#view.getUint16(at, true);
  }

  #u32(at: number): number {
    return this.#view.getUint32(at, true);
  }

  #u64(at: number): number {
    const value = this.#view.getBigUint64(at, true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new ZipError('corrupt zip64 field');
    return Number(value);
  }

  #findEnd(): number {
    const bytes = this.#bytes;
    for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 65535); i--) {
      if (this.#u32(i) === EOCD) return i;
    }
    throw new ZipError('not a zip archive (no end of central directory)');
  }

  /** The number of entries and where the central directory starts, from the (zip64) end record. */
  #directory(): { count: number; start: number; end: number } {
    const eocd = this.#findEnd();
    let count = this.#u16(eocd + 10);
    let start = this.#u32(eocd + 16);
    let end = eocd;
    if (count === MAX16 || start === MAX32) {
      const locator = eocd - 20;
      if (locator < 0 || this.#u32(locator) !== ZIP64_LOCATOR) throw new ZipError('corrupt zip64 end of central directory');
      const record = this.#u64(locator + 8);
      if (record + 56 > locator || this.#u32(record) !== ZIP64_EOCD) throw new ZipError('corrupt zip64 end of central directory');
      count = this.#u64(record + 32);
      start = this.#u64(record + 48);
      end = record;
    }
    if (count > this.#limits.maxEntries) throw new ZipError(`the archive has ${count} entries; a workbook has at most ${this.#limits.maxEntries}`);
    if (start > end) throw new ZipError('corrupt central directory');
    return { count, start, end };
  }

  #readDirectory(): void {
    const { count, start, end: directoryEnd } = this.#directory();
    const decoder = new TextDecoder('utf-8');
    const limits = this.#limits;
    let declaredTotal = 0;
    let offset = start;
    for (let n = 0; n < count; n++) {
      if (offset + 46 > directoryEnd || this.#u32(offset) !== CENTRAL) throw new ZipError('corrupt central directory');
      const flags = this.#u16(offset + 8);
      const method = this.#u16(offset + 10);
      let compressedSize = this.#u32(offset + 20);
      let size = this.#u32(offset + 24);
      const nameLength = this.#u16(offset + 28);
      const extraLength = this.#u16(offset + 30);
      const commentLength = this.#u16(offset + 32);
      let localOffset = this.#u32(offset + 42);
      const nameStart = offset + 46;
      const extraStart = nameStart + nameLength;
      offset = extraStart + extraLength + commentLength;
      if (offset > directoryEnd) throw new ZipError('corrupt central directory');
      const name = decoder.decode(this.#bytes.subarray(nameStart, extraStart));
      if (size === MAX32 || compressedSize === MAX32 || localOffset === MAX32) {
        let at = this.#zip64Extra(extraStart, extraLength, name);
        if (size === MAX32) [size, at] = [this.#u64(at), at + 8];
        if (compressedSize === MAX32) [compressedSize, at] = [this.#u64(at), at + 8];
        if (localOffset === MAX32) localOffset = this.#u64(at);
      }
      if (flags & 1) throw new ZipError(`the part ${name} is encrypted`);
      if (method !== 0 && method !== 8) throw new ZipError(`unknown compression method ${method} for ${name}`);
      if (method === 0 && size !== compressedSize) throw new ZipError(`corrupt entry ${name}`);
      if (this.#entries.has(name)) throw new ZipError(`the archive holds ${name} twice`);
      if (size > limits.maxEntryBytes) {
        throw tooLarge(limits.maxEntryBytes, `the part ${name} alone inflates to ${megabytes(size)}`);
      }
      declaredTotal += size;
      if (declaredTotal > limits.maxTotalBytes) {
        throw tooLarge(limits.maxTotalBytes, `its parts inflate to more than ${megabytes(declaredTotal)}`);
      }
      this.#entries.set(name, this.#locate({ name, method, size, compressedSize, localOffset }, start));
    }
    this.#checkNoOverlap();
  }

  /** Where the zip64 extended information starts in an entry's extra field. */
  #zip64Extra(start: number, length: number, name: string): number {
    for (let at = start; at + 4 <= start + length; ) {
      const id = this.#u16(at);
      const size = this.#u16(at + 2);
      if (id === ZIP64_EXTRA) return at + 4;
      at += 4 + size;
    }
    throw new ZipError(`corrupt zip64 entry ${name}`);
  }

  /** The entry's data range from its local header, which must lie before the central directory. */
  #locate(entry: Omit<EntryInfo, 'dataStart' | 'dataEnd'>, directoryStart: number): EntryInfo {
    const at = entry.localOffset;
    if (at + 30 > directoryStart || this.#u32(at) !== LOCAL) throw new ZipError(`corrupt entry ${entry.name}`);
    const dataStart = at + 30 + this.#u16(at + 26) + this.#u16(at + 28);
    const dataEnd = dataStart + entry.compressedSize;
    if (dataEnd > directoryStart) throw new ZipError(`truncated entry ${entry.name}`);
    return { ...entry, dataStart, dataEnd };
  }

  /** Entries sharing bytes are how some bombs multiply one deflated stream; no writer produces them. */
  #checkNoOverlap(): void {
    const ranges = [...this.#entries.values()].sort((a, b) => a.localOffset - b.localOffset);
    for (let i = 1; i < ranges.length; i++) {
      const previous = ranges[i - 1] as EntryInfo;
      const current = ranges[i] as EntryInfo;
      if (current.localOffset < previous.dataEnd) throw new ZipError(`the entries ${previous.name} and ${current.name} overlap`);
    }
  }
}
