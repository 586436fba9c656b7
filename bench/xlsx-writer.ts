// `npm run bench -- xlsx-writer [--rows N] [--rows2 N] [--level 0-9]`: writes N rows (default
// 1,000,000) × 45 mixed columns (strings, numbers, dates, blanks) plus a second sheet of N2
// rows (default 3,000,000) × 15 columns through the XLSX writer, discarding the bytes, and prints
// seconds, CPU seconds, output size and peak RSS.
import { xlsxChunks, type Cell, type SpreadsheetSheet } from '../src/lib/writers/xlsx/index.ts';

function mainRow(r: number): Cell[] {
  const row: Cell[] = [];
  for (let i = 0; i < 15; i += 1) row.push((r + i) % 9 === 0 ? null : `answer ${(r * 7 + i) % 50} — été`);
  // Survey decimals: measurements with two places, and GPS coordinates with seven.
  for (let i = 0; i < 12; i += 1) row.push(((r * 31 + i * 17) % 100_000) / 100);
  for (let i = 0; i < 3; i += 1) row.push(36.7921711 + ((r * 7 + i) % 10_000) / 1e7);
  for (let i = 0; i < 5; i += 1) row.push({ kind: 'date', iso: `20${10 + ((r + i) % 15)}-0${1 + (r % 9)}-1${i}` });
  for (let i = 0; i < 5; i += 1) row.push(r % 5 === i ? null : (r + i) % 3);
  row.push({ kind: 'datetime', iso: `2024-03-0${1 + (r % 9)}T10:2${r % 10}:00.000+03:00` });
  row.push(`uuid:${r.toString(16).padStart(8, '0')}-b8ca-4180-914f-c844fa10ed3b`);
  row.push(r + 1, -1, 'bob');
  return row;
}

function repeatRow(r: number): Cell[] {
  const row: Cell[] = [];
  for (let i = 0; i < 5; i += 1) row.push(`child ${(r + i) % 40}`);
  for (let i = 0; i < 5; i += 1) row.push(((r + i) * 13) % 100);
  row.push(null, null, r + 1, 'survey', Math.floor(r / 3) + 1);
  return row;
}

/**
 * A pool of varied rows, cycled, so the figures measure the writer rather than the generator; the
 * numbers are fresh in every row, since V8 caches number-to-string results and a pool would
 * measure that cache.
 */
function* rows(count: number, width: number, make: (r: number) => Cell[]): Generator<Cell[]> {
  yield Array.from({ length: width }, (_, i) => `column_${i}`);
  const pool = Array.from({ length: 4096 }, (_, r) => make(r));
  const numeric = (pool[0] ?? []).flatMap((cell, i) => (typeof cell === 'number' ? [i] : []));
  for (let i = 0; i < count; i += 1) {
    const row = (pool[i % pool.length] ?? []).slice();
    for (const at of numeric) {
      const value = row[at];
      if (typeof value === 'number') row[at] = Number.isInteger(value) ? value + i : Math.round((value + i / 100) * 100) / 100;
    }
    yield row;
  }
}

function arg(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
}

export async function main(args: string[]): Promise<void> {
  const rows1 = arg(args, '--rows', 1_000_000);
  const rows2 = arg(args, '--rows2', 3_000_000);
  const level = arg(args, '--level', 1);
  const sheets: SpreadsheetSheet[] = [
    { name: 'survey', rows: rows(rows1, 45, mainRow), repeatRows: 1 },
    { name: 'children', rows: rows(rows2, 15, repeatRow), repeatRows: 1 },
  ];

  const rssBefore = process.memoryUsage().rss;
  const started = process.hrtime.bigint();
  const cpuBefore = process.cpuUsage();
  let bytes = 0;
  let chunks = 0;
  let peakRss = process.memoryUsage().rss;
  for await (const chunk of xlsxChunks(sheets, { compressionLevel: level })) {
    bytes += chunk.length; // discarded: the figure is the writer's, not a disk's
    chunks += 1;
    if (chunks % 64 === 0) peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  peakRss = Math.max(peakRss, process.resourceUsage().maxRSS * 1024);
  const cells = rows1 * 45 + rows2 * 15;
  console.log(`xlsx-writer: ${rows1.toLocaleString('en')} rows × 45 + ${rows2.toLocaleString('en')} rows × 15, zlib level ${level}`);
  console.log(`  ${seconds.toFixed(2)} s, ${Math.round(cells / seconds).toLocaleString('en')} cells/s (CPU ${cpuSeconds.toFixed(2)} s, main thread and zlib threads)`);
  console.log(`  ${(bytes / 1024 / 1024).toFixed(1)} MB written`);
  console.log(`  peak RSS ${(peakRss / 1024 / 1024).toFixed(1)} MB (${(rssBefore / 1024 / 1024).toFixed(1)} MB before writing)`);
}
