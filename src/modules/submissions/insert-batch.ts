// The submissions that arrive while an insert runs are stored together by the next: one
// statement, one commit and one reading of the submit decision's facts for all of them, instead
// of one each. A submission arriving alone waits only for the event loop's current round. Each is
// answered only once the statement that stored it has committed.
import type { Db } from '../../platform/db.ts';
import * as repo from './repository.ts';

/** Enough to take everything waiting at concurrency 32 and more, small enough to bound one statement. */
const MAX_BATCH = 64;

export interface RememberedInsert {
  allowed: boolean;
  id: number | undefined;
}

interface Pending {
  instance: repo.NewInstance;
  facts: repo.SubmitFacts;
  resolve: (outcome: RememberedInsert) => void;
  reject: (error: unknown) => void;
}

function yieldToIo(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

class InsertBatches {
  #queue: Pending[] = [];
  #running = 0;

  /** `lanes`: how many batches may be stored at once (statements on connections of their own). */
  constructor(
    private readonly db: Db,
    private readonly lanes: number,
  ) {}

  insert(instance: repo.NewInstance, facts: repo.SubmitFacts): Promise<RememberedInsert> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ instance, facts, resolve, reject });
      if (this.#running < this.lanes) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#running += 1;
    try {
      // Wait for the event loop's round to end (setImmediate) before taking what is queued: the
      // requests whose bodies came in meanwhile are read in it. On the embedded database a
      // statement runs on this thread, so without the wait nothing would have queued.
      for (await yieldToIo(); this.#queue[0] !== undefined; await yieldToIo()) {
        const first = this.#queue[0];
        // One remembered decision (the same object) per statement: its facts are checked once.
        const batch: Pending[] = [];
        const rest: Pending[] = [];
        for (const pending of this.#queue) (pending.facts === first.facts && batch.length < MAX_BATCH ? batch : rest).push(pending);
        this.#queue = rest;
        await this.#store(batch, first.facts);
      }
    } finally {
      this.#running -= 1;
    }
  }

  async #store(batch: Pending[], facts: repo.SubmitFacts): Promise<void> {
    try {
      const stored = await repo.insertInstancesIfStillAllowed(this.db, batch.map((pending) => pending.instance), facts);
      batch.forEach((pending, index) => pending.resolve({ allowed: stored.allowed, id: stored.ids[index] }));
    } catch (error) {
      const [only] = batch;
      if (batch.length === 1 && only) {
        only.reject(error);
        return;
      }
      // One record's failure is not the others': each is tried again alone, as without batching.
      for (const pending of batch) await this.#store([pending], facts);
    }
  }
}

/**
 * On PostgreSQL, how many batches may be stored at once, each on a connection of its own: the
 * next batch gathers while these are stored (fewer lanes, larger batches), a statement that waits
 * (on a row another transaction is inserting) does not hold up every other submission, and the
 * rest of the pool stays free for everything else.
 */
const POSTGRES_LANES = 2;

const batchesOf = new WeakMap<Db, InsertBatches>();

/**
 * Stores a new record under a remembered decision (repo.insertInstancesIfStillAllowed), batched
 * with the other submissions waiting: on the embedded database one batch at a time (it has one
 * connection), on PostgreSQL POSTGRES_LANES at a time.
 */
export function insertRememberedBatched(db: Db, embedded: boolean, instance: repo.NewInstance, facts: repo.SubmitFacts): Promise<RememberedInsert> {
  let batches = batchesOf.get(db);
  if (!batches) {
    batches = new InsertBatches(db, embedded ? 1 : POSTGRES_LANES);
    batchesOf.set(db, batches);
  }
  return batches.insert(instance, facts);
}
