// The REST service dispatcher: sends queued records (rest_service_outbox) to their services.
//
// Why its own queue and not one job per record in the jobs table: the jobs table is claimed in
// id order by WORKERS loops (1 by default) shared with exports and imports. A dead endpoint's
// 70,000 records as 70,000 jobs in back-off would sit in front of every export in that claim scan
// (`npm run bench -- restservices` measures the claim with 70,000 such jobs waiting: see
// bench/RESULTS.md), and while an endpoint that never answers held a worker for its timeout, no
// export could run. Here a service is the unit: its backlog is one service row in back-off, the
// claim looks only at services that are due, and REST_SERVICE_CONCURRENCY loops of its own (never
// the job workers) each serve one service at a time, the one waiting longest first. A dead
// service in back-off costs nothing; one that never answers holds at most one loop, for one
// record (a failing service is probed one record at a time), for REST_SERVICE_TIMEOUT.
//
// A healthy service gets its records in batches: up to BATCH queued records read in one query,
// sent PARALLEL at a time over kept-alive connections, removed from the queue in one statement.
// Delivery is at least once: a process killed after a POST and before the removal sends that
// record again (same X-Gather-Delivery id) after the restart.
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { Agent } from 'undici';
import type { AppDeps } from '../../context.ts';
import { claimantName, claimIsAbandoned } from '../../jobs/claimant.ts';
import type { JobLog } from '../../jobs/log.ts';
import { guardedAgent } from '../../platform/remote-fetch.ts';
import { recordTextsByIds } from '../submissions/repository.ts';
import * as repo from './repository.ts';
import { postDelivery, type DeliveryResult } from './sender.ts';

const BATCH = 128;
const PARALLEL = 32;
const RETRY_CAP_SECONDS = 600;

/** Wait after the n-th failed attempt in a row: 1, 2, 4 … seconds, at most ten minutes. */
export function deliveryRetrySeconds(failures: number): number {
  return Math.min(2 ** Math.max(0, failures - 1), RETRY_CAP_SECONDS);
}

export interface RestDeliveries {
  /** Ends idle loops' waits: records were just queued. */
  wake(): void;
  /** Aborts deliveries in flight (their records stay queued) and lets the held services go. */
  stop(): Promise<void>;
}

export interface RestDeliveryOptions {
  /** Services served at once (each with up to 32 deliveries in flight). Default REST_SERVICE_CONCURRENCY. */
  concurrency?: number;
  /** Pause between looks at an idle queue. Default 250 ms. */
  pollMs?: number;
  log: JobLog;
}

export function startRestDeliveries(deps: AppDeps, options: RestDeliveryOptions): RestDeliveries {
  const { config } = deps;
  const concurrency = options.concurrency ?? config.restServiceConcurrency;
  const pollMs = options.pollMs ?? 250;
  const claimant = `${claimantName()}:rest${randomBytes(4).toString('hex')}`;
  const leaseMs = 2 * config.restServiceTimeoutMs + 15_000;
  const baseUrl = config.baseUrl ?? `http://${config.host}:${config.port}`;
  const agent = guardedAgent({ allowPrivateAddresses: config.allowPrivateUrls, timeoutMs: config.restServiceTimeoutMs, connections: PARALLEL });
  const shutdown = new AbortController();
  // Every delivery in flight listens to it: up to concurrency × PARALLEL at once.
  setMaxListeners(Math.max(10, concurrency * PARALLEL + 10), shutdown.signal);
  let stopped = false;
  let sleepers = new Set<() => void>();

  const wake = (): void => {
    const waking = sleepers;
    sleepers = new Set();
    for (const resume of waking) resume();
  };
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const resume = (): void => {
        clearTimeout(timer);
        sleepers.delete(resume);
        resolve();
      };
      const timer = setTimeout(resume, ms);
      sleepers.add(resume);
    });

  const serveOne = async (): Promise<boolean> => {
    const now = deps.clock.now();
    // host:process:token, as job claims are written, so claimIsAbandoned can read it.
    const lockedBy = `${claimant}-${randomBytes(4).toString('hex')}`;
    const service = await deps.db.transaction().execute((trx) => repo.claimDueService(trx, now, lockedBy, new Date(now.getTime() + leaseMs)));
    if (!service) return false;
    try {
      await serveService(deps, { service, lockedBy, agent, baseUrl, signal: shutdown.signal });
    } catch (error) {
      options.log('error', `REST service ${service.id}: delivery failed unexpectedly`, error);
      await repo.settleService(deps.db, service.id, lockedBy, {
        done: [], delivered: 0, dropped: 0, attempted: undefined, retryAfter: new Date(deps.clock.now().getTime() + 5000), now: deps.clock.now(),
      });
    }
    return true;
  };

  const loop = async (): Promise<void> => {
    while (!stopped) {
      let served = false;
      try {
        served = await serveOne();
      } catch (error) {
        if (!stopped) options.log('error', 'REST service deliveries: could not claim a service', error);
      }
      if (!served && !stopped) await sleep(pollMs);
    }
  };

  const loops = concurrency > 0 ? releaseAbandoned(deps).then(() => Promise.all(Array.from({ length: concurrency }, () => loop()))) : Promise.resolve([]);
  return {
    wake,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      shutdown.abort();
      wake();
      await loops.catch(() => undefined);
      await repo.releaseServices(deps.db, claimant).catch((error: unknown) => options.log('error', 'REST service deliveries: could not release services', error));
      await agent.close();
    },
  };
}

