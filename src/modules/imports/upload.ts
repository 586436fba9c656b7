// An import's uploaded file, spooled from the multipart stream to a temporary file (an import may
// be as large as the upload limit; memory must not be).
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import type {} from '@fastify/multipart';
import { ownedTempPrefix, sweepLeftovers } from '../../platform/temp-files.ts';

export interface SpooledFile {
  field: string;
  fileName: string;
  path: string;
  size: number;
  /** Larger than the upload limit (the spooled copy is cut short). */
  tooLarge: boolean;
}

export interface SpooledUpload {
  files: Map<string, SpooledFile>;
  /** Removes the temporary files. */
  discard(): Promise<void>;
}

/** A directory of this process's own (named after it, so that a start after a crash removes it). */
export async function makeTempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), ownedTempPrefix('gather-import')));
}

/** Removes the directories of processes that ended before they could (sweepLeftovers). */
export function sweepImportTempDirs(): Promise<string[]> {
  return sweepLeftovers(tmpdir());
}

function isTooLarge(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'FST_REQ_FILE_TOO_LARGE';
}

/** Spools the named file fields (other parts are drained and dropped). */
export async function spoolUpload(request: FastifyRequest, fields: readonly string[], maxBytes: number): Promise<SpooledUpload> {
  const dir = await makeTempDir();
  const files = new Map<string, SpooledFile>();
  const discard = () => rm(dir, { recursive: true, force: true });
  if (!request.isMultipart()) return { files, discard };
  try {
    let n = 0;
    for await (const part of request.parts({ limits: { fileSize: maxBytes, files: 10, fields: 100 } })) {
      if (part.type !== 'file') continue;
      if (!fields.includes(part.fieldname) || files.has(part.fieldname)) {
        part.file.resume();
        continue;
      }
      const path = join(dir, `upload-${n++}`);
      let size = 0;
      part.file.on('data', (chunk: Buffer) => {
        size += chunk.length;
      });
      let tooLarge = false;
      try {
        await pipeline(part.file, createWriteStream(path));
      } catch (error) {
        if (!isTooLarge(error)) throw error;
        tooLarge = true;
      }
      files.set(part.fieldname, { field: part.fieldname, fileName: part.filename, path, size, tooLarge: tooLarge || part.file.truncated });
    }
  } catch (error) {
    if (!isTooLarge(error)) {
      await discard();
      throw error;
    }
  }
  return { files, discard };
}
