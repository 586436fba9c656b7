// Uploaded files, content-addressed by SHA-256 and kept in the database so that a write of a form
// or a record and its files commit or roll back together on both backends.
//
// A file is stored as chunks of CHUNK_BYTES (blob_chunks, migration 0024), written and read one
// statement per chunk: storing or serving a 100 MB photo holds about one chunk in memory, not
// the file (a single bytea value was held about eleven times over on PGlite).
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { sql } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';

export const CHUNK_BYTES = 256 * 1024;

/** A file's content: bytes at hand, or a file on disk that is read a chunk at a time. */
export type BlobContent = Uint8Array | { readonly path: string };

export interface BlobInfo {
  readonly sha256: string;
  readonly content_type: string;
  readonly size: number;
  readonly crc32: number | null;
}

/** The content's chunks in order; a file on disk is read one chunk at a time. */
async function* contentChunks(content: BlobContent): AsyncGenerator<Uint8Array, void, undefined> {
  if (content instanceof Uint8Array) {
    for (let start = 0; start < content.byteLength; start += CHUNK_BYTES) yield content.subarray(start, start + CHUNK_BYTES);
    return;
  }
  const file = await open(content.path, 'r');
  try {
    for (;;) {
      const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
      let filled = 0;
      while (filled < CHUNK_BYTES) {
        const { bytesRead } = await file.read(buffer, filled, CHUNK_BYTES - filled, null);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      if (filled > 0) yield buffer.subarray(0, filled);
      if (filled < CHUNK_BYTES) return;
    }
  } finally {
    await file.close();
  }
}

/** SHA-256, CRC-32 and size of the content, in one pass. */
async function digest(content: BlobContent): Promise<{ sha256: string; crc: number; size: number }> {
  const hash = createHash('sha256');
  let crc = 0;
  let size = 0;
  for await (const chunk of contentChunks(content)) {
    hash.update(chunk);
    crc = crc32(chunk, crc);
    size += chunk.byteLength;
  }
  return { sha256: hash.digest('hex'), crc, size };
}

/** Stores the content once (a file already stored is not written again) and returns its SHA-256. */
export async function putBlob(db: DbOrTx, content: BlobContent, contentType: string): Promise<string> {
  const { sha256, crc, size } = await digest(content);
  const inserted = await db
    .insertInto('blobs')
    .values({ sha256, content_type: contentType, size, crc32: crc })
    .onConflict((oc) => oc.column('sha256').doNothing())
    .returning('sha256')
    .executeTakeFirst();
  if (!inserted) return sha256;
  let seq = 0;
  for await (const chunk of contentChunks(content)) {
    await db.insertInto('blob_chunks').values({ sha256, seq, data: chunk }).execute();
    seq += 1;
  }
  // The file changed on disk between the two reads: storing it would break content addressing.
  if (seq !== Math.ceil(size / CHUNK_BYTES)) throw new Error(`blob ${sha256}: content changed while it was stored`);
  return sha256;
}

export async function findBlob(db: DbOrTx, sha256: string): Promise<BlobInfo | undefined> {
  return db.selectFrom('blobs').select(['sha256', 'content_type', 'size', 'crc32']).where('sha256', '=', sha256).executeTakeFirst();
}

/**
 * Reads are sliced finer than chunks are written: each answer's text, its bytes and the buffers
 * the driver makes of them stay small enough for V8 to reclaim young, so serving a 96 MB file
 * raises the server's peak by a few MB instead of up to 66 MB (test/fault/memory-bodies).
 * PostgreSQL reads only the TOAST slices a substring needs from an uncompressed (EXTERNAL) value.
 */
const READ_SLICE_BYTES = 32 * 1024;

/** The stored file's bytes in order, a slice per query; a missing chunk is an error, never a short file. */
export async function* readBlobChunks(db: DbOrTx, blob: Pick<BlobInfo, 'sha256' | 'size'>): AsyncGenerator<Uint8Array, void, undefined> {
  const count = Math.ceil(blob.size / CHUNK_BYTES);
  for (let seq = 0; seq < count; seq += 1) {
    const chunkBytes = Math.min(CHUNK_BYTES, blob.size - seq * CHUNK_BYTES);
    for (let offset = 0; offset < chunkBytes; offset += READ_SLICE_BYTES) {
      const row = await db
        .selectFrom('blob_chunks')
        .select(sql<Uint8Array>`substring(data FROM ${offset + 1} FOR ${READ_SLICE_BYTES})`.as('data'))
        .where('sha256', '=', blob.sha256)
        .where('seq', '=', seq)
        .executeTakeFirst();
      if (!row) throw new Error(`blob ${blob.sha256}: chunk ${seq} is missing`);
      yield row.data;
    }
  }
}

/** A file's CRC-32, computed from its chunks (and kept) for files stored before it was recorded. */
export async function blobCrc32(db: DbOrTx, blob: BlobInfo): Promise<number> {
  if (blob.crc32 !== null) return blob.crc32;
  let crc = 0;
  for await (const chunk of readBlobChunks(db, blob)) crc = crc32(chunk, crc);
  await db.updateTable('blobs').set({ crc32: crc }).where('sha256', '=', blob.sha256).execute();
  return crc;
}

/**
 * The whole file in memory: only for files that are bounded small and must be parsed whole
 * (XLSForms, OSM answers). Files served to clients are streamed with readBlobChunks.
 */
export async function getBlob(db: DbOrTx, sha256: string): Promise<{ data: Uint8Array; content_type: string } | undefined> {
  const blob = await findBlob(db, sha256);
  if (!blob) return undefined;
  const data = new Uint8Array(blob.size);
  let offset = 0;
  for await (const chunk of readBlobChunks(db, blob)) {
    data.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { data, content_type: blob.content_type };
}
