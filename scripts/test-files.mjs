// What scripts/run-tests.mjs and scripts/test-alone.mjs share: the test files, and the migrated
// template database each file's database is copied from (test/db-template.ts).
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';

const roots = ['test', 'src', 'packages'];
const templateScript = join('test', 'db-template.ts');

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

/** Every *.test.ts under test/, src/ and packages/, relative to the working directory, by path. */
export function testFiles() {
  const files = [];
  for (const root of roots) walk(root, files);
  return files.sort();
}

/** The files whose path contains one of `filters` (path fragments); all of them without filters. */
export function selectFiles(files, filters) {
  return filters.length ? files.filter((f) => filters.some((s) => f.includes(s))) : files;
}

/**
 * Builds the run's migrated template database; returns its directory and the environment
 * variables that name it, or undefined when building failed.
 */
export function buildTemplate(env, prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const built = spawnSync(process.execPath, ['--import', 'tsx', templateScript, 'build', dir], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (built.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  return { dir, vars: JSON.parse(built.stdout) };
}

/** Drops what buildTemplate made: the PostgreSQL template database, the PGlite directory. */
export function removeTemplate(env, template) {
  const name = template.vars.GATHER_TEST_PG_TEMPLATE;
  if (name) spawnSync(process.execPath, ['--import', 'tsx', templateScript, 'drop', name], { env, stdio: 'inherit' });
  rmSync(template.dir, { recursive: true, force: true });
}

/**
 * Starts building the server's bundle (bin/bundle.js) once for the run, for every server process
 * the tests start: bin/gather.js builds it again on each start otherwise (test/server-process.ts).
 * Resolves with the environment variable that names it, or none when it cannot be built (each
 * start then builds its own, as before).
 */
export function buildServerBundle(env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join('bin', 'bundle.js')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.once('error', () => resolve({}));
    child.once('close', (code) => resolve(code === 0 && out ? { GATHER_BUNDLE: out } : {}));
  });
}
