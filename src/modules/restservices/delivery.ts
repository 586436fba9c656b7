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
// A healthy service gets its records in bursts (serveService): up to PARALLEL at once, pipelined
// over a few kept-alive connections once the receiver is seen to keep them open (connections.ts),
// the next BATCH read while a burst is out, the delivered removed from
// the queue a batch at a time. A caught-up service is read again LINGER_MS after a short read,
// and let go when a read finds nothing. Delivery is at least once: a process killed after a POST and
// before the removal sends that record again (same X-Gather-Delivery id) after the restart.
// Idle loops sleep pollMs between looks, or less when woken by records queued (wakeup.ts).
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { AppDeps } from '../../context.ts';
import { claimantName, claimIsAbandoned } from '../../jobs/claimant.ts';
import type { JobLog } from '../../jobs/log.ts';
import { queuedRecordTexts } from '../submissions/repository.ts';
import { ReceiverConnections } from './connections.ts';
import * as repo from './repository.ts';
import { deliveryTarget, postDelivery, type DeliveryResult } from './sender.ts';
import { watchQueued } from './wakeup.ts';

/** Records read per query. */
const BATCH = 128;
/** Deliveries in flight per service: a burst's most. */
const PARALLEL = 32;
/**
 * Connections per service's origin once pipelining (connections.ts), each with PARALLEL /
 * CONNECTIONS deliveries pipelined: a burst
 * goes out in one write a connection and its answers come back a few to a read, where a connection
 * a delivery costs a write and a wake-up each.
 */
const CONNECTIONS = 4;
/** How often a hold removes what it delivered from the queue. */
const CHECKPOINT_MS = 250;
/** The first look after a loop's service ran out of records; then twice as long each time, up to pollMs. */
const LOOK_AGAIN_MS = 25;
/** A busy service is let go after this, so that services waiting behind it get their turn. */
const HOLD_MS = 5_000;
/**
 * After a read that found fewer than BATCH records, the next read waits this long: records keep
 * arriving while a service is caught up, and a read a few at a time (with a claim and a settle for
 * each few, had the hold ended) costs the database more per record than the wait costs in delay.
 */
const LINGER_MS = 25;
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
  /** Pause between looks at an idle queue, unless woken by records queued (wakeup.ts). Default 250 ms. */
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
  // Each service has connections of its own, made when it is first served (remote-fetch.ts loads
  // undici then): deliveries pipelined behind a slow answer wait for it, and another service's,
  // though at the same origin, must not.
  const agents = new Map<number, ReceiverConnections>();
  const pool = (serviceId: number): ReceiverConnections => {
    let made = agents.get(serviceId);
    if (!made) {
      made = new ReceiverConnections({
        allowPrivateAddresses: config.allowPrivateUrls, timeoutMs: config.restServiceTimeoutMs, parallel: PARALLEL, pipelinedConnections: CONNECTIONS,
      });
      agents.set(serviceId, made);
    }
    return made;
  };
  const shutdown = new AbortController();
  let stopped = false;
  let sleepers = new Set<() => void>();

  const wake = (): void => {
    const waking = sleepers;
    sleepers = new Set();
    for (const resume of waking) resume();
  };
  // Records were queued: one idle loop looks (a notification means one service turned busy).
  const nudge = (): void => {
    const [resume] = sleepers;
    resume?.();
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
    const service = await repo.claimDueService(deps.db, now, lockedBy, new Date(now.getTime() + leaseMs));
    if (!service) return false;
    try {
      await serveService(deps, { service, lockedBy, connections: pool(service.id), baseUrl, signal: shutdown.signal });
    } catch (error) {
      options.log('error', `REST service ${service.id}: delivery failed unexpectedly`, error);
      await repo.settleService(deps.db, service.id, lockedBy, {
        done: [], delivered: 0, dropped: 0, attempted: undefined, retryAfter: new Date(deps.clock.now().getTime() + 5000), now: deps.clock.now(),
      });
    }
    return true;
  };

  // A record queued while its service was being served wakes no one (queuing statements notify
  // only an empty queue), and may commit just after the hold's last look and the next claim. So a
  // loop that has just served looks again soon, then less and less often, up to pollMs.
  const loop = async (): Promise<void> => {
    let idleMs = pollMs;
    while (!stopped) {
      let served = false;
      try {
        served = await serveOne();
      } catch (error) {
        if (!stopped) options.log('error', 'REST service deliveries: could not claim a service', error);
      }
      if (served) idleMs = Math.min(pollMs, LOOK_AGAIN_MS);
      else if (!stopped) {
        await sleep(idleMs);
        idleMs = Math.min(pollMs, idleMs * 2);
      }
    }
  };

  const stopWatching = concurrency > 0 ? watchQueued(deps, nudge, options.log) : () => Promise.resolve();
  const loops = concurrency > 0 ? releaseAbandoned(deps, options.log).then(() => Promise.all(Array.from({ length: concurrency }, () => loop()))) : Promise.resolve([]);
  return {
    wake,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      shutdown.abort();
      // Fails the deliveries in flight at once; their senders see the abort and leave them queued.
      const closing = Promise.all([...agents.values()].map((connections) => connections.destroy()));
      await stopWatching();
      wake();
      await loops.catch(() => undefined);
      await repo.releaseServices(deps.db, claimant).catch((error: unknown) => options.log('error', 'REST service deliveries: could not release services', error));
      await closing;
    },
  };
}

