// `npm run bench -- sav [--rows N] [--no-compression]`: streams N rows (default 1,000,000)
// of 40 mixed variables through the .sav writer, discarding the chunks, and prints
// rows/s, MB/s of output and peak RSS.
import { savChunks, type SavRow, type SavVariable } from '../src/lib/writers/sav/index.ts';

function variables(): SavVariable[] {
  const list: SavVariable[] = [];
  for (let i = 0; i < 15; i += 1) {
    list.push({ name: `group/select_${i}`, type: 'numeric', decimals: 0, valueLabels: [{ value: 1, label: 'Yes' }, { value: 2, label: 'No' }] });
  }
  for (let i = 0; i < 10; i += 1) list.push({ name: `group/measure_${i}`, type: 'numeric', decimals: 3 });
  for (let i = 0; i < 3; i += 1) list.push({ name: `visit_date_${i}`, type: 'numeric', format: 'DATE' });
  for (let i = 0; i < 2; i += 1) list.push({ name: `start_time_${i}`, type: 'numeric', format: 'DATETIME' });
  for (let i = 0; i < 8; i += 1) list.push({ name: `group/text_${i}`, type: 'string' });
  for (let i = 0; i < 2; i += 1) list.push({ name: `group/essay_${i}`, type: 'string', width: 1000 });
  return list;
}

/** A pool of varied rows, cycled, so the figures measure the writer rather than the generator. */
function rowPool(size: number): SavRow[] {
  return Array.from({ length: size }, (_, r): SavRow => [
    ...Array.from({ length: 15 }, (_, i) => ((r + i) % 9 === 0 ? null : 1 + ((r * 7 + i) % 5))),
    ...Array.from({ length: 10 }, (_, i) => (r * 31 + i) / 7),
    ...Array.from({ length: 3 }, (_, i) => `20${10 + ((r + i) % 15)}-0${1 + (r % 9)}-1${i}`),
    ...Array.from({ length: 2 }, (_, i) => `2024-03-0${1 + ((r + i) % 9)}T1${i}:2${r % 10}:00.000+03:00`),
    ...Array.from({ length: 8 }, (_, i) => ((r + i) % 4 === 0 ? null : `answer ${r % 100} — été ${i}`)),
    ...Array.from({ length: 2 }, (_, i) => ((r + i) % 3 === 0 ? '' : `Long free text number ${r} `.repeat(1 + (r % 8)))),
  ]);
}

function* cycle(pool: ReadonlyArray<SavRow>, count: number): Generator<SavRow> {
  for (let i = 0; i < count; i += 1) {
    const row = pool[i % pool.length];
    if (row !== undefined) yield row;
  }
}

export async function main(args: string[]): Promise<void> {
  const rowsArg = args.indexOf('--rows');
  const rows = rowsArg >= 0 ? Number(args[rowsArg + 1]) : 1_000_000;
  const compression = !args.includes('--no-compression');
  const vars = variables();
  const pool = rowPool(1024);

  const started = process.hrtime.bigint();
  const cpuBefore = process.cpuUsage();
  let bytes = 0;
  let peakRss = process.memoryUsage().rss;
  let chunks = 0;
  for await (const chunk of savChunks(vars, cycle(pool, rows), { compression })) {
    bytes += chunk.length; // discarded: the figure is the writer's, not a disk's
    chunks += 1;
    if (chunks % 64 === 0) peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  // CPU time as well: on a shared machine wall time says as much about the neighbours.
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  peakRss = Math.max(peakRss, process.resourceUsage().maxRSS * 1024);

  const mb = bytes / 1024 / 1024;
  console.log(`sav: ${rows.toLocaleString('en')} rows × ${vars.length} variables, compression ${compression ? 'on' : 'off'}`);
  console.log(`  ${seconds.toFixed(2)} s, ${Math.round(rows / seconds).toLocaleString('en')} rows/s (CPU ${cpuSeconds.toFixed(2)} s, ${Math.round(rows / cpuSeconds).toLocaleString('en')} rows per CPU-second)`);
  console.log(`  ${mb.toFixed(1)} MB written, ${(mb / seconds).toFixed(1)} MB/s`);
  console.log(`  peak RSS ${(peakRss / 1024 / 1024).toFixed(1)} MB`);
}
