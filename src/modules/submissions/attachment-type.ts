// The content type a record's file is stored and served with. Devices and scripts often post
// files as application/octet-stream; when the file's name and its first bytes agree on a type
// (the same judgement form media get, src/modules/metadata/upload-check.ts) that type is kept
// instead, otherwise the sender's claim is.
import { open } from 'node:fs/promises';
import { SIGNATURE_BYTES, typeShownBy } from '../metadata/upload-check.ts';
import type { BlobContent } from '../blobs/repository.ts';

async function firstBytes(content: BlobContent): Promise<Uint8Array> {
  if (content instanceof Uint8Array) return content.subarray(0, SIGNATURE_BYTES);
  const file = await open(content.path, 'r');
  try {
    const buffer = Buffer.alloc(SIGNATURE_BYTES);
    const { bytesRead } = await file.read(buffer, 0, SIGNATURE_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

export async function attachmentContentType(name: string, claimed: string, content: BlobContent): Promise<string> {
  return typeShownBy(name, await firstBytes(content)) ?? claimed;
}
