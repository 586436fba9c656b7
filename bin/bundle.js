#!/usr/bin/env node
// Builds the server's bundle for bin/gather.js and prints its path. It runs in a process of its
// own so that the server never holds esbuild or the bundles' text: building in the server's own
// process left it about 18 MB larger for its whole life.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

/**
 * Packages bundled in rather than loaded from node_modules: both are ES modules of hundreds of
 * small files each, and a module loaded on its own holds its
 * source and records for the life of the process. Bundled, they are only the code the server
 * uses: less live heap at start (bench/RESULTS.md, 2026-11-28).
 */
const INLINE = new Set(['kysely', 'typebox']);

/** Every other package is imported from node_modules, as esbuild's `packages: 'external'` does. */
const packagesExternal = {
  name: 'packages-external',
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) => {
      const name = args.path.split('/').slice(0, args.path.startsWith('@') ? 2 : 1).join('/');
      return name.startsWith('node:') || !INLINE.has(name) ? { path: args.path, external: true } : undefined;
    });
  },
};

/**
 * The bundle's text with every character above U+00FF written as a `\uXXXX` escape. V8 keeps a
 * module's source for the life of the process, as one byte a character only when every character
 * fits in one: a single `…` left in a comment (esbuild escapes strings, regular expressions and
 * names, not comments) makes the whole bundle's source two bytes a character. In a comment the escape is
 * text; anywhere else it means the character it replaces.
 */
function oneByte(text) {
  return text.replace(/[^\x00-\xff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The bundle's path, written when absent. It lives under node_modules so that its imports of
 * packages resolve as the sources' do; its name is its content hash, so processes starting at
 * once (cluster forks) never read a half-written file.
 */
async function bundle() {
  const bundleOf = async (entry) =>
    (await build({
      entryPoints: [join(root, entry)],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      plugins: [packagesExternal],
      write: false,
      logLevel: 'error',
    })).outputFiles[0].text;
  const code = oneByte(await bundleOf('src/cli.ts'));
  // The CSV export's helper threads run a module of their own, found beside the bundle under the
  // bundle's name (src/modules/exports/csv-threads.ts).
  const helperCode = oneByte(await bundleOf('src/modules/exports/csv-helper.ts'));
  const dir = join(root, 'node_modules/.cache/gather');
  const hash = createHash('sha256').update(code).update(helperCode).digest('hex').slice(0, 16);
  const file = join(dir, `gather-${hash}.mjs`);
  const helperFile = join(dir, `gather-${hash}-csv-helper.mjs`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    // The helper first: a bundle that exists always has its helper.
    for (const [path, contents] of [[helperFile, helperCode], [file, code]]) {
      const partial = `${path}.${process.pid}.tmp`;
      writeFileSync(partial, contents);
      renameSync(partial, path);
    }
    // Earlier versions' bundles: a process still running one has already read it.
    for (const old of readdirSync(dir)) {
      const path = join(dir, old);
      if (old.startsWith('gather-') && path !== file && path !== helperFile) rmSync(path, { force: true });
    }
  }
  return file;
}

try {
  process.stdout.write(await bundle());
} catch (error) {
  // A read-only install cannot write the bundle: bin/gather.js then runs the sources through tsx.
  if (error instanceof Error && 'code' in error && ['EACCES', 'EROFS', 'EPERM'].includes(String(error.code))) process.exit(3);
  throw error;
}
