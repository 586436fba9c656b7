// On the embedded database (one connection, which PostgreSQL's work shares with the server's own
// thread) the submissions that arrive while one insert runs are stored together by the next:
// one statement, one commit and one reading of the submit decision's facts for all of them,
// instead of one each. A submission arriving alone waits only for the event loop's current round.
// Each is answered only once the statement that stored it has committed.
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
  #draining = false;

  constructor(private readonly db: Db) {}

  insert(instance: repo.NewInstance, facts: repo.SubmitFacts): Promise<RememberedInsert> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ instance, facts, resolve, reject });
      if (!this.#draining) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      // PGlite runs each statement on this thread, so nothing queues while one runs: the requests
      // whose bodies came in meanwhile are read in the event loop's next round, and this waits
      // for that round to end (setImmediate) before taking what is queued.
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
      this.#draining = false;
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

const batchesOf = new WeakMap<Db, InsertBatches>();

/** repo.insertInstanceIfStillAllowed, batched with the others waiting for the embedded database's connection. */
export function insertRememberedBatched(db: Db, instance: repo.NewInstance, facts: repo.SubmitFacts): Promise<RememberedInsert> {
  let batches = batchesOf.get(db);
  if (!batches) {
    batches = new InsertBatches(db);
    batchesOf.set(db, batches);
  }
  return batches.insert(instance, facts);
}
