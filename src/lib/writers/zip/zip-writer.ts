// A streaming zip writer for the export formats (XLSX packages, csvzip, savzip, attachments):
// entries are deflated as their bytes arrive (zlib on libuv's thread pool, so compression overlaps
// producing the next chunk), sizes and CRC-32 (native zlib.crc32) follow each entry in a data
// descriptor (files compressed already, such as photos, are stored whole instead), and ZIP64
// records are written when an entry, the archive or the entry count passes the classic format's
// limits. Measured against archiver (see src/lib/writers/xlsx/README.md): archiver's pure-JS
// CRC-32 and its 16 KiB stream buffers left the main thread idle or busy for a third of the run.
//
// One pass, several entries: an export that writes every section from a single read of the
// records has one entry streaming out at a time; the others are compressed as they go into
// spools the caller provides and copied out, already compressed, after the streamed ones.
// Pure: no fs, network or db.
import { createDeflateRaw, crc32, type DeflateRaw } from 'node:zlib';
import type { Spool } from '../spool.ts';

export interface ZipOptions {
  /** zlib level, 0 to 9. */
  readonly level: number;
  /** Modification time stamped on the entries. */
  readonly date: Date;
  /** Bytes of input that may wait for the compressor while the next chunk is produced. */
  readonly queueBytes?: number;
}

const MAX_32 = 0xffffffff;
const MAX_16 = 0xffff;

interface Written {
  readonly name: Buffer;
  readonly offset: number;
  readonly crc: number;
  readonly size: number;
  readonly compressedSize: number;
  /** Stored as it is (method 0), its sizes and CRC in the local header; otherwise deflated with a data descriptor. */
  readonly stored?: boolean;
}

const UTF8_NAME = 0x0800;
const DATA_DESCRIPTOR = 0x0008;
const METHOD_STORED = 0;
const METHOD_DEFLATE = 8;

