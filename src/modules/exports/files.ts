// Export files on disk under DATA_DIR/exports. They can be hundreds of megabytes, so they are
// streamed in and out, never held whole. A file is written under a temporary name and renamed
// once complete, so a reader never sees half a file and a crash leaves only a `.part` behind,
// named after its process so that the next start removes it (sweepExportLeftovers).
import { createReadStream, createWriteStream, type ReadStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { ownedTempPrefix, sweepLeftovers } from '../../platform/temp-files.ts';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export function exportsRoot(dataDir: string): string {
  return resolve(dataDir, 'exports');
}

/** The absolute path of a stored relative path; refuses anything that would leave the root. */
function absolute(dataDir: string, relativePath: string): string {
  const root = exportsRoot(dataDir);
  const path = resolve(root, relativePath);
  if (!path.startsWith(root + sep)) throw new Error(`export path "${relativePath}" leaves the exports directory`);
  return path;
}

/** Where an export's file goes: one directory per form, the export's id in the name. */
export function exportFilePath(formId: number, exportId: number, extension: string): string {
  return join(String(formId), `${exportId}.${extension}`);
}

/**
 * Writes the chunks to `relativePath` and answers the byte count. The signal stops the write
 * (the partial file is removed).
 */
export async function writeExportFile(
  dataDir: string,
  relativePath: string,
  chunks: AsyncIterable<Uint8Array>,
  signal?: AbortSignal,
): Promise<number> {
  const target = absolute(dataDir, relativePath);
  await mkdir(dirname(target), { recursive: true });
  const temporary = join(dirname(target), `${ownedTempPrefix(basename(target))}${randomBytes(4).toString('hex')}.part`);
  try {
    await pipeline(Readable.from(chunks, { objectMode: false }), createWriteStream(temporary), signal ? { signal } : {});
    const { size } = await stat(temporary);
    await rename(temporary, target);
    return size;
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** A stream of the stored file, or undefined when it is gone. */
export async function openExportFile(dataDir: string, relativePath: string): Promise<{ stream: ReadStream; size: number } | undefined> {
  const path = absolute(dataDir, relativePath);
  try {
    const { size } = await stat(path);
    return { stream: createReadStream(path), size };
  } catch {
    return undefined;
  }
}

export async function exportFileExists(dataDir: string, relativePath: string): Promise<boolean> {
  try {
    return (await stat(absolute(dataDir, relativePath))).isFile();
  } catch {
    return false;
  }
}

export async function removeExportFile(dataDir: string, relativePath: string | null): Promise<void> {
  if (!relativePath) return;
  await rm(absolute(dataDir, relativePath), { force: true });
}

/** Removes these files (after the transaction that deleted their exports committed). */
export async function removeExportFiles(dataDir: string, relativePaths: ReadonlyArray<string | null>): Promise<void> {
  for (const path of relativePaths) await removeExportFile(dataDir, path);
}

/**
 * Removes the `.part` files that processes which have ended (killed mid-export) left under
 * DATA_DIR/exports, and the spools they left in DATA_DIR/tmp; a live process's are kept.
 */
export async function sweepExportLeftovers(dataDir: string): Promise<string[]> {
  const root = exportsRoot(dataDir);
  const removed = await sweepLeftovers(join(dataDir, 'tmp'));
  let forms: string[];
  try {
    forms = await readdir(root);
  } catch {
    return removed;
  }
  for (const form of forms) {
    if (/^\d+$/.test(form)) removed.push(...(await sweepLeftovers(join(root, form))));
  }
  return removed;
}
