// `npm run bench -- xls2xform [RUNS] [FORM]`: the whole `gather xls2xform` process (start, load,
// convert, write) on the 2,045-question synthetic form, RUNS times (default 9), wall time and
// the process's CPU against the target. The first call after a change to packages/xlsform
// builds the converter's bundle (bin/converter.js); it runs before the timed ones.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadAverage, machineCheckMs } from './_proc.ts';
import { repoRoot } from './_server.ts';

const TARGET_SECONDS = 0.3;
const DEFAULT_FORM = join(repoRoot, '../shared/xlsform-corpus/forms/synthetic__big_form.xlsx');

/** CPU seconds of this process's finished children so far (cutime + cstime of /proc/self/stat). */
function childrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

export async function main(args: string[]): Promise<void> {
  const runs = Number(args[0] ?? 9) || 9;
  const form = args[1] ?? DEFAULT_FORM;
  if (!existsSync(form)) {
    console.log(`xls2xform bench skipped: ${form} is missing`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'gather-xls2xform-'));
  const run = (): { seconds: number; cpu: number } => {
    const cpu = childrenCpuSeconds();
    const started = performance.now();
    const result = spawnSync(process.execPath, [join(repoRoot, 'bin/gather.js'), 'xls2xform', form, join(dir, 'form.xml')], { stdio: ['ignore', 'ignore', 'pipe'] });
    const seconds = (performance.now() - started) / 1000;
    if (result.status !== 0) throw new Error(`gather xls2xform exited ${result.status}: ${result.stderr.toString().slice(0, 500)}`);
    return { seconds, cpu: childrenCpuSeconds() - cpu };
  };
  try {
    const first = run();
    const timings = Array.from({ length: runs }, run);
    const walls = timings.map((t) => t.seconds);
    const cpus = timings.map((t) => t.cpu);
    const xmlBytes = readFileSync(join(dir, 'form.xml')).byteLength;
    console.log(`gather xls2xform ${form.split('/').pop()} (${(xmlBytes / 1e6).toFixed(1)} MB of XForm), ${runs} runs`);
    console.log(`  first call (builds the converter bundle when the sources changed): ${first.seconds.toFixed(2)} s`);
    console.log(`  whole process: median ${median(walls).toFixed(2)} s, best ${Math.min(...walls).toFixed(2)} s, worst ${Math.max(...walls).toFixed(2)} s`);
    console.log(`  process CPU (user + system, both cores): median ${median(cpus).toFixed(2)} s`);
    console.log(`target: ≤ ${TARGET_SECONDS} s whole process — ${median(walls) <= TARGET_SECONDS ? 'met' : 'NOT met'} (median)`);
    console.log(`machine load average: ${loadAverage()}; machine check ${machineCheckMs()} ms (lower is faster)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
