// The PGlite directory lock after a crash: a lock left by a dead process, or by a pid that the
// kernel has since given to another process, is taken over; a live holder's is not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireDirectoryLock, DirectoryLockedError } from './dir-lock.ts';
import { processIsGone, processStartTicks, processTag } from './process-identity.ts';

const hasProc = existsSync('/proc/self/stat');

function withDir(run: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'gather-lock-'));
  try {
    run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a lock naming a live pid with another start time (the pid reused) is stale', { skip: !hasProc && 'needs /proc' }, () => {
  withDir((dir) => {
    // pid 1 is alive, but it did not start at tick 1 after boot... of this recorded boot.
    const [, boot = ''] = processTag(1).split('.');
    const stale = `1.${boot || 'aaaa'}.${Number(processStartTicks(1) ?? '5') + 12345}`;
    writeFileSync(join(dir, 'gather.lock'), stale);
    const lock = acquireDirectoryLock(dir);
    assert.equal(readFileSync(join(dir, 'gather.lock'), 'utf8'), processTag());
    lock.release();
    assert.equal(existsSync(join(dir, 'gather.lock')), false);
  });
});

test('a lock of a live process (its tag, or an older lock with its pid alone) is honoured', () => {
  withDir((dir) => {
    for (const holder of [processTag(process.ppid), String(process.ppid)]) {
      writeFileSync(join(dir, 'gather.lock'), holder);
      assert.throws(() => acquireDirectoryLock(dir), DirectoryLockedError);
    }
  });
});

test('a lock of a process that has exited is taken over', () => {
  withDir((dir) => {
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(dir, 'gather.lock'), child.stdout);
    acquireDirectoryLock(dir).release();
  });
});

test('processIsGone: this process is alive; a machine reboot (another boot id) ends every process', { skip: !hasProc && 'needs /proc' }, () => {
  const own = processTag();
  assert.equal(processIsGone(own), false);
  const [pid, , start] = own.split('.');
  assert.equal(processIsGone(`${pid}.0123456789abcdef.${start}`), true);
  assert.equal(processIsGone('not a tag'), false);
});
