// Whose job claims a starting process may take back: only those of this host's processes that
// have ended since this machine booted; a claim from another boot may be another machine's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { claimIsAbandoned, claimantName } from './claimant.ts';
import { bootId, processTag } from '../platform/process-identity.ts';

/** A pid no process holds (the kernel's limit is far below it). */
const FREE_PID = 2 ** 30 + 7;
const hasProc = existsSync('/proc/sys/kernel/random/boot_id');

test('a live process’s claim, this process’s own and another host’s are never abandoned', () => {
  assert.equal(claimIsAbandoned(`${claimantName()}:token`), false);
  assert.equal(claimIsAbandoned(`${hostname()}:${processTag(process.ppid)}:token`), false);
  assert.equal(claimIsAbandoned(`another-${hostname()}:${FREE_PID}:token`), false);
});

test('a claim of an ended process of this boot is abandoned; one naming another boot is not', { skip: !hasProc && 'needs /proc' }, () => {
  const boot = bootId() ?? '';
  assert.equal(claimIsAbandoned(`${hostname()}:${FREE_PID}.${boot}.12345:token`), true);
  const otherBoot = boot.replace(/^./, (c) => (c === '0' ? '1' : '0'));
  assert.equal(claimIsAbandoned(`${hostname()}:${FREE_PID}.${otherBoot}.12345:token`), false);
});
