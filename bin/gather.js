#!/usr/bin/env node
// Entry point for `gather` / `npm start`. The TypeScript sources are bundled into one ES module
// by esbuild on every start (bin/bundle.js, a few hundred milliseconds) and that module runs. Running them
// through tsx's loader instead keeps a second JavaScript engine alive in a loader thread for the
// life of the process: about 70 MB of resident memory for nothing once the server is up.
// GATHER_TSX=1 runs the sources through tsx (stack traces then point into the .ts files).
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

/** The server's commands' modules (node:cluster, node:child_process, node:fs), loaded below. */
let cluster;
let spawnSync;
let existsSync;

/**
 * The bundle's path (bin/bundle.js builds it in a process of its own), or undefined when it cannot
 * be written (a read-only install).
 */
function bundle() {
  // A bundle built already for this run: a cluster's HTTP processes (WEB_PROCESSES) run this file
  // again and load the primary's; the test runner builds one for all the servers its tests start
  // (scripts/test-files.mjs).
  const built = process.env.GATHER_BUNDLE;
  if (built && existsSync(built)) return built;
  const result = spawnSync(process.execPath, [join(root, 'bin/bundle.js')], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (result.status === 3) return undefined;
  if (result.status !== 0 || !result.stdout) throw new Error(`building the server bundle failed (${result.error?.message ?? `exit code ${result.status}`})`);
  process.env.GATHER_BUNDLE = result.stdout;
  return result.stdout;
}

async function load() {
  if (process.env.GATHER_TSX !== '1') {
    // A read-only install cannot write the bundle: the sources then run through tsx.
    const file = bundle();
    if (file) return import(pathToFileURL(file).href);
  }
  const { register } = await import('tsx/esm/api');
  register();
  return import('../src/cli.ts');
}

/**
 * `start` serves the web app: build it first when web/dist is missing or older than web/ (in a
 * process of its own, like the bundle). A failed build leaves the API serving; the app's pages
 * then answer 503 until `npm run build:web` succeeds.
 */
function buildWebApp() {
  if (process.argv[2] !== 'start' || !cluster.isPrimary) return;
  const result = spawnSync(process.execPath, [join(root, 'bin/build-web.js')], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) console.error('gather: the web app could not be built; the API is served without it');
}

/**
 * `xls2xform` runs the converter's own bundle (bin/converter.js) and never loads the server;
 * false when that bundle cannot be written, and the command then goes through the server's CLI.
 */
async function runConverter() {
  if (process.argv[2] !== 'xls2xform' || process.env.GATHER_TSX === '1') return false;
  // The command lives a third of a second: TurboFan's compiles of what gets warm cost more CPU
  // than the optimised code gives back before the process ends (bench/RESULTS.md, 2026-11-28).
  (await import('node:v8')).setFlagsFromString('--no-opt');
  const { converterBundle, loadConverter } = await import('./converter.js');
  const file = await converterBundle();
  if (!file) return false;
  const { runXls2xform, saveCache } = loadConverter(file);
  process.exitCode = await runXls2xform(process.argv.slice(3));
  saveCache();
  return true;
}

if (!(await runConverter())) {
  // Loaded here, not at the top: the converter's command, which lives a third of a second, needs
  // none of them.
  ({ default: cluster } = await import('node:cluster'));
  ({ spawnSync } = await import('node:child_process'));
  ({ existsSync } = await import('node:fs'));
  buildWebApp();
  const { runCli } = await load();
  await runCli(process.argv.slice(2));
}
