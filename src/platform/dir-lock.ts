// PGlite has no locking of its own: two processes on one data directory silently lose rows.
// A lock file holding our process tag (pid and start time, platform/process-identity.ts) guards
// the directory; a stale file (its process gone, or its pid now another process's) is taken over.
import { openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { ownProcessTag, processIsGone } from './process-identity.ts';

export interface DirectoryLock {
  release(): void;
}

export class DirectoryLockedError extends Error {}

export function acquireDirectoryLock(dir: string): DirectoryLock {
  const path = join(dir, 'gather.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, ownProcessTag());
      closeSync(fd);
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        rmSync(path, { force: true });
        process.off('exit', release);
      };
      process.on('exit', release);
      return { release };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A plain pid (an older lock) is a tag too. Our own pid is an earlier process's: ours has
      // no lock yet. Text that is no tag at all (a torn write) locks nothing.
      const holder = readFileSync(path, 'utf8').trim();
      const pid = Number.parseInt(holder, 10);
      if (/^\d/.test(holder) && pid !== process.pid && !processIsGone(holder)) {
        throw new DirectoryLockedError(
          `${dir} is in use by process ${pid}; only one Gather process may use an embedded database directory (set DATABASE_URL to share a PostgreSQL server)`,
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new DirectoryLockedError(`could not lock ${dir}`);
}
