// Job types and their handlers. Modules register theirs in src/compose.ts.
import type { AppDeps } from '../context.ts';
import type { JobRow } from './queue.ts';

export interface JobContext {
  deps: AppDeps;
  job: JobRow;
  /**
   * Records progress for clients polling the job (written at most about once a second, and
   * always when current reaches total). Throws once the job is aborted, so a loop that reports
   * progress also stops in time.
   */
  reportProgress(current: number, total: number): Promise<void>;
  /** Aborted when the process shuts down or the job's lease was lost to another worker. */
  signal: AbortSignal;
}

/** Thrown by a handler (or recognised by its isTransient) to have the job retried with backoff. */
export class TransientJobError extends Error {
  override name = 'TransientJobError';
}

export type JobHandler<P> = (ctx: JobContext, payload: P) => Promise<unknown>;

export interface JobTypeOptions {
  /** Runs allowed before the job fails; an enqueue's own maxAttempts wins. Default 3. */
  maxAttempts?: number;
  /** How long a claim lasts without a heartbeat; the heartbeat renews it every third of this. Default 60. */
  leaseSeconds?: number;
  /** Which errors deserve a retry, besides TransientJobError. */
  isTransient?: (error: unknown) => boolean;
}

export interface JobRegistration {
  readonly handler: JobHandler<unknown>;
  readonly maxAttempts: number | undefined;
  readonly leaseMs: number;
  readonly isTransient: (error: unknown) => boolean;
}

export const DEFAULT_MAX_ATTEMPTS = 3;
const DEFAULT_LEASE_SECONDS = 60;

export class JobRegistry {
  readonly #registrations = new Map<string, JobRegistration>();

  register<P>(type: string, handler: JobHandler<P>, options: JobTypeOptions = {}): void {
    if (this.#registrations.has(type)) throw new Error(`job type "${type}" is registered twice`);
    const { maxAttempts, leaseSeconds = DEFAULT_LEASE_SECONDS, isTransient } = options;
    if (maxAttempts !== undefined && !(Number.isInteger(maxAttempts) && maxAttempts >= 1)) {
      throw new RangeError(`maxAttempts must be a positive integer, got ${maxAttempts}`);
    }
    if (!(leaseSeconds > 0)) throw new RangeError(`leaseSeconds must be positive, got ${leaseSeconds}`);
    this.#registrations.set(type, {
      // The payload was written by this type's enqueuer as JSON; the handler owns its shape.
      handler: (ctx, payload) => handler(ctx, payload as P),
      maxAttempts,
      leaseMs: leaseSeconds * 1000,
      isTransient: (error) => error instanceof TransientJobError || (isTransient?.(error) ?? false),
    });
  }

  get(type: string): JobRegistration | undefined {
    return this.#registrations.get(type);
  }

  types(): string[] {
    return [...this.#registrations.keys()];
  }
}