/**
 * Services held by this host's ended processes are let go at once rather than at their lease's
 * end; queued rows of deleted services are removed.
 */
async function releaseAbandoned(deps: AppDeps, log: JobLog): Promise<void> {
  for (const holder of await repo.listServiceHolders(deps.db)) {
    if (claimIsAbandoned(holder)) await repo.releaseServices(deps.db, holder);
  }
  await repo.removeOrphanedDeliveries(deps.db).catch((error: unknown) => log('warn', 'REST service deliveries: could not remove deleted services’ queued records', error));
}

interface ServeContext {
  service: repo.ClaimedService;
  lockedBy: string;
  connections: ReceiverConnections;
  baseUrl: string;
  signal: AbortSignal;
}

interface Ready extends repo.QueuedRecord {
  text: string;
}

/**
 * One hold of a service: its queued records sent in bursts of up to PARALLEL. The next BATCH is
 * read (and its bodies rendered) while a burst is out, and what was delivered is removed from the
 * queue every CHECKPOINT_MS, so the bursts never wait for the bookkeeping. The hold ends when a
 * read comes back short and all that was read is sent, at the first failure, or after HOLD_MS
 * (then other services get their turn).
 */
async function serveService(deps: AppDeps, ctx: ServeContext): Promise<void> {
  const { service, lockedBy } = ctx;
  // A failing service is probed with one record; a healthy one gets batches.
  const probing = service.attempts > 0;
  const limit = probing ? 1 : BATCH;
  const secret = service.secret_sealed === null ? null : deps.sealer.open(service.secret_sealed);
  const contentType = service.name === 'generic_xml' ? 'application/xml' : 'application/json';
  const target = deliveryTarget(service.service_url);
  const startedAt = Date.now();

  const ready: Ready[] = [];
  // Read in this hold and still in the queue: a read from the oldest leaves them out.
  const taken = new Set<number>();
  // The highest id read: the next read starts after it, but the first after each checkpoint starts
  // from the oldest not taken, for records committed after others queued later were read.
  let after = 0;
  let fromOldest = false;
  let done: number[] = [];
  let delivered = 0;
  let dropped = 0;
  let last: DeliveryResult | undefined;
  let failed = false;
  /** The last read found fewer records than it asked for: the next one lingers first. */
  let shortRead = false;
  /** A read found nothing (or the one record a probe reads): the hold ends once all is sent. */
  let drained = false;
  let readError: unknown;

  let reading: Promise<void> | undefined;
  const readMore = (): Promise<void> => {
    reading ??= (async () => {
      if (shortRead) await delay(LINGER_MS, undefined, { signal: ctx.signal }).catch(() => undefined); // cut short by a stop
      const from: repo.QueuePosition = !fromOldest ? { after } : taken.size > 0 ? { taken: [...taken] } : { after: 0 };
      fromOldest = false;
      const queued = await readQueued(deps, service, ctx.baseUrl, limit, from);
      shortRead = queued.length < limit;
      if (queued.length === 0 || probing) drained = true;
      for (const q of queued) {
        taken.add(q.id);
        if (q.id > after) after = q.id;
        if (hasText(q)) ready.push(q);
        else done.push(q.id); // the record was deleted before its turn
      }
    })().finally(() => {
      reading = undefined;
    });
    return reading;
  };

  // Delivered records leave the queue while the hold goes on; one checkpoint at a time.
  let checkpointing: Promise<void> = Promise.resolve();
  const checkpoint = (): Promise<void> => {
    checkpointing = checkpointing.then(async () => {
      if (done.length === 0) return;
      const ids = done;
      const counted = { delivered, dropped };
      done = [];
      delivered = 0;
      dropped = 0;
      try {
        await repo.settleService(deps.db, service.id, lockedBy, {
          done: ids, ...counted, attempted: { status: last?.status ?? null, error: null, ok: true }, retryAfter: null, now: deps.clock.now(), release: false,
        });
        for (const id of ids) taken.delete(id);
        fromOldest = true;
      } catch {
        // Left for the final settle.
        done.push(...ids);
        delivered += counted.delivered;
        dropped += counted.dropped;
      }
    });
    return checkpointing;
  };
  const checkpoints = setInterval(() => {
    if (!failed) void checkpoint();
  }, CHECKPOINT_MS);
  // The hold on the service is renewed meanwhile.
  const renew = setInterval(() => {
    const until = new Date(deps.clock.now().getTime() + 2 * deps.config.restServiceTimeoutMs + 15_000);
    repo.extendServiceLease(deps.db, service.id, lockedBy, until).catch(() => undefined);
  }, Math.min(deps.config.restServiceTimeoutMs, HOLD_MS));

  const goOn = (): boolean => !failed && readError === undefined && !ctx.signal.aborted && Date.now() - startedAt < HOLD_MS;
  /**
   * Sends what is ready as one burst, dispatched together (one write a connection), and waits for
   * all its answers: while they come back the next records gather, so a busy service's records go
   * out a burst per round trip rather than one write and one wake-up each.
   */
  const sendBurst = async (burst: readonly Ready[]): Promise<void> => {
    const nowMs = deps.clock.now().getTime();
    const sending: Promise<DeliveryResult>[] = [];
    const agent = await ctx.connections.current();
    const connectionsBefore = agent.connectionsMade;
    agent.together(() => {
      for (const q of burst) {
        sending.push(postDelivery(agent.dispatcher, target, { body: q.text, contentType, event: q.event, deliveryId: q.id, secret, nowMs }));
      }
    });
    const results = await Promise.all(sending);
    ctx.connections.observe(burst.length, agent.connectionsMade - connectionsBefore);
    if (ctx.signal.aborted) return; // shutting down: what was in flight stays queued
    const now = deps.clock.now().getTime();
    burst.forEach((q, i) => {
      const result = results[i];
      if (!result) return;
      if (result.ok) {
        done.push(q.id);
        delivered += 1;
      } else {
        failed = true;
        if (now - q.createdMs >= deps.config.restServiceRetryMs) {
          done.push(q.id);
          dropped += 1;
        }
      }
      if (!last || !result.ok) last = result;
    });
  };
  try {
    await readMore();
    while (goOn()) {
      // The next records are read while this burst is out.
      if (ready.length <= PARALLEL && !drained) readMore().catch((error: unknown) => (readError = error));
      if (ready.length === 0) {
        if (drained && reading === undefined) break;
        try {
          await readMore();
        } catch (error) {
          readError = error;
        }
        continue;
      }
      await sendBurst(ready.splice(0, PARALLEL));
    }
    await reading?.catch(() => undefined);
  } finally {
    clearInterval(checkpoints);
    clearInterval(renew);
    await checkpointing;
  }
  const now = deps.clock.now();
  const failures = failed ? service.attempts + 1 : 0;
  await repo.settleService(deps.db, service.id, lockedBy, {
    done, delivered, dropped,
    attempted: last ? { ...last, ok: !failed } : undefined,
    retryAfter: failed ? new Date(now.getTime() + deliveryRetrySeconds(failures) * 1000) : readError === undefined ? null : new Date(now.getTime() + 5000),
    now,
  });
  if (readError !== undefined) throw readError;
}

/**
 * The service's next queued records with their bodies: each record's JSON as the data API shows
 * it, or its submitted XML. One statement; read after an id, kept prepared.
 */
async function readQueued(deps: AppDeps, service: repo.ClaimedService, baseUrl: string, limit: number, from: repo.QueuePosition): Promise<repo.QueuedRecord[]> {
  const queue = repo.queuedDeliveries(service.id, limit, from);
  const xml = service.name === 'generic_xml';
  const prepared = 'after' in from ? (xml ? 'rest-queued-xml' : 'rest-queued-json') : undefined;
  return xml ? repo.queuedRecordXmls(deps.db, service.form_id, queue, prepared) : queuedRecordTexts(deps.db, service.form_id, baseUrl, queue, prepared);
}

function hasText(queued: repo.QueuedRecord): queued is Ready {
  return queued.text !== undefined;
}
