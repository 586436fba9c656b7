// Who a process is, in a form that survives it: its pid, and where /proc exists, the machine's boot
// id and the process's start time. A pid alone is not enough after a crash: the kernel hands pids
// out again, and a stale lock or job claim naming a pid now worn by another process would be
// taken for a live one. Where /proc does not exist the tag is the pid alone and a live pid counts
// as the owner (the safe side: a lock or claim is then never taken from a live process).
import { readFileSync } from 'node:fs';

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** This machine's boot id, without dashes (undefined where /proc does not exist). */
export function bootId(): string | undefined {
  return readText('/proc/sys/kernel/random/boot_id')?.trim().replaceAll('-', '') || undefined;
}

/** Field 22 of /proc/<pid>/stat: the start time in clock ticks after boot (the name, field 2, may hold spaces and parentheses). */
export function processStartTicks(pid: number): string | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = fields[19];
  return start !== undefined && /^\d+$/.test(start) ? start : undefined;
}

/** `pid` or `pid.bootid.starttime`: no colon, so it can sit inside a job claim. */
export function processTag(pid: number = process.pid): string {
  const boot = bootId();
  const start = processStartTicks(pid);
  return boot && start ? `${pid}.${boot}.${start}` : String(pid);
}

let ownTag: string | undefined;
/** This process's tag (computed once: it never changes). */
export function ownProcessTag(): string {
  ownTag ??= processTag();
  return ownTag;
}

function pidIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True when the process the tag names has surely ended (on this machine): its pid is free, the
 * machine has rebooted since, or the pid now belongs to a process started at another time.
 * Text that is not a tag is never taken for a dead process.
 */
export function processIsGone(tag: string): boolean {
  const match = /^(\d+)(?:\.([0-9a-f]+)\.(\d+))?$/.exec(tag.trim());
  if (!match) return false;
  const pid = Number(match[1]);
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (!pidIsAlive(pid)) return true;
  const [, , recordedBoot, recordedStart] = match;
  if (recordedBoot === undefined || recordedStart === undefined) return false;
  const boot = bootId();
  if (boot !== undefined && boot !== recordedBoot) return true;
  const start = processStartTicks(pid);
  return start !== undefined && start !== recordedStart;
}