/** Services held by this host's ended processes are let go at once rather than at their lease's end. */
async function releaseAbandoned(deps: AppDeps): Promise<void> {
  for (const holder of await repo.listServiceHolders(deps.db)) {
    if (claimIsAbandoned(holder)) await repo.releaseServices(deps.db, holder);
  }
}

interface ServeContext {
  service: repo.ClaimedService;
  lockedBy: string;
  agent: Agent;
  baseUrl: string;
  signal: AbortSignal;
}

async function serveService(deps: AppDeps, ctx: ServeContext): Promise<void> {
  const { service, lockedBy } = ctx;
  // A failing service is probed with one record; a healthy one gets a batch.
  const queued = await repo.listQueuedDeliveries(deps.db, service.id, service.attempts > 0 ? 1 : BATCH);
  const ids = [...new Set(queued.map((q) => q.instance_id))];
  const bodies = await loadBodies(deps, service, ids, ctx.baseUrl);
  const secret = service.secret_sealed === null ? null : deps.sealer.open(service.secret_sealed);
  const contentType = service.name === 'generic_xml' ? 'application/xml' : 'application/json';

  const done: number[] = [];
  let delivered = 0;
  let dropped = 0;
  let last: DeliveryResult | undefined;
  let failed = false;
  const sendable = queued.filter((q) => {
    if (bodies.has(q.instance_id)) return true;
    done.push(q.id); // the record was deleted before its turn
    return false;
  });
  // PARALLEL requests in flight, each sender taking the next record as soon as its last is done;
  // after a failure no new record is started. The hold on the service is renewed meanwhile.
  const renew = setInterval(() => {
    const until = new Date(deps.clock.now().getTime() + 2 * deps.config.restServiceTimeoutMs + 15_000);
    repo.extendServiceLease(deps.db, service.id, lockedBy, until).catch(() => undefined);
  }, deps.config.restServiceTimeoutMs);
  let next = 0;
  const sender = async (): Promise<void> => {
    while (!failed && !ctx.signal.aborted && next < sendable.length) {
      const q = sendable[next++];
      if (!q) return;
      const result = await postDelivery(ctx.agent, {
        url: service.service_url, body: bodies.get(q.instance_id) ?? '', contentType, event: q.event, deliveryId: q.id, secret, nowMs: deps.clock.now().getTime(),
      }, ctx.signal);
      if (ctx.signal.aborted) return; // shutting down: what was in flight stays queued
      if (result.ok) {
        done.push(q.id);
        delivered += 1;
      } else {
        failed = true;
        if (deps.clock.now().getTime() - q.created_at.getTime() >= deps.config.restServiceRetryMs) {
          done.push(q.id);
          dropped += 1;
        }
      }
      if (!last || !result.ok) last = result;
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(PARALLEL, sendable.length) }, () => sender()));
  } finally {
    clearInterval(renew);
  }
  const now = deps.clock.now();
  const failures = failed ? service.attempts + 1 : 0;
  await repo.settleService(deps.db, service.id, lockedBy, {
    done, delivered, dropped,
    attempted: last ? { ...last, ok: !failed } : undefined,
    retryAfter: failed ? new Date(now.getTime() + deliveryRetrySeconds(failures) * 1000) : null,
    now,
  });
}

/** Each record's body: its JSON as the data API shows it, or its submitted XML. */
async function loadBodies(deps: AppDeps, service: repo.ClaimedService, ids: readonly number[], baseUrl: string): Promise<Map<number, string>> {
  if (service.name === 'generic_xml') return repo.recordXmls(deps.db, service.form_id, ids);
  const texts = await recordTextsByIds(deps.db, service.form_id, baseUrl, ids);
  const bodies = new Map<number, string>();
  for (const text of texts) {
    const id = (JSON.parse(text) as { _id?: unknown })._id;
    if (typeof id === 'number') bodies.set(id, text);
  }
  return bodies;
}
