// `npm run bench -- xlsform [RUNS]`: XLSForm conversion speed on the shared
// corpus: the synthetic big form (median of RUNS) and every corpus form
// (median time per form), against pyxform 4.5's figures for the same files.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { convert } from '../packages/xlsform/src/index.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const formsDir = join(resolve(repoRoot, '../shared/xlsform-corpus'), 'forms');
const BIG_FORM = 'synthetic__big_form.xlsx';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

interface Timing {
  wall: number;
  /** CPU time of the process (all threads), less affected by other work on a shared machine. */
  cpu: number;
}

function time(bytes: Uint8Array, fileName: string): Timing {
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const result = convert(bytes, { fileName });
  const wall = performance.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  if (!result.ok && fileName === BIG_FORM) throw new Error(`${fileName}: ${result.errors[0]?.message ?? 'failed'}`);
  return { wall, cpu: (cpu.user + cpu.system) / 1000 };
}

const walls = (ts: Timing[]): number[] => ts.map((t) => t.wall);
const cpus = (ts: Timing[]): number[] => ts.map((t) => t.cpu);

export async function main(args: string[]): Promise<void> {
  const runs = Number(args[0] ?? 7) || 7;
  const big = readFileSync(join(formsDir, BIG_FORM));
  for (let i = 0; i < 3; i++) time(big, BIG_FORM); // warm-up: module loading, JIT, heap growth
  const bigTimes = Array.from({ length: runs }, () => time(big, BIG_FORM));

  const names = readdirSync(formsDir).filter((n) => n !== BIG_FORM).sort();
  const files = names.map((n) => ({ n, bytes: readFileSync(join(formsDir, n)) }));
  for (const { n, bytes } of files) time(bytes, n); // warm-up
  const perForm = files.map(({ n, bytes }) => Array.from({ length: 5 }, () => time(bytes, n)));
  const perFormWall = perForm.map((ts) => median(walls(ts)));
  const perFormCpu = perForm.map((ts) => median(cpus(ts)));

  const rows: Array<[string, string, string, string, string]> = [
    ['measure', 'wall (ms)', 'cpu (ms)', 'pyxform 4.5 (ms)', 'target (ms)'],
    [`big form, median of ${runs}`, median(walls(bigTimes)).toFixed(1), median(cpus(bigTimes)).toFixed(1), '13400', '300'],
    [`corpus median per form (${files.length} forms)`, median(perFormWall).toFixed(2), median(perFormCpu).toFixed(2), '9.7', '1'],
    ['corpus p90 per form', percentile(perFormWall, 90).toFixed(2), percentile(perFormCpu, 90).toFixed(2), '27', '-'],
    ['corpus max per form', Math.max(...perFormWall).toFixed(2), Math.max(...perFormCpu).toFixed(2), '569', '-'],
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0))) ?? [];
  for (const row of rows) console.log(row.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  '));
}
