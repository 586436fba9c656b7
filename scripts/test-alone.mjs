#!/usr/bin/env node
// Checks that each test passes on its own, without the tests before it in its file (issue 23:
// "each test independent of the others in its file"). For every selected file it runs the file
// once to list its tests, then each test alone (`--test-name-pattern`, which still runs the
// file's and the enclosing suites' hooks), and prints the tests that fail alone.
//
//   npm run test:alone -- test/api/projects test/api/forms     (path fragments, as npm test takes)
//   TEST_ALONE_CONCURRENCY=2 (default) runs that many single-test processes at once.
//   --reverse: a quicker screen, one process a file running its tests in reverse order (inside
//   each suite too, hooks first); a test that needs what an earlier one left behind fails.
//
// A test's subtests (t.test inside it) belong to it and run with it. Skipped tests are left out.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawn } from 'node:child_process';
import { compileTests } from './compile-tests.mjs';
import { buildServerBundle, buildTemplate, removeTemplate, selectFiles, testFiles } from './test-files.mjs';

const reverse = process.argv.includes('--reverse');
const filters = process.argv.slice(2).filter((arg) => arg !== '--reverse');
const concurrency = Number(process.env.TEST_ALONE_CONCURRENCY ?? '2');

const selected = selectFiles(testFiles(), filters);
if (selected.length === 0) {
  console.error('test-alone: no test files match');
  process.exit(1);
}

const env = { ...process.env, NODE_ENV: 'test' };
const bundling = env.GATHER_BUNDLE ? Promise.resolve({}) : buildServerBundle(env);
const template = buildTemplate(env, 'gather-test-alone-');
if (!template) {
  console.error('test-alone: building the migrated template database failed');
  process.exit(1);
}
const compiledDir = join('node_modules', '.cache', 'gather-test-alone', String(process.pid));
// Reversed runs import node:test through the batch shim, which records the calls to replay.
Object.assign(template.vars, await bundling);
const compiled = await compileTests(process.cwd(), selected, compiledDir, reverse ? selected : []);
const shimUrl = pathToFileURL(join(process.cwd(), 'scripts', 'test-batch-shim.mjs')).href;

/** An entry module that loads the compiled file and replays its tests in reverse order. */
function reversedEntry(file) {
  const entry = join(dirname(file), 'reversed', file.split('/').pop());
  mkdirSync(dirname(entry), { recursive: true });
  writeFileSync(
    entry,
    `import { recordInto, replayReversed } from ${JSON.stringify(shimUrl)};
const calls = [];
recordInto(calls);
try {
  await import(${JSON.stringify(pathToFileURL(join(process.cwd(), file)).href)});
} finally {
  recordInto(null);
}
replayReversed(calls);
`,
  );
  return entry;
}

function cleanUp() {
  rmSync(compiledDir, { recursive: true, force: true });
  removeTemplate(env, template);
}

// Stopped midway (Ctrl-C, kill), it still removes its template and compiled files.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    cleanUp();
    process.exit(130);
  });
}

const reporter = new URL('./test-alone-reporter.mjs', import.meta.url).pathname;

/** Runs a compiled file under node --test; resolves with the reporter's events. */
function runFile(file, pattern) {
  return new Promise((resolve) => {
    const args = ['--no-opt', '--enable-source-maps', '--test', `--test-reporter=${reporter}`];
    if (pattern) args.push(`--test-name-pattern=${pattern}`);
    const child = spawn(process.execPath, [...args, file], { env: { ...env, ...template.vars }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('exit', (code) => {
      const events = out.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
      resolve({ code, events, err });
    });
  });
}

/**
 * The tests to run alone: events arrive children first, so each event at nesting n takes the
 * events gathered at n + 1 since as its children. Tests are units; suites are opened.
 */
function units(events) {
  const gathered = [];
  for (const event of events) {
    const node = { ...event, children: gathered[event.nesting + 1] ?? [] };
    gathered[event.nesting + 1] = [];
    (gathered[event.nesting] ??= []).push(node);
  }
  const out = [];
  const open = (nodes, path) => {
    for (const node of nodes) {
      if (node.suite) open(node.children, [...path, node.name]);
      else if (!node.skip) out.push({ name: node.name, path: [...path, node.name], failedInFile: node.failed });
    }
  };
  open(gathered[0] ?? [], []);
  return out;
}

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function pool(items, work) {
  const results = [];
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  });
  await Promise.all(lanes);
  return results;
}

let dependent = 0;
let checked = 0;
async function screenReversed() {
  await pool(selected, async (source) => {
    const run = await runFile(reversedEntry(compiled.get(source)));
    const list = units(run.events);
    const failed = list.filter((unit) => unit.failedInFile);
    checked += list.length;
    dependent += failed.length;
    if (failed.length === 0 && run.code !== 0) {
      dependent++;
      console.log(`${source}: exit ${run.code}\n      ${run.err.split('\n').find(Boolean) ?? ''}`);
      return;
    }
    console.log(`${source}: ${failed.length} of ${list.length} fail in reverse order`);
    for (const unit of failed) console.log(`  ✖ ${unit.path.join(' › ')}`);
  });
}

try {
  if (reverse) await screenReversed();
  else for (const source of selected) {
    const file = compiled.get(source);
    const whole = await runFile(file);
    const list = units(whole.events);
    const broken = list.filter((unit) => unit.failedInFile);
    if (broken.length) {
      console.log(`${source}: ${broken.length} test(s) fail even in the whole file; skipped`);
      continue;
    }
    const results = await pool(list, async (unit) => ({ unit, run: await runFile(file, `^${escape(unit.name)}$`) }));
    const failed = results.filter(({ run }) => run.code !== 0 || run.events.some((event) => event.failed));
    checked += list.length;
    dependent += failed.length;
    console.log(`${source}: ${list.length} tests, ${failed.length} fail alone`);
    for (const { unit, run } of failed) {
      const reason = run.events.find((event) => event.failed && event.error)?.error ?? run.err.split('\n').find(Boolean) ?? `exit ${run.code}`;
      console.log(`  ✖ ${unit.path.join(' › ')}\n      ${reason.split('\n')[0].slice(0, 300)}`);
    }
  }
} finally {
  cleanUp();
}
console.log(`test-alone: ${checked} tests run ${reverse ? 'in reverse order' : 'alone'}, ${dependent} depend on others in their file`);
process.exit(dependent ? 1 : 0);
