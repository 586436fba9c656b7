// What the benchmarks read about processes from Linux's /proc: CPU time, peak RSS, load average.
import { readFileSync, writeFileSync } from 'node:fs';

/** user + system CPU seconds a process has used so far (fields 14 and 15 of /proc/<pid>/stat); 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // In clock ticks, 100 a second on Linux.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** The process's peak resident set (VmHWM) in MB. */
export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024);
}

/** Resets the kernel's peak-RSS mark (clear_refs 5) so the next figure is the next run's own; false where not allowed. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** The machine's 1, 5 and 15 minute load averages. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/**
 * A fixed piece of CPU work timed in this process: JSON.parse of one bench-like record 1,000,000
 * times, in ms. The machines here change speed by a fifth or more within minutes; printed beside
 * a benchmark's figures, it tells a slow phase of the machine from a slower build.
 */
export function machineCheckMs(): number {
  const record = JSON.stringify({
    start: '2026-11-01T08:00:00.000+03:00', today: '2026-11-01', consent: 'yes', _tags: [], _uuid: '6af3f089-f498-4508-9180-0f148915d600',
    member: [{ 'member/m_age': 7, 'member/m_sex': 'female', 'member/m_name': 'Member 0-1', 'member/m_school': 'no' }],
    'household/hh_income': 1013.5, 'respondent/resp_age': 18, 'household/location': '-1.000000 36.800000 1650 5',
  });
  let sink = 0;
  const started = performance.now();
  for (let i = 0; i < 1_000_000; i++) sink += (JSON.parse(record) as { consent: string }).consent.length;
  const ms = performance.now() - started;
  return sink > 0 ? Math.round(ms) : Number.NaN;
}
