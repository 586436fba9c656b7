// A new PGlite data directory is initialised (initdb) in a short-lived process of its own. In the
// server's process initdb's WebAssembly instance peaked at about 670 MB and left the process
// 60-70 MB larger for its whole life (the C heap keeps what it freed); done aside, the server
// opens a ready directory like on every later start.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** Runs PGlite's initdb into `pgdata` when it holds no database yet; false if that failed (the caller's PGlite then does it). */
export async function initialiseInChildProcess(pgdata: string): Promise<boolean> {
  if (existsSync(join(pgdata, 'PG_VERSION'))) return true;
  const pglite = import.meta.resolve('@electric-sql/pglite');
  const script = `const { PGlite } = await import(${JSON.stringify(pglite)}); const db = await PGlite.create(process.argv[1]); await db.close();`;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--liftoff-only', '--input-type=module', '-e', script, pgdata], { timeout: 300_000 }, (error) => resolve(error === null));
  });
}
