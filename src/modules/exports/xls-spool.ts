// Temporary files behind the legacy XLS writer's spools (src/lib/writers/xls/spool.ts): the cell
// records of a big workbook must wait on disk, not in memory, until the file can be emitted.
import { createReadStream } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Spool, SpoolFactory } from '../../lib/writers/xls/index.ts';
import { ownedTempPrefix } from '../../platform/temp-files.ts';

export function fileSpools(dataDir: string): SpoolFactory {
  return async () => {
    const dir = join(dataDir, 'tmp');
    await mkdir(dir, { recursive: true });
    const path = join(dir, `${ownedTempPrefix('xls-spool')}${randomUUID()}`);
    const handle = await open(path, 'w+');
    let closed = false;
    const close = async (): Promise<void> => {
      if (!closed) {
        closed = true;
        await handle.close();
      }
    };
    const spool: Spool = {
      async write(chunk) {
        await handle.write(chunk);
      },
      async *read() {
        await close();
        yield* createReadStream(path, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>;
      },
      async dispose() {
        await close();
        await rm(path, { force: true });
      },
    };
    return spool;
  };
}