function dosDateTime(date: Date): { time: number; day: number } {
  const year = Math.min(Math.max(date.getFullYear(), 1980), 2107);
  return {
    time: (date.getHours() << 11) | (date.getMinutes() << 5) | Math.floor(date.getSeconds() / 2),
    day: ((year - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate(),
  };
}

/** A local header; `stored`: the entry's CRC and sizes, known before its bytes (a stored entry). */
function localHeader(name: Buffer, stamp: { time: number; day: number }, stored?: Written): Buffer {
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(20, 4); // version needed: 2.0 (deflate)
  // bit 3: sizes in a data descriptor (deflated entries only); bit 11: UTF-8 name
  header.writeUInt16LE(stored ? UTF8_NAME : UTF8_NAME | DATA_DESCRIPTOR, 6);
  header.writeUInt16LE(stored ? METHOD_STORED : METHOD_DEFLATE, 8);
  header.writeUInt16LE(stamp.time, 10);
  header.writeUInt16LE(stamp.day, 12);
  if (stored) {
    header.writeUInt32LE(stored.crc, 14);
    header.writeUInt32LE(stored.compressedSize, 18);
    header.writeUInt32LE(stored.size, 22);
  }
  // Otherwise CRC and sizes (14..25) stay zero: they follow in the data descriptor.
  header.writeUInt16LE(name.length, 26);
  return Buffer.concat([header, name]);
}

function dataDescriptor(entry: Written): Buffer {
  if (entry.size < MAX_32 && entry.compressedSize < MAX_32) {
    const d = Buffer.alloc(16);
    d.writeUInt32LE(0x08074b50, 0);
    d.writeUInt32LE(entry.crc, 4);
    d.writeUInt32LE(entry.compressedSize, 8);
    d.writeUInt32LE(entry.size, 12);
    return d;
  }
  const d = Buffer.alloc(24);
  d.writeUInt32LE(0x08074b50, 0);
  d.writeUInt32LE(entry.crc, 4);
  d.writeBigUInt64LE(BigInt(entry.compressedSize), 8);
  d.writeBigUInt64LE(BigInt(entry.size), 16);
  return d;
}

function centralHeader(entry: Written, stamp: { time: number; day: number }): Buffer {
  const zip64 = entry.size >= MAX_32 || entry.compressedSize >= MAX_32 || entry.offset >= MAX_32;
  const extra = zip64 ? Buffer.alloc(28) : Buffer.alloc(0);
  if (zip64) {
    extra.writeUInt16LE(0x0001, 0);
    extra.writeUInt16LE(24, 2);
    extra.writeBigUInt64LE(BigInt(entry.size), 4);
    extra.writeBigUInt64LE(BigInt(entry.compressedSize), 12);
    extra.writeBigUInt64LE(BigInt(entry.offset), 20);
  }
  const h = Buffer.alloc(46);
  h.writeUInt32LE(0x02014b50, 0);
  h.writeUInt16LE((3 << 8) | 45, 4); // made by: Unix, spec 4.5
  h.writeUInt16LE(zip64 ? 45 : 20, 6);
  h.writeUInt16LE(entry.stored ? UTF8_NAME : UTF8_NAME | DATA_DESCRIPTOR, 8);
  h.writeUInt16LE(entry.stored ? METHOD_STORED : METHOD_DEFLATE, 10);
  h.writeUInt16LE(stamp.time, 12);
  h.writeUInt16LE(stamp.day, 14);
  h.writeUInt32LE(entry.crc, 16);
  h.writeUInt32LE(zip64 ? MAX_32 : entry.compressedSize, 20);
  h.writeUInt32LE(zip64 ? MAX_32 : entry.size, 24);
  h.writeUInt16LE(entry.name.length, 28);
  h.writeUInt16LE(extra.length, 30);
  h.writeUInt32LE(0o100644 * 0x10000, 38); // external attributes: a regular file, rw-r--r--
  h.writeUInt32LE(zip64 ? MAX_32 : entry.offset, 42);
  return Buffer.concat([h, entry.name, extra]);
}

function endRecords(count: number, directoryOffset: number, directorySize: number): Buffer {
  const zip64 = count >= MAX_16 || directoryOffset >= MAX_32 || directorySize >= MAX_32;
  const parts: Buffer[] = [];
  if (zip64) {
    const record = Buffer.alloc(56);
    record.writeUInt32LE(0x06064b50, 0);
    record.writeBigUInt64LE(44n, 4);
    record.writeUInt16LE(45, 12);
    record.writeUInt16LE(45, 14);
    record.writeBigUInt64LE(BigInt(count), 24);
    record.writeBigUInt64LE(BigInt(count), 32);
    record.writeBigUInt64LE(BigInt(directorySize), 40);
    record.writeBigUInt64LE(BigInt(directoryOffset), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(BigInt(directoryOffset + directorySize), 8);
    locator.writeUInt32LE(1, 16);
    parts.push(record, locator);
  }
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Math.min(count, MAX_16), 8);
  end.writeUInt16LE(Math.min(count, MAX_16), 10);
  end.writeUInt32LE(Math.min(directorySize, MAX_32), 12);
  end.writeUInt32LE(Math.min(directoryOffset, MAX_32), 16);
  parts.push(end);
  return Buffer.concat(parts);
}

/** Resolves when the compressor wants more input, or has been closed. */
function writable(deflate: DeflateRaw): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      deflate.off('drain', done);
      deflate.off('close', done);
      resolve();
    };
    deflate.on('drain', done);
    deflate.on('close', done);
  });
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** What the central directory needs of an entry once its bytes are compressed. */
function writtenEntry(name: Buffer, offset: number, deflater: EntryDeflater): Written {
  return { name, offset, crc: deflater.crc, size: deflater.size, compressedSize: deflater.compressedSize };
}

/** One entry's bytes, compressed as they are written; the compressed bytes go to `sink` in order. */
class EntryDeflater {
  crc = 0;
  size = 0;
  compressedSize = 0;
  private failure: Error | undefined;
  private readonly deflate: DeflateRaw;
  private readonly pumped: Promise<void>;

  constructor(level: number, queueBytes: number, sink: (chunk: Buffer) => void | Promise<void>) {
    const deflate = createDeflateRaw({ level, chunkSize: 64 * 1024, writableHighWaterMark: queueBytes } as Parameters<typeof createDeflateRaw>[0]);
    this.deflate = deflate;
    this.pumped = (async () => {
      for await (const out of deflate) {
        const chunk = out as Buffer;
        this.compressedSize += chunk.length;
        await sink(chunk);
      }
    })().catch((error: unknown) => {
      this.failure ??= asError(error);
      deflate.destroy();
    });
  }

