// What an uploaded file is, by its first bytes rather than its name: a zip (.xlsx), an OLE
// compound file (.xls), or text that may be CSV. Binary content posing as CSV is refused.
import { open } from 'node:fs/promises';

export type FileKind = 'csv' | 'xlsx' | 'xls' | 'binary' | 'empty';

const ZIP = [0x50, 0x4b, 0x03, 0x04];
const OLE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

function startsWith(bytes: Uint8Array, magic: readonly number[]): boolean {
  return magic.every((b, i) => bytes[i] === b);
}

/** Text files have no NUL bytes and few other control characters. */
function looksLikeText(bytes: Uint8Array): boolean {
  let control = 0;
  for (const byte of bytes) {
    if (byte === 0) return false;
    if (byte < 0x09 || (byte > 0x0d && byte < 0x20)) control++;
  }
  return control <= bytes.length / 100;
}

export function sniffBytes(head: Uint8Array): FileKind {
  if (head.length === 0) return 'empty';
  if (startsWith(head, ZIP)) return 'xlsx';
  if (startsWith(head, OLE)) return 'xls';
  return looksLikeText(head) ? 'csv' : 'binary';
}

export async function sniffFile(path: string): Promise<FileKind> {
  const handle = await open(path, 'r');
  try {
    const head = new Uint8Array(8192);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return sniffBytes(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}
