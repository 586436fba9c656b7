// Compiles the test files for run-tests.mjs: one esbuild pass over every selected file, code they
// share split into common chunks, packages left to node_modules. Loading a compiled test file
// costs a process far less than loading the sources through tsx's loader (test/helpers.ts and what
// it imports: about 0.7 s of CPU against 1.9 s), and the suite starts well over a hundred such
// processes. Child processes the tests start (servers, workers) still run the sources.
import { readFile, rm } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const batchShim = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), 'test-batch-shim.mjs')).href;

/**
 * Each source keeps its own `import.meta.url` and `import.meta.dirname`: code that finds a
 * fixture, the project root or a worker's module beside itself must find what it finds when run
 * from its source, not from the chunk it was bundled into.
 */
const ownLocation = {
  name: 'own-location',
  setup(builder) {
    builder.onLoad({ filter: /\.ts$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.')) return { contents: text, loader: 'ts' };
      const contents = text
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(args.path)))
        .replaceAll('import.meta.filename', JSON.stringify(args.path));
      return { contents, loader: 'ts' };
    });
  },
};

/**
 * The files of a batch import node:test through scripts/test-batch-shim.mjs, one module for the
 * whole process, so that they can share a process (scripts/test-batches.mjs). The others import
 * node:test itself, which names each test's file by where the test was declared.
 */
function nodeTestThroughShim(root, batched) {
  const paths = new Set(batched.map((file) => join(root, file)));
  return {
    name: 'node-test-through-shim',
    setup(builder) {
      builder.onResolve({ filter: /^node:test$/ }, (args) => (paths.has(args.importer) ? { path: batchShim, external: true } : undefined));
    },
  };
}

/**
 * Writes the compiled files under `outDir` and returns, for each test file (a path relative to
 * the project root), the compiled file to run. `batched` lists the files that will run in batches.
 * `folderOf` names the folder under `outDir` that a file's compiled copy goes in (run-tests.mjs
 * orders the run by it).
 */
export async function compileTests(root, files, outDir, batched = [], folderOf = () => '.') {
  await rm(outDir, { recursive: true, force: true });
  const outPath = (file) => join(folderOf(file), file.replace(/\.ts$/, ''));
  await build({
    absWorkingDir: root,
    entryPoints: files.map((file) => ({ in: file, out: outPath(file) })),
    outdir: outDir,
    chunkNames: 'chunks/[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    plugins: [ownLocation, nodeTestThroughShim(root, batched)],
    logLevel: 'error',
  });
  return new Map(files.map((file) => [file, relative(root, join(outDir, `${outPath(file)}.mjs`))]));
}
