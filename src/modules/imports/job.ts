// The import job: the stored file is read back and its rows written with progress reported. On
// PostgreSQL they go straight into the form's records in one transaction, which also records the
// outcome; on PGlite they are staged in short statements (so polls and other requests get through
// its single session), then published a batch per transaction (publish.ts). A run after a crash
// first looks for the outcome, then for a publish to finish: an import is applied exactly once.
// The stored file goes when the import ends, applied or failed; only a run that is interrupted
// (shutdown, lost lease) keeps it for the next one.
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { TransientJobError, type JobContext } from '../../jobs/registry.ts';
import { inTransaction, type DbOrTx } from '../../platform/db.ts';
import { findFormDefinition, findLiveForm } from '../forms/repository.ts';
import * as repo from './repository.ts';
import { importDirectly, ImportRefused, readRows, stageImport, type ImportSummary, type ImportTarget } from './pipeline.ts';
import { beginPublish, finishPublish } from './publish.ts';
import { IMPORT_JOB, lookupConnection, type ImportJobPayload } from './service.ts';
import { makeTempDir } from './upload.ts';
import { CsvRowCounter } from './readers/csv.ts';
import { countXlsxRows } from './readers/xlsx.ts';

/** Copies the job's stored file to `path`, showing each piece to `onPiece` on its way. */
async function spoolStoredFile(db: DbOrTx, importId: string, path: string, onPiece: (piece: Uint8Array) => void): Promise<void> {
  const out = createWriteStream(path);
  try {
    for (let seq = 0; ; seq++) {
      const piece = await repo.findImportFilePiece(db, importId, seq);
      if (!piece) break;
      onPiece(piece);
      if (!out.write(piece)) await once(out, 'drain');
    }
  } finally {
    out.end();
    await once(out, 'close');
  }
}

async function countRows(kind: Exclude<ImportJobPayload['kind'], 'csv'>, path: string, signal: AbortSignal): Promise<number> {
  if (kind === 'xlsx') return countXlsxRows(path);
  let rows = -1;
  for await (const row of readRows(kind, path)) {
    void row;
    rows++;
    if ((rows & 0x3fff) === 0) signal.throwIfAborted();
  }
  return Math.max(rows, 0);
}

export async function runImportJob(job: JobContext, payload: ImportJobPayload): Promise<ImportSummary> {
  const { db, clock, config } = job.deps;
  const { importId } = payload;
  await repo.deleteAbandonedImports(db, IMPORT_JOB);
  const applied = await repo.findImportResult(db, importId);
  if (applied) {
    await repo.deleteImportFile(db, importId);
    return applied as ImportSummary;
  }
  const resumed = await finishPublish(db, importId, job.signal);
  if (resumed) return resumed;
  await repo.deleteStagedRows(db, importId);
  const form = await findLiveForm(db, payload.formId);
  if (!form) throw new Error('The form no longer exists.');
  const target: ImportTarget = {
    importId,
    form: { id: form.id, id_string: form.id_string, version: form.version, uuid: form.uuid },
    formJson: (await findFormDefinition(db, form.id)).json,
    actorId: payload.actorId,
    overwrite: payload.overwrite,
    maxInstanceBytes: config.uploadLimitBytes,
  };
  const dir = await makeTempDir();
  const path = join(dir, 'import');
  try {
    // A CSV's rows are counted as it is copied; a workbook's once it is whole.
    const csvRows = new CsvRowCounter();
    await spoolStoredFile(db, importId, path, (piece) => {
      if (payload.kind === 'csv') csvRows.add(piece);
    });
    const total = payload.kind === 'csv' ? csvRows.rows : await countRows(payload.kind, path, job.signal);
    await job.reportProgress(0, total);
    const onProgress = (rows: number): Promise<void> => job.reportProgress(Math.min(rows, total), total);
    if (config.databaseUrl !== undefined) {
      return await inTransaction(db, async (trx) => {
        const summary = await importDirectly(trx, lookupConnection(job.deps, trx), target, readRows(payload.kind, path), clock.now(), { onProgress });
        await repo.deleteImportFile(trx, importId);
        return summary;
      });
    }
    const staged = await stageImport(db, target, readRows(payload.kind, path), { onProgress });
    job.signal.throwIfAborted();
    await beginPublish(db, target, staged, clock.now());
    const summary = await finishPublish(db, importId, job.signal);
    if (!summary) throw new Error('The form was deleted while its import was being applied.');
    return summary;
  } catch (error) {
    // A begun publish is carried on by a retry or the next start, never undone.
    if (await repo.findPublish(db, importId).catch(() => undefined)) {
      if (job.signal.aborted) throw error;
      throw new TransientJobError(error instanceof Error ? error.message : String(error), { cause: error });
    }
    await repo.deleteStagedRows(db, importId).catch(() => undefined);
    // Shutdown or a lost lease: the job runs again and needs its file.
    if (!job.signal.aborted) await repo.deleteImportFile(db, importId).catch(() => undefined);
    if (error instanceof ImportRefused) throw new Error(error.message, { cause: error });
    throw error;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