  /** Resolves at once while the compressor's input queue has room. */
  async write(data: string | Uint8Array): Promise<void> {
    if (this.failure) throw this.failure;
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    if (bytes.length === 0) return;
    this.crc = crc32(bytes, this.crc);
    this.size += bytes.length;
    if (!this.deflate.write(bytes)) await writable(this.deflate);
    if (this.failure) throw this.failure;
  }

  /** Resolves once every compressed byte has reached the sink. */
  async end(): Promise<void> {
    if (this.failure) throw this.failure;
    this.deflate.end();
    await this.pumped;
    if (this.failure) throw this.failure;
  }

  destroy(): void {
    this.failure ??= new Error('zip entry abandoned');
    this.deflate.destroy();
  }
}

/** Writes one entry's uncompressed bytes. */
export interface ZipEntryWriter {
  /** Resolves at once while the compressor keeps up; waits when its queue is full. */
  write(data: string | Uint8Array): Promise<void>;
  /** Ends the entry; a streamed entry's last bytes are then in the writer's output. */
  close(): Promise<void>;
}

/** An entry compressed into a spool. Its name may be set any time before it is emitted. */
export interface SpooledEntryWriter extends ZipEntryWriter {
  name: string;
}

interface SpooledEntry {
  readonly writer: SpooledEntryWriter;
  readonly spool: Spool;
  readonly deflater: EntryDeflater;
  closed: boolean;
}

/**
 * A zip built entry by entry. Streamed entries are written to the output one after another;
 * spooled entries are compressed beside them into their spools and copied to the output by
 * emitSpooled(). The caller moves the output along with take() and ends with finish().
 */
export class ZipWriter {
  private readonly stamp: { time: number; day: number };
  private readonly queueBytes: number;
  private readonly written: Written[] = [];
  private output: Uint8Array[] = [];
  private offset = 0;
  private streaming: EntryDeflater | undefined;
  private readonly spooled: SpooledEntry[] = [];

  constructor(private readonly options: ZipOptions) {
    this.stamp = dosDateTime(options.date);
    this.queueBytes = options.queueBytes ?? 1024 * 1024;
  }

  private emit(bytes: Uint8Array): void {
    this.output.push(bytes);
    this.offset += bytes.length;
  }

  /** The output written since the last take(). */
  take(): Uint8Array[] {
    const out = this.output;
    this.output = [];
    return out;
  }

  /** Starts an entry whose bytes go to the output as they are compressed; one at a time. */
  openStreamed(entryName: string): ZipEntryWriter {
    if (this.streaming) throw new Error('zip writer: the previous streamed entry is still open');
    const name = Buffer.from(entryName, 'utf8');
    const start = this.offset;
    this.emit(localHeader(name, this.stamp));
    const deflater = new EntryDeflater(this.options.level, this.queueBytes, (chunk) => this.emit(chunk));
    this.streaming = deflater;
    return {
      write: (data) => deflater.write(data),
      close: async () => {
        await deflater.end();
        this.streaming = undefined;
        const record = writtenEntry(name, start, deflater);
        this.emit(dataDescriptor(record));
        this.written.push(record);
      },
    };
  }

  /**
   * Adds an entry whose bytes are at hand whole, stored as they are: for files that are compressed
   * already (photos, audio, video), where deflating costs time and saves nothing. Its CRC and
   * sizes go in its local header, so readers that cannot take a stored entry with a data
   * descriptor (Java's ZipInputStream) read it too.
   */
  addStored(entryName: string, data: Uint8Array): void {
    if (this.streaming) throw new Error('zip writer: a streamed entry is still open');
    if (data.length >= MAX_32) throw new Error('zip writer: a stored entry must be smaller than 4 GiB');
    const name = Buffer.from(entryName, 'utf8');
    const record: Written = { name, offset: this.offset, crc: crc32(data), size: data.length, compressedSize: data.length, stored: true };
    this.emit(localHeader(name, this.stamp, record));
    if (data.length > 0) this.emit(data);
    this.written.push(record);
  }

