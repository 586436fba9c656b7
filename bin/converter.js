// The XLSForm converter's own bundle for `gather xls2xform`: packages/xlsform alone, without the
// server (bundling and loading the server took over a second per call; the converter needs none
// of it). It is built by esbuild the first time and again whenever a source changes, and lives
// under node_modules so that its imports of packages resolve as the sources' do.
//
// The bundle is a script run through node:vm with V8's code cache beside it, not an ES module:
// parsing and compiling the converter's functions were a large part of a short command, and
// node 20 offers no code cache to ES modules. The cache is only ever an optimisation: missing,
// stale (another bundle, node or V8 flags: V8 rejects it) or unwritable, the script compiles
// from source as before.
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Script } from 'node:vm';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const sources = join(root, 'packages/xlsform/src');
const entry = join(sources, 'cli.ts');
const cacheDir = join(root, 'node_modules/.cache/gather');

/**
 * Path, size and modification time of every source file: the bundle's name is their hash. Two
 * 32-bit FNV-1a hashes, not node:crypto: loading node:crypto costs the command more than hashing
 * these few kilobytes of text, and the name only has to change when a source does.
 */
function fingerprint() {
  let text = '';
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (!entry.name.endsWith('.test.ts')) {
        const stat = statSync(path);
        text += `${relative(sources, path)}\0${stat.size}\0${stat.mtimeMs}\n`;
      }
    }
  };
  walk(sources);
  return fnv1a(text, 0x811c9dc5) + fnv1a(text, 0x050c5d1f);
}

/** 32-bit FNV-1a of a string's UTF-16 code units from the given offset basis, as 8 hex digits. */
function fnv1a(text, basis) {
  let h = basis;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

/**
 * The converter bundle's path, built when absent; undefined when it cannot be written (a
 * read-only install: the caller then runs the sources another way).
 */
export async function converterBundle() {
  const name = `xls2xform-${fingerprint()}`;
  const file = join(cacheDir, `${name}.cjs`);
  if (existsSync(file)) return file;
  try {
    const { buildSync } = await import('esbuild');
    const code = buildSync({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      packages: 'external',
      // The script is given its own URL (loadConverter) where the sources read import.meta.url.
      define: { 'import.meta.url': 'bundleUrl' },
      write: false,
      logLevel: 'error',
    }).outputFiles[0].contents;
    mkdirSync(cacheDir, { recursive: true });
    // Written aside and renamed: two calls at once never read a half-written file.
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, code);
    renameSync(partial, file);
    for (const old of readdirSync(cacheDir)) {
      if (old.startsWith('xls2xform-') && !old.startsWith(`${name}.`)) rmSync(join(cacheDir, old), { force: true });
    }
    return file;
  } catch (error) {
    if (error instanceof Error && 'code' in error && ['EACCES', 'EROFS', 'EPERM'].includes(String(error.code))) return undefined;
    throw error;
  }
}

/**
 * The converter bundle's command, compiled with the code cache when there is a usable one.
 * `saveCache` writes one, when there was none or V8 refused it, once the command has run (so
 * that it holds the functions compiled while converting, not only the top level); a cache that
 * cannot be written is ignored.
 */
export function loadConverter(file) {
  const cacheFile = `${file.slice(0, -'.cjs'.length)}.${process.version}-${process.arch}.cache`;
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  // The wrapper stays on the source's first line so that stack traces keep their line numbers.
  const source = `(function (exports, require, module, __filename, __dirname, bundleUrl) {${readFileSync(file, 'utf8')}\n})`;
  const script = new Script(source, { filename: file, ...(cachedData ? { cachedData } : {}) });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file), pathToFileURL(file).href);
  const saveCache = () => {
    if (cachedData && !script.cachedDataRejected) return;
    const partial = `${cacheFile}.${process.pid}.tmp`;
    try {
      writeFileSync(partial, script.createCachedData());
      renameSync(partial, cacheFile);
    } catch {
      rmSync(partial, { force: true });
    }
  };
  return { runXls2xform: module.exports.runXls2xform, saveCache };
}
