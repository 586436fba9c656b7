#!/usr/bin/env node
// Entry point for `gather` / `npm start`. The TypeScript sources are bundled into one ES module
// by esbuild on every start (a few hundred milliseconds) and that module runs. Running them
// through tsx's loader instead keeps a second JavaScript engine alive in a loader thread for the
// life of the process: about 70 MB of resident memory for nothing once the server is up.
// GATHER_TSX=1 runs the sources through tsx (stack traces then point into the .ts files).
import cluster from 'node:cluster';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

/**
 * The bundle's path, written when absent. It lives under node_modules so that its imports of
 * packages resolve as the sources' do; its name is its content hash, so processes starting at
 * once (cluster forks) never read a half-written file.
 */
async function bundle() {
  // A cluster's HTTP processes (WEB_PROCESSES) run this file again: they load the primary's bundle.
  const built = process.env.GATHER_BUNDLE;
  if (cluster.isWorker && built && existsSync(built)) return built;
  const { buildSync } = await import('esbuild');
  const result = buildSync({
    entryPoints: [join(root, 'src/cli.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'error',
  });
  const code = result.outputFiles[0].contents;
  const dir = join(root, 'node_modules/.cache/gather');
  const file = join(dir, `gather-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, code);
    renameSync(partial, file);
    // Earlier versions' bundles: a process still running one has already read it.
    for (const old of readdirSync(dir)) if (old.startsWith('gather-') && join(dir, old) !== file) rmSync(join(dir, old), { force: true });
  }
  process.env.GATHER_BUNDLE = file;
  return file;
}

async function load() {
  if (process.env.GATHER_TSX !== '1') {
    let file;
    try {
      file = await bundle();
    } catch (error) {
      // A read-only install cannot write the bundle: the sources still run through tsx.
      if (!(error instanceof Error && 'code' in error && ['EACCES', 'EROFS', 'EPERM'].includes(String(error.code)))) throw error;
    }
    if (file) return import(pathToFileURL(file).href);
  }
  const { register } = await import('tsx/esm/api');
  register();
  return import('../src/cli.ts');
}

const { runCli } = await load();
await runCli(process.argv.slice(2));
