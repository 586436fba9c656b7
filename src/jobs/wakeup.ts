// Lets code that enqueues a job nudge this process's idle workers instead of waiting for their
// next poll. Call wake() after the enqueuing transaction commits: a worker woken earlier cannot
// see the job yet (it still finds it on its next poll). Workers in other processes just poll.
export class JobWakeup {
  readonly #listeners = new Set<() => void>();

  wake(): void {
    for (const listener of this.#listeners) listener();
  }

  /** Returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
