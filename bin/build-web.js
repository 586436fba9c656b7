#!/usr/bin/env node
// Builds the web app (web/) into web/dist with Vite, when the build is missing or older than its
// sources (`--force` builds anyway: `npm run build:web`). `npm start` and the tests run it, in a
// process of its own so that the server never holds Vite. The new build is written beside the
// old one and swapped in, so a running server never reads a half-written folder.
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const web = join(root, 'web');
const dist = join(web, 'dist');
const stamp = join(dist, 'index.html');

/** The newest modification time among the app's sources and what decides how they build. */
function newestSource() {
  let newest = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'dist' || entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  walk(web);
  for (const file of ['package-lock.json', 'bin/build-web.js']) {
    const path = join(root, file);
    if (existsSync(path)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

export function isFresh() {
  return existsSync(stamp) && statSync(stamp).mtimeMs >= newestSource();
}

async function build() {
  const { build: viteBuild } = await import('vite');
  const partial = join(web, `.dist-${process.pid}`);
  const old = join(web, `.dist-old-${process.pid}`);
  try {
    await viteBuild({ configFile: join(web, 'vite.config.ts'), logLevel: 'warn', build: { outDir: partial, emptyOutDir: true } });
    if (existsSync(dist)) renameSync(dist, old);
    renameSync(partial, dist);
  } finally {
    rmSync(partial, { recursive: true, force: true });
    rmSync(old, { recursive: true, force: true });
  }
}

if (process.argv.includes('--force') || !isFresh()) {
  const started = Date.now();
  try {
    await build();
  } catch (error) {
    console.error(`building the web app failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
  if (!process.argv.includes('--quiet')) console.error(`web app built into web/dist in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
