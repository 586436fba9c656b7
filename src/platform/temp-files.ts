// Names for temporary files and directories that say which process made them
// (`prefix@host@processTag@…`), so that a process starting after a crash removes what a dead
// process left behind (killed before its own clean-up ran) and never what a live one is using,
// even when several processes share the directory.
import { readdir, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ownProcessTag, processIsGone } from './process-identity.ts';

/** The start of a temporary name owned by this process; the caller adds something unique. */
export function ownedTempPrefix(prefix: string): string {
  return `${prefix}@${hostname()}@${ownProcessTag()}@`;
}

/** True when `name` was made by ownedTempPrefix on this host for a process that has ended. */
export function isLeftover(name: string): boolean {
  const parts = name.split('@');
  if (parts.length < 4) return false;
  const [, host, tag] = parts;
  return host === hostname() && tag !== undefined && tag !== ownProcessTag() && processIsGone(tag);
}

/** Removes the leftovers of dead processes in `dir` (files or directories); answers their names. */
export async function sweepLeftovers(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!isLeftover(name)) continue;
    await rm(join(dir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