  /**
   * Starts a stored entry whose size and CRC-32 are known before its bytes arrive (a file kept
   * with them), so it is written chunk by chunk with both in its local header, as addStored does.
   * Closing it checks that the bytes written match what was declared.
   */
  openStored(entryName: string, declared: { readonly size: number; readonly crc: number }): ZipEntryWriter {
    if (this.streaming) throw new Error('zip writer: a streamed entry is still open');
    if (declared.size >= MAX_32) throw new Error('zip writer: a stored entry must be smaller than 4 GiB');
    const name = Buffer.from(entryName, 'utf8');
    const record: Written = { name, offset: this.offset, crc: declared.crc, size: declared.size, compressedSize: declared.size, stored: true };
    this.emit(localHeader(name, this.stamp, record));
    let size = 0;
    let crc = 0;
    let open = true;
    return {
      write: async (data) => {
        const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
        if (!open) throw new Error('zip writer: the stored entry is closed');
        size += bytes.length;
        if (size > declared.size) throw new Error(`zip writer: ${entryName} is longer than its declared ${declared.size} bytes`);
        crc = crc32(bytes, crc);
        if (bytes.length > 0) this.emit(bytes);
      },
      close: async () => {
        open = false;
        if (size !== declared.size || crc !== declared.crc) throw new Error(`zip writer: ${entryName} does not match its declared size and CRC-32`);
        this.written.push(record);
      },
    };
  }

  /** Starts an entry compressed into `spool`; emitSpooled() writes it out later. */
  openSpooled(spool: Spool, entryName = ''): SpooledEntryWriter {
    const deflater = new EntryDeflater(this.options.level, this.queueBytes, (chunk) => spool.write(chunk));
    const entry: SpooledEntry = {
      spool,
      deflater,
      closed: false,
      writer: {
        name: entryName,
        write: (data) => deflater.write(data),
        close: async () => {
          await deflater.end();
          entry.closed = true;
        },
      },
    };
    this.spooled.push(entry);
    return entry.writer;
  }

  /**
   * Copies the spooled entries to the output: in `order` when given (it must name every one),
   * otherwise in the order they were opened. Each must be closed.
   */
  async *emitSpooled(order?: readonly SpooledEntryWriter[]): AsyncGenerator<Uint8Array, void, undefined> {
    if (this.streaming) throw new Error('zip writer: a streamed entry is still open');
    const queue = order ? order.map((writer) => this.spooled.find((entry) => entry.writer === writer)) : [...this.spooled];
    if (queue.length !== this.spooled.length || new Set(queue).size !== queue.length) {
      throw new Error('zip writer: the order given does not name every spooled entry once');
    }
    for (const entry of queue) {
      if (!entry) continue; // cannot happen: checked above
      try {
        if (!entry.closed) throw new Error(`zip writer: spooled entry "${entry.writer.name}" was not closed`);
        const name = Buffer.from(entry.writer.name, 'utf8');
        const record = writtenEntry(name, this.offset, entry.deflater);
        this.emit(localHeader(name, this.stamp));
        yield* this.take();
        let copied = 0;
        for await (const chunk of entry.spool.read()) {
          copied += chunk.length;
          this.offset += chunk.length;
          yield chunk;
        }
        if (copied !== record.compressedSize) throw new Error(`zip writer: spool of "${entry.writer.name}" held ${copied} of ${record.compressedSize} bytes`);
        this.emit(dataDescriptor(record));
        this.written.push(record);
        yield* this.take();
      } finally {
        this.spooled.splice(this.spooled.indexOf(entry), 1);
        await entry.spool.dispose();
      }
    }
  }

  /** The central directory and end records; every entry must be closed and emitted. */
  finish(): Uint8Array {
    if (this.streaming || this.spooled.length > 0) throw new Error('zip writer: entries are still open or unemitted');
    const directory = Buffer.concat(this.written.map((entry) => centralHeader(entry, this.stamp)));
    const end = endRecords(this.written.length, this.offset, directory.length);
    this.offset += directory.length + end.length;
    return Buffer.concat([directory, end]);
  }

  /** Stops every compressor and releases the spools (after a failure or an early stop). */
  async dispose(): Promise<void> {
    this.streaming?.destroy();
    this.streaming = undefined;
    for (const entry of this.spooled.splice(0)) {
      entry.deflater.destroy();
      await entry.spool.dispose();
    }
  }
}
