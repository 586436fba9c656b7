// PGlite has no locking of its own: two processes on one data directory silently lose rows.
// A lock file holding our PID guards the directory; a stale file (dead PID) is taken over.
import { openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';

export interface DirectoryLock {
  release(): void;
}

export class DirectoryLockedError extends Error {}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function acquireDirectoryLock(dir: string): DirectoryLock {
  const path = join(dir, 'gather.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
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
      const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
      if (Number.isInteger(pid) && pid !== process.pid && processIsAlive(pid)) {
        throw new DirectoryLockedError(
          `${dir} is in use by process ${pid}; only one Gather process may use an embedded database directory (set DATABASE_URL to share a PostgreSQL server)`,
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new DirectoryLockedError(`could not lock ${dir}`);
}
