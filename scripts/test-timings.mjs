// A node:test reporter that prints how long each test file took, slowest first: from the previous
// file's last event (or the run's start) to this file's last event. That is the file's own time,
// process start included, only with --test-concurrency=1. Used by run-tests.mjs (TEST_TIMINGS).
// Compiled runs (scripts/compile-tests.mjs) name the compiled file in some events and, through
// its source map, the source in others: both count as the source.
const sourcePath = (file) =>
  file.replace(process.cwd() + '/', '').replace(/^node_modules\/\.cache\/gather-tests\/\d+\//, '').replace(/\.mjs$/, '.ts');

export default async function* timings(source) {
  const started = Date.now();
  const lastEvent = new Map();
  let tests = 0;
  for await (const event of source) {
    if (!event.data?.file) continue;
    const file = sourcePath(event.data.file);
    const now = Date.now();
    lastEvent.set(file, now);
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.details?.type !== 'suite') tests += 1;
  }
  const rows = [...lastEvent.entries()].sort((a, b) => a[1] - b[1]);
  let previous = started;
  const out = rows.map(([file, last]) => {
    const seconds = (last - previous) / 1000;
    previous = last;
    return { file, seconds };
  });
  out.sort((a, b) => b.seconds - a.seconds);
  yield `test files: ${out.length}, tests: ${tests}, ${((Date.now() - started) / 1000).toFixed(1)} s\n`;
  for (const { file, seconds } of out) yield `${seconds.toFixed(1).padStart(7)} s  ${file}\n`;
}
