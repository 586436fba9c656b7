// What wakes an idle dispatcher before its next poll when records are queued.
//
// PostgreSQL: a statement that queues into a service's empty queue notifies QUEUED_CHANNEL
// (repository.ts), delivered at its commit to every process LISTENing: a submission taken by any
// web process of a cluster wakes the dispatcher in the primary or in a `gather worker`. A lost
// listening connection is opened again; meanwhile, and always for a queue that was not empty,
// the poll finds the records.
//
// PGlite (one process): every write this process commits starts a new epoch of the response
// cache (src/http/conventions.ts, and each finished job); a change of epoch is looked for every
// EPOCH_LOOK_MS and wakes one loop, which then claims a service if one has records.
import type pg from 'pg';
import { loadPg } from '../../platform/pg-module.ts';
import type { AppDeps } from '../../context.ts';
import type { JobLog } from '../../jobs/log.ts';
import { QUEUED_CHANNEL } from './repository.ts';

const EPOCH_LOOK_MS = 20;
const RELISTEN_MS = 1000;

/** Calls `onQueued` when records may have been queued; returns the function that stops watching. */
export function watchQueued(deps: AppDeps, onQueued: () => void, log: JobLog): () => Promise<void> {
  const databaseUrl = deps.config.databaseUrl;
  return databaseUrl ? listen(databaseUrl, onQueued, log) : watchEpoch(deps, onQueued);
}

function watchEpoch(deps: AppDeps, onQueued: () => void): () => Promise<void> {
  let seen = deps.responseCache.epoch;
  const timer = setInterval(() => {
    const epoch = deps.responseCache.epoch;
    if (epoch === seen) return;
    seen = epoch;
    onQueued();
  }, EPOCH_LOOK_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    return Promise.resolve();
  };
}

function listen(databaseUrl: string, onQueued: () => void, log: JobLog): () => Promise<void> {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const driver = await loadPg();
    if (stopped) return;
    const next = new driver.Client({ connectionString: databaseUrl });
    next.on('notification', (message) => {
      if (message.channel === QUEUED_CHANNEL) onQueued();
    });
    next.on('error', (error) => {
      if (stopped || client !== next) return;
      log('warn', 'REST service deliveries: the connection listening for queued records failed; polling until it is back', error);
      client = undefined;
      next.end().catch(() => undefined);
      again();
    });
    client = next;
    try {
      await next.connect();
      await next.query(`LISTEN ${QUEUED_CHANNEL}`);
      // Records queued while no one listened.
      onQueued();
    } catch (error) {
      if (stopped || client !== next) return;
      client = undefined;
      next.end().catch(() => undefined);
      log('warn', 'REST service deliveries: could not listen for queued records; polling until it can', error);
      again();
    }
  };
  const again = (): void => {
    if (stopped) return;
    retry = setTimeout(() => void connect(), RELISTEN_MS);
    retry.unref();
  };
  void connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const open = client;
    client = undefined;
    await open?.end().catch(() => undefined);
  };
}
