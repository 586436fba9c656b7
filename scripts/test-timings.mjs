// A node:test reporter that prints how long each test file took, slowest first. Used by
// run-tests.mjs (TEST_TIMINGS).
// - A file in a process of its own: from the previous such file's last event (or the run's start)
//   to this file's last event. That is the file's own time, process start included, only with
//   --test-concurrency=1. Compiled runs (scripts/compile-tests.mjs) name the compiled file in some
//   events and, through its source map, the source in others: both count as the source.
// - A file in a batch (scripts/test-batches.mjs) runs as a top-level suite named after the file,
//   declared by the batch's entry: its time is the suite's, without the process start that its
//   batch pays once.
const sourcePath = (file) =>
  file.replace(process.cwd() + '/', '').replace(/^node_modules\/\.cache\/gather-tests\/\d+\/(\d+|batched)\//, '').replace(/\.mjs$/, '.ts');
const isBatchEntry = (file) => /\/batch-\d+\.test\.mjs$/.test(file);
const isBatchShim = (file) => file.endsWith('/scripts/test-batch-shim.mjs');

export default async function* timings(source) {
  const started = Date.now();
  const lastEvent = new Map();
  const batched = [];
  let tests = 0;
  for await (const event of source) {
    const file = event.data?.file;
    if (!file) continue;
    const ended = event.type === 'test:pass' || event.type === 'test:fail';
    if (ended && event.data.details?.type !== 'suite') tests += 1;
    if (isBatchEntry(file)) {
      if (ended && event.data.nesting === 0) batched.push({ file: event.data.name, seconds: event.data.details.duration_ms / 1000 });
      continue;
    }
    if (isBatchShim(file)) continue;
    lastEvent.set(sourcePath(file), Date.now());
  }
  const rows = [...lastEvent.entries()].sort((a, b) => a[1] - b[1]);
  let previous = started;
  const out = rows.map(([file, last]) => {
    const seconds = (last - previous) / 1000;
    previous = last;
    return { file, seconds };
  });
  out.push(...batched);
  out.sort((a, b) => b.seconds - a.seconds);
  yield `test files: ${out.length}, tests: ${tests}, ${((Date.now() - started) / 1000).toFixed(1)} s\n`;
  for (const { file, seconds } of out) yield `${seconds.toFixed(1).padStart(7)} s  ${file}\n`;
}
