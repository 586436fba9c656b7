// The directory holding Gather's package.json. Found by walking up, because the code runs both
// from its sources (src/…) and from the bundle bin/gather.js writes (node_modules/.cache/gather).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function isGatherRoot(dir: string): boolean {
  const manifest = join(dir, 'package.json');
  if (!existsSync(manifest)) return false;
  try {
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'gather';
  } catch {
    return false;
  }
}

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (isGatherRoot(dir)) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`Gather's package.json was not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

export const PROJECT_ROOT = findRoot();
