#!/usr/bin/env node
// Runs every *.test.ts file under test/, src/ and packages/ with node's test runner.
// Node 20's `node --test` takes no globs and silently passes when it finds no .ts files,
// so the files are listed here explicitly and an empty list is an error.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

const roots = ['test', 'src', 'packages'];
const filter = process.argv.slice(2);

function walk(dir, out) {
  let entries;
  try { entries = readdirSync(dir); } catch { return; }
  for (const name of entries) {
    if (name === 'node_modules') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.test.ts')) out.push(relative(process.cwd(), path));
  }
}

const files = [];
for (const root of roots) walk(root, files);
files.sort();
const selected = filter.length ? files.filter((f) => filter.some((s) => f.includes(s))) : files;
if (selected.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '1';
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...selected],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
process.exit(result.status ?? 1);
