// Batches of compiled test files for run-tests.mjs, each batch run by one process. A process of
// its own costs a test file about a second of CPU before its first test (node, the test runner,
// loading the app's modules, compiling PGlite's WebAssembly), paid again by every file; files in
// one batch pay it once. Each file still gets its own database and server from its `before`
// hooks, and its top-level hooks still run around its own tests only (scripts/test-batch-shim.mjs).
import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Files that keep a process of their own: they start and kill real processes, hold the
 * process's memory or signals, or wait out real time, so they neither share well nor gain much.
 */
const ownProcess = [
  'test/fault/',
  'test/browser/',
  'test/jobs/',
  'test/migrations/',
  'test/readme-tour',
  'test/cli-xls2xform',
  'test/database-bootstrap',
  'test/api/imports-crash',
  'test/api/submission-crash',
  'test/api/web-processes',
  'test/api/zip-bombs',
  'test/api/request-timeouts',
  'test/api/login-timing',
  'test/api/pglite-upkeep',
  'test/api/restservices',
  'src/platform/dir-lock',
];

export function needsOwnProcess(file) {
  return ownProcess.some((prefix) => file.startsWith(prefix));
}

function entrySource(shimUrl, files) {
  const list = JSON.stringify(files, null, 2);
  return `import { describe, test } from 'node:test';
import { recordInto, replay } from ${JSON.stringify(shimUrl)};
const files = ${list};
const loaded = [];
for (const [name, url] of files) {
  const calls = [];
  recordInto(calls);
  try {
    await import(url);
    loaded.push([name, () => replay(calls)]);
  } catch (error) {
    loaded.push([name, () => test('loads', () => { throw error; })]);
  } finally {
    recordInto(null);
  }
}
for (const [name, register] of loaded) describe(name, register);
`;
}

/**
 * Writes one entry module per batch into its folder under `outDir` and returns their paths,
 * relative to `root`. Each batch names its folder and the [source file, compiled file] pairs it
 * runs, in order.
 */
export async function writeBatches(root, outDir, shimPath, batches) {
  const shimUrl = pathToFileURL(join(root, shimPath)).href;
  const entries = [];
  for (const [index, batch] of batches.entries()) {
    const files = batch.files.map(([source, compiled]) => [source, pathToFileURL(join(root, compiled)).href]);
    await mkdir(join(outDir, batch.folder), { recursive: true });
    const entry = join(outDir, batch.folder, `batch-${index + 1}.test.mjs`);
    await writeFile(entry, entrySource(shimUrl, files));
    entries.push(relative(root, entry));
  }
  return entries;
}
