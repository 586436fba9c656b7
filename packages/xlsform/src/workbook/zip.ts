// Reads the entries of a zip archive (an .xlsx is one) from memory. Only what
// spreadsheets use: stored and deflated entries, no encryption, no zip64.
import { inflateRawSync } from 'node:zlib';

export class ZipError extends Error {
  /** True for valid archives this reader does not handle (another reader may). */
  constructor(
    message: string,
    readonly unsupported = false,
  ) {
    super(message);
  }
}

export interface ZipEntry {
  name: string;
  read(): Uint8Array;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
/** Refuse entries that would inflate past this (a zip bomb, not a spreadsheet). */
const MAX_ENTRY_BYTES = 512 * 1024 * 1024;

export function readZip(bytes: Uint8Array): Map<string, ZipEntry> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let eocd = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 65535); i--) {
    if (view.getUint32(i, true) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new ZipError('not a zip archive (no end of central directory)');
  const count = view.getUint16(eocd + 10, true);
  let offset = view.getUint32(eocd + 16, true);
  const entries = new Map<string, ZipEntry>();
  const decoder = new TextDecoder('utf-8');
  for (let n = 0; n < count; n++) {
    if (offset + 46 > bytes.length || view.getUint32(offset, true) !== CENTRAL) throw new ZipError('corrupt central directory');
    const method = view.getUint16(offset + 10, true);
    const compressedSize = view.getUint32(offset + 20, true);
    const size = view.getUint32(offset + 24, true);
    const nameLength = view.getUint16(offset + 28, true);
    const extraLength = view.getUint16(offset + 30, true);
    const commentLength = view.getUint16(offset + 32, true);
    const localOffset = view.getUint32(offset + 42, true);
    const name = decoder.decode(bytes.subarray(offset + 46, offset + 46 + nameLength));
    offset += 46 + nameLength + extraLength + commentLength;
    if (compressedSize === 0xffffffff || size === 0xffffffff || localOffset === 0xffffffff) throw new ZipError('zip64 archives are not supported', true);
    entries.set(name, {
      name,
      read(): Uint8Array {
        if (localOffset + 30 > bytes.length || view.getUint32(localOffset, true) !== LOCAL) throw new ZipError(`corrupt entry ${name}`);
        const start = localOffset + 30 + view.getUint16(localOffset + 26, true) + view.getUint16(localOffset + 28, true);
        const data = bytes.subarray(start, start + compressedSize);
        if (data.length !== compressedSize) throw new ZipError(`truncated entry ${name}`);
        if (method === 0) return data;
        if (method !== 8) throw new ZipError(`unknown compression method ${method} for ${name}`);
        if (size > MAX_ENTRY_BYTES) throw new ZipError(`entry ${name} is too large`);
        try {
          return inflateRawSync(data, { maxOutputLength: Math.max(size, 1) });
        } catch (err) {
          throw new ZipError(`corrupt entry ${name}: ${err instanceof Error ? err.message : String(err)}`);
        }
      },
    });
  }
  return entries;
}
