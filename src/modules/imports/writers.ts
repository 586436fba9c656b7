// Where an import's checked rows go. Straight into the form's records, within the transaction
// that will also record the import's outcome (a request's, or a job's on PostgreSQL, where a long
// transaction holds one connection of the pool and nothing else). Or, for a job on PGlite, whose
// single session a long transaction would hold against every other request, into import_rows in
// short statements, published once all are staged (publish.ts).
import type { DbOrTx } from '../../platform/db.ts';
import * as repo from './repository.ts';

export interface RecordWriter {
  /** Takes a batch of rows; may return before they are written (flush() reports a failure). */
  write(rows: readonly repo.StagedRow[]): Promise<void>;
  /** Waits until every batch is written; throws the first failure. */
  flush(): Promise<void>;
}

export class StagingWriter implements RecordWriter {
  constructor(private readonly db: DbOrTx, private readonly importId: string) {}

  async write(rows: readonly repo.StagedRow[]): Promise<void> {
    // A turn of the event loop per batch, so that other requests are read between them (PGlite
    // answers within microtasks).
    await new Promise((resolve) => setImmediate(resolve));
    await repo.stageRows(this.db, this.importId, rows);
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }
}

/** Thrown when a record the file edits changed or went away while the import ran. */
export class EditedRecordGone extends Error {
  override name = 'EditedRecordGone';
}

/**
 * Writes each batch straight into instances. One batch is written while the caller reads and
 * checks the next one (the database and this process work side by side); a second batch waits
 * for the first, so at most two are held in memory.
 */
export class DirectWriter implements RecordWriter {
  additions = 0;
  updates = 0;
  #pending: Promise<void> = Promise.resolve();

  constructor(private readonly trx: DbOrTx, private readonly options: repo.ApplyOptions) {}

  async write(rows: readonly repo.StagedRow[]): Promise<void> {
    await this.#pending;
    this.#pending = this.#writeNow(rows);
    // Seen by the next write() or flush(); until then the failure is not an unhandled one.
    this.#pending.catch(() => undefined);
  }

  flush(): Promise<void> {
    return this.#pending;
  }

  async #writeNow(rows: readonly repo.StagedRow[]): Promise<void> {
    const edits = rows.filter((r) => r.targetUuid !== null);
    if (edits.length > 0) {
      const updated = await repo.editRecords(this.trx, this.options, edits);
      if (updated !== edits.length) throw new EditedRecordGone();
      this.updates += updated;
    }
    const additions = edits.length === 0 ? rows : rows.filter((r) => r.targetUuid === null);
    this.additions += await repo.insertRecords(this.trx, this.options, additions);
  }
}
