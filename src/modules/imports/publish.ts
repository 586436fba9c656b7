// Publishing staged rows on PGlite, a batch per transaction. PGlite is one session: a single
// transaction applying 30,000 rows held it (and the event loop) for seconds against every other
// request. Instead, once every row is read, checked and staged (nothing of the file is stored
// before that), beginPublish records the publish and finishPublish applies the staged rows in
// short transactions, each removing what it applied and counting it in the same commit, then
// records the outcome. A publish once begun is always carried to its end: by the job, by a retry
// of the job, or at the next start (finishInterruptedPublishes, before the server answers), so a
// crash never leaves part of a file imported. While it runs (seconds for tens of thousands of
// rows), readers may see part of the import arrive; a one-statement switch was measured too
// slow for that (about 0.2 ms a record: an UPDATE making 3,000 hidden records visible took 0.6 s).
import { inTransaction, type Db, type DbOrTx } from '../../platform/db.ts';
import * as repo from './repository.ts';
import { finishImport, IMPORTED_STATUS, ImportRefused, type ImportSummary, type ImportTarget, type StageOutcome } from './pipeline.ts';
import { importRefusals } from '../../errors.ts';

/** Staged rows (or deleted records, for overwrite) per transaction: tens of milliseconds each. */
const PUBLISH_BATCH = 250;

/** Checks the edits' targets and records that publishing has begun, in one short transaction. */
export async function beginPublish(db: Db, target: ImportTarget, staged: StageOutcome, now: Date): Promise<void> {
  await inTransaction(db, async (trx) => {
    if (staged.stagedEdits > 0 && (await repo.countLiveEditTargets(trx, target.importId, target.form.id)) !== staged.stagedEdits) {
      throw new ImportRefused(importRefusals.editedRecordGone);
    }
    await repo.insertPublish(trx, {
      import_id: target.importId,
      form_id: target.form.id,
      actor_id: target.actorId,
      overwrite: target.overwrite,
      delete_through: target.overwrite ? await repo.maxInstanceId(trx, target.form.id) : null,
      staged,
      started_at: now,
    });
  });
}

type Step = { done: false } | { done: true; summary: ImportSummary | undefined };

async function publishStep(trx: DbOrTx, importId: string): Promise<Step> {
  const publish = await repo.findPublish(trx, importId);
  // Finished by another caller, or the form was deleted (which removes its publishes).
  if (!publish) return { done: true, summary: undefined };
  const { form_id: formId, actor_id: actorId, started_at: now } = publish;
  if (publish.delete_through !== null) {
    const deleted = await repo.softDeleteRecordsThrough(trx, formId, publish.delete_through, actorId, now, PUBLISH_BATCH);
    if (deleted < PUBLISH_BATCH) await repo.setPublishDeleteThrough(trx, importId, null);
    return { done: false };
  }
  const staged = publish.staged as StageOutcome;
  // Read by its key, not as min(seq): the index's start fills with the batches deleted already.
  const from = publish.next_seq;
  if (from >= staged.rows) {
    const summary = await finishImport(trx, { importId, form: { id: formId } }, staged, publish);
    await repo.deletePublish(trx, importId);
    await repo.deleteImportFile(trx, importId);
    return { done: true, summary };
  }
  const seqRange = { from, to: from + PUBLISH_BATCH };
  const options: repo.ApplyOptions = { importId, formId, actorId, now, overwrite: publish.overwrite, status: IMPORTED_STATUS, seqRange };
  // A target deleted since beginPublish is left alone (its edit is not counted).
  const updates = await repo.applyStagedEdits(trx, options);
  const additions = await repo.applyStagedAdditions(trx, options);
  await repo.deleteStagedRange(trx, importId, seqRange);
  await repo.addPublished(trx, importId, { nextSeq: seqRange.to, additions, updates });
  return { done: false };
}

/** Applies what is left of a begun publish; answers the summary (undefined when there was none to finish). */
export async function finishPublish(db: Db, importId: string, signal?: AbortSignal): Promise<ImportSummary | undefined> {
  for (;;) {
    // PGlite answers within microtasks: without a turn of the event loop between batches, no
    // other request would even be read until the last one.
    await new Promise((resolve) => setImmediate(resolve));
    signal?.throwIfAborted();
    const step = await inTransaction(db, async (trx) => {
      await repo.preferFastCompression(trx);
      return publishStep(trx, importId);
    });
    if (step.done) return step.summary ?? ((await repo.findImportResult(db, importId)) as ImportSummary | undefined);
  }
}

/** Finishes every publish a crash or shutdown interrupted (at start, before requests are answered). */
export async function finishInterruptedPublishes(db: Db): Promise<number> {
  const ids = await repo.findPublishIds(db);
  for (const id of ids) await finishPublish(db, id);
  return ids.length;
}
