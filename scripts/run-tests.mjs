#!/usr/bin/env node
// Runs every *.test.ts file under test/, src/ and packages/ with node's test runner.
// Node 20's `node --test` takes no globs and silently passes when it finds no .ts files,
// so the files are listed here explicitly and an empty list is an error.
// For more than one file it first builds one migrated database (test/db-template.ts) that each
// file's database starts from, instead of every file creating and migrating its own;
// TEST_TEMPLATE=0 turns that off.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { compileTests } from './compile-tests.mjs';
import { buildServerBundle, buildTemplate, removeTemplate, selectFiles, testFiles } from './test-files.mjs';
import { needsOwnProcess, writeBatches } from './test-batches.mjs';

const filter = process.argv.slice(2);

// The files that take longest (crashes and restarts of real server processes, Chromium) start
// first, so that two files at a time end together instead of one long file running alone last
// (compiled runs only: node --test runs the files it is given in the order of their paths).
const startFirst = ['test/fault/', 'test/browser/', 'test/jobs/', 'test/migrations/', 'test/readme-tour'];
const rank = (file) => {
  const index = startFirst.findIndex((prefix) => file.startsWith(prefix));
  return index === -1 ? startFirst.length : index;
};
const rootRank = (file) => ['test/', 'src/', 'packages/'].findIndex((root) => file.startsWith(root));
const files = testFiles().sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
const selected = selectFiles(files, filter);
if (selected.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}

const env = { ...process.env, NODE_ENV: 'test' };
// The files that start server processes all run on their own; the bundle builds beside the template.
const bundling = selected.some(needsOwnProcess) && !env.GATHER_BUNDLE ? buildServerBundle(env) : Promise.resolve({});
let template;
if (selected.length > 1 && process.env.TEST_TEMPLATE !== '0') {
  const started = Date.now();
  template = buildTemplate(env, 'gather-test-template-');
  if (!template) {
    console.error('run-tests: building the migrated template database failed');
    process.exit(1);
  }
  console.log(`run-tests: migrated template database built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

function cleanUp() {
  rmSync(compiledDir, { recursive: true, force: true });
  if (template) removeTemplate(env, template);
}

// Three processes at a time on two cores: the files on their own spend much of their time
// waiting (on a server they started, a timeout, Chromium), and with two at a time a core was idle
// much of the run (bench/RESULTS.md, 2026-11-28).
const concurrency = process.env.TEST_CONCURRENCY ?? '3';
// TEST_TIMINGS=FILE also writes each test file's time there (scripts/test-timings.mjs).
const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout'];
if (process.env.TEST_TIMINGS) {
  reporters.push('--test-reporter=./scripts/test-timings.mjs', `--test-reporter-destination=${process.env.TEST_TIMINGS}`);
}
// The files run compiled (scripts/compile-tests.mjs); TEST_COMPILE=0 runs the sources through tsx.
let runFiles = selected;
let loader = ['--import', 'tsx'];
// A directory per run: two runs in one checkout (PGlite and PostgreSQL at once) keep their own.
const compiledDir = join('node_modules', '.cache', 'gather-tests', String(process.pid));
if (process.env.TEST_COMPILE !== '0') {
  const started = Date.now();
  // Files that can share a process run in batches of TEST_BATCH_SIZE (scripts/test-batches.mjs);
  // TEST_BATCH_SIZE=1 gives every file a process of its own.
  const batchSize = Number(process.env.TEST_BATCH_SIZE ?? '8');
  const mayShare = batchSize > 1 ? selected.filter((file) => !needsOwnProcess(file)) : [];
  // One file alone gains nothing from a batch. Files under test/ start servers and come first,
  // so the light unit files of src/ and packages/ are what runs last.
  const shared = mayShare.length > 1 ? [...mayShare].sort((a, b) => rootRank(a) - rootRank(b)) : [];
  const own = selected.filter((file) => !shared.includes(file));
  const batches = [];
  for (let i = 0; i < shared.length; i += batchSize) batches.push(shared.slice(i, i + batchSize));
  // The run's order: the long files on their own (startFirst), then the batches with the other
  // files on their own between them. Those mostly wait (on a timeout, a server they started), and
  // several of them at once left a core idle; between batches, a batch's work fills the wait.
  const longFirst = own.filter((file) => rank(file) < startFirst.length);
  const waiting = own.filter((file) => rank(file) === startFirst.length);
  const order = [...longFirst.map((file) => ({ file }))];
  for (let i = 0; i < Math.max(batches.length, waiting.length); i++) {
    if (i < batches.length) order.push({ batch: i });
    if (i < waiting.length) order.push({ file: waiting[i] });
  }
  // node --test runs its files in the order of their paths, so each runs from a folder named by
  // its place in that order.
  const place = (index) => String(index).padStart(4, '0');
  const folders = new Map(order.flatMap((item, index) => ('file' in item ? [[item.file, place(index)]] : [])));
  const batchFolders = order.flatMap((item, index) => ('batch' in item ? [place(index)] : []));
  let compiled;
  try {
    compiled = await compileTests(process.cwd(), selected, compiledDir, shared, (file) => folders.get(file) ?? 'batched');
  } catch (error) {
    cleanUp();
    console.error('run-tests: compiling the test files failed', error);
    process.exit(1);
  }
  loader = ['--enable-source-maps'];
  console.log(`run-tests: ${selected.length} test files compiled in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const entries = await writeBatches(
    process.cwd(),
    compiledDir,
    'scripts/test-batch-shim.mjs',
    batches.map((batch, index) => ({ folder: batchFolders[index], files: batch.map((file) => [file, compiled.get(file)]) })),
  );
  runFiles = [...own.map((file) => compiled.get(file)), ...entries];
  if (batches.length) console.log(`run-tests: ${shared.length} files in ${batches.length} batches, ${own.length} on their own`);
}
// The test runner passes its own node flags on to the file processes. --no-opt: a file's process
// lives seconds, and TurboFan's background compiles of what gets warm while it starts (module
// loading, Fastify compiling every route's schema, PGlite's glue code) cost more CPU than the
// optimised code gives back before the process ends, even in the files that run longest in
// process (bench/RESULTS.md, 2026-11-28). The code does the same without it; servers and
// browsers the tests start as processes of their own run with V8's defaults, as in production.
const nodeFlags = process.env.TEST_NODE_FLAGS === undefined ? ['--no-opt'] : process.env.TEST_NODE_FLAGS.split(' ').filter(Boolean);
const bundle = await bundling;
const child = spawn(
  process.execPath,
  [...nodeFlags, ...loader, '--test', `--test-concurrency=${concurrency}`, ...reporters, ...runFiles],
  { stdio: 'inherit', env: { ...env, ...template?.vars, ...bundle } },
);
// Ctrl-C reaches the test runner too (same process group); wait for it, then clean up.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  cleanUp();
  process.exit(code ?? (signal ? 1 : 0));
});
