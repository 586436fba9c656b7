// SQL for REST services (rest_services) and their delivery queue (rest_service_outbox).
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';
import { preparedMarker } from '../../platform/prepared-marker.ts';
import type { RestServicesTable } from '../../platform/schema.ts';

export type RestServiceRow = Selectable<RestServicesTable>;
export type DeliveryEvent = 'created' | 'edited' | 'reviewed';

export interface ServiceFields {
  formId: number;
  name: string;
  serviceUrl: string;
  /** Sealed; null: no signature. */
  secretSealed: string | null;
  sendUpdates: boolean;
}

/** The channel a queuing statement notifies (at its commit) when it queued into an empty queue. */
export const QUEUED_CHANNEL = 'gather_rest_outbox';

/**
 * The event column of a queuing statement: `event`, and at most once per statement, when the
 * service's queue held nothing committed, a NOTIFY on QUEUED_CHANNEL, which PostgreSQL delivers
 * at the commit: an idle dispatcher in any process then wakes at once rather than at its next
 * poll. A busy queue is not notified: its dispatcher is serving it, and goes on without sleeping
 * (every notifying commit takes one cluster-wide lock, so a notification per record would
 * serialise a burst's commits).
 */
function eventNotifyingIdle(serviceId: RawBuilder<unknown>, event: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`CASE WHEN ${anyQueued(serviceId)} THEN ${event}
    ELSE (SELECT ${event} FROM pg_notify(${sql.lit(QUEUED_CHANNEL)}, '')) END`;
}

/**
 * Whether the service has a queued record: a probe of the queue's index from its newest end. The
 * removed deliveries leave their index entries at the oldest end until a vacuum (tens of thousands
 * after a burst), and a probe from there steps over all of them; the newest entry is one still
 * queued whenever the service is busy.
 */
function anyQueued(serviceId: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(SELECT o.id FROM rest_service_outbox o WHERE o.service_id = ${serviceId} ORDER BY o.id DESC LIMIT 1) IS NOT NULL`;
}

/**
 * An INSERT queuing `records` (a relation of records' id and form_id) for each of their forms'
 * services, or only those taking updates. Each service's event, with its notification when its
 * queue was idle, is worked out once a statement (`due`), not once a record: the probe of the
 * queue's index, made for every record of a batch, was measurable (bench/RESULTS.md, 2026-11-29).
 * Queued in the records' id order, so that they are delivered in it.
 */
function queueRecords(records: RawBuilder<unknown>, event: RawBuilder<unknown>, updatesOnly: boolean): RawBuilder<unknown> {
  return sql`INSERT INTO rest_service_outbox (service_id, instance_id, event)
    WITH recs AS (SELECT r.id, r.form_id FROM ${records} r),
      due AS MATERIALIZED (SELECT s.id, s.form_id, ${eventNotifyingIdle(sql.ref('s.id'), event)} AS event FROM rest_services s
        WHERE s.form_id IN (SELECT recs.form_id FROM recs) ${updatesOnly ? sql`AND s.send_updates` : sql``})
    SELECT due.id, recs.id, due.event FROM recs JOIN due ON due.form_id = recs.form_id ORDER BY recs.id, due.id`;
}

/**
 * For a statement storing new records (a submission, src/modules/submissions/repository.ts; an
 * import's batch, src/modules/imports/repository.ts): a data-modifying CTE queuing the records in
 * `ins` (their id and form_id) for each of their form's services, in the statement that stores
 * them. No service: an index probe that inserts nothing.
 */
export const QUEUE_INSERTED_RECORD: RawBuilder<unknown> = queueRecords(sql.ref('ins'), sql`'created'::text`, false);

/** The same for records an import edited, in `edited` (their id and form_id): services taking updates. */
export const QUEUE_EDITED_RECORDS: RawBuilder<unknown> = queueRecords(sql.ref('edited'), sql`'edited'::text`, true);

/** Queues records of one form for its services, inside the transaction that changes them. */
export async function queueDeliveries(db: DbOrTx, formId: number, instanceIds: readonly number[], event: DeliveryEvent): Promise<void> {
  if (instanceIds.length === 0) return;
  const records = sql`(SELECT u.id, ${formId}::int AS form_id FROM unnest(${[...instanceIds]}::int[]) AS u(id))`;
  await queueRecords(records, sql`${event}::text`, event !== 'created').execute(db);
}

/** Queues reviewed records (of any forms) for the services that take updates. */
export async function queueReviewedRecords(db: DbOrTx, instanceIds: readonly number[]): Promise<void> {
  if (instanceIds.length === 0) return;
  const records = sql`(SELECT i.id, i.form_id FROM instances i WHERE i.id = ANY(${[...instanceIds]}::int[]))`;
  await queueRecords(records, sql`'reviewed'::text`, true).execute(db);
}

export async function insertService(db: DbOrTx, fields: ServiceFields, createdBy: number, now: Date): Promise<RestServiceRow | undefined> {
  return db
    .insertInto('rest_services')
    .values({
      form_id: fields.formId, name: fields.name, service_url: fields.serviceUrl, secret_sealed: fields.secretSealed,
      send_updates: fields.sendUpdates, created_by: createdBy, date_created: now, date_modified: now,
    })
    .onConflict((oc) => oc.columns(['form_id', 'name', 'service_url']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function findService(db: DbOrTx, id: number): Promise<RestServiceRow | undefined> {
  return db.selectFrom('rest_services').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listServicesOfForms(db: DbOrTx, formIds: readonly number[]): Promise<RestServiceRow[]> {
  if (formIds.length === 0) return [];
  return db.selectFrom('rest_services').selectAll().where('form_id', 'in', [...formIds]).orderBy('id').execute();
}

/** Records waiting per service. */
export async function countPending(db: DbOrTx, serviceIds: readonly number[]): Promise<Map<number, number>> {
  if (serviceIds.length === 0) return new Map();
  const rows = await sql<{ service_id: number; n: number }>`SELECT service_id, count(*)::int AS n FROM rest_service_outbox
    WHERE service_id = ANY(${[...serviceIds]}::int[]) GROUP BY service_id`.execute(db);
  return new Map(rows.rows.map((r) => [r.service_id, Number(r.n)]));
}

/** False when another service of the form already has this name and URL. */
export async function updateService(db: DbOrTx, id: number, fields: ServiceFields, now: Date): Promise<boolean> {
  const clash = await db
    .selectFrom('rest_services').select('id')
    .where('form_id', '=', fields.formId).where('name', '=', fields.name).where('service_url', '=', fields.serviceUrl).where('id', '<>', id)
    .executeTakeFirst();
  if (clash) return false;
  await db
    .updateTable('rest_services')
    .set({
      form_id: fields.formId, name: fields.name, service_url: fields.serviceUrl, secret_sealed: fields.secretSealed,
      send_updates: fields.sendUpdates, date_modified: now,
    })
    .where('id', '=', id)
    .execute();
  return true;
}

/** Deletes the service and its waiting deliveries (the queue has no foreign key: migration 0028). */
export async function deleteService(db: DbOrTx, id: number): Promise<void> {
  await sql`WITH queued AS (DELETE FROM rest_service_outbox WHERE service_id = ${id}::int)
    DELETE FROM rest_services WHERE id = ${id}::int`.execute(db);
}

/** Removes queued deliveries whose service is gone (left by a record stored as its service was deleted). */
export async function removeOrphanedDeliveries(db: DbOrTx): Promise<void> {
  await sql`DELETE FROM rest_service_outbox o WHERE NOT EXISTS (SELECT 1 FROM rest_services s WHERE s.id = o.service_id)`.execute(db);
}

// ---------------------------------------------------------------- delivery

export interface ClaimedService {
  id: number;
  form_id: number;
  name: string;
  service_url: string;
  secret_sealed: string | null;
  attempts: number;
}

/**
 * Takes the service that has waited longest among those with queued records, not in back-off,
 * not held by another dispatcher, and of a live form; holds it until `lockedUntil`. One statement,
 * atomic without a transaction around it: an idle loop's look is one round trip, not three.
 */
export async function claimDueService(db: DbOrTx, now: Date, lockedBy: string, lockedUntil: Date): Promise<ClaimedService | undefined> {
  const result = await sql<ClaimedService>`UPDATE rest_services s SET locked_by = ${lockedBy}::text, locked_until = ${lockedUntil}::timestamptz
    WHERE s.id = (
      SELECT c.id FROM rest_services c JOIN forms f ON f.id = c.form_id AND f.deleted_at IS NULL
      WHERE (c.retry_after IS NULL OR c.retry_after <= ${now}::timestamptz)
        AND (c.locked_until IS NULL OR c.locked_until < ${now}::timestamptz)
        -- A probe of the queue's index per service: as EXISTS, the planner may hash the whole queue.
        AND ${anyQueued(sql.ref('c.id'))}
      ORDER BY c.last_attempt_at NULLS FIRST, c.id
      LIMIT 1 FOR UPDATE OF c SKIP LOCKED)
    RETURNING s.id, s.form_id, s.name, s.service_url, s.secret_sealed, s.attempts`.execute(db);
  return result.rows[0];
}

/**
 * Where a dispatcher's next read of a service's queue starts: after the highest id it has read, or,
 * with `taken` (what it read and has not yet removed), from the oldest record it has not read. A
 * record's id is drawn when it is queued and the record is seen when its transaction commits, so a
 * record committed late can lie below ids read already: only the second kind of read finds it.
 */
export type QueuePosition = { after: number } | { taken: readonly number[] };

/**
 * The service's next `limit` queued records (id, instance_id, event, created_at), as a query to
 * read them with (queuedRecordTexts, queuedRecordXmls). Read after an id, its text is the same for
 * any position: a statement that can be kept prepared.
 */
export function queuedDeliveries(serviceId: number, limit: number, from: QueuePosition): RawBuilder<unknown> {
  // A literal array planned with its values is hashed; as a parameter of a kept plan it was
  // searched element by element (bench/RESULTS.md, 2026-11-29): the `taken` form is not prepared.
  const unread = 'after' in from ? sql`o.id > ${String(from.after)}::bigint` : sql`NOT (o.id = ANY(${from.taken.map(String)}::bigint[]))`;
  return sql`SELECT o.id, o.instance_id, o.event, o.created_at FROM rest_service_outbox o
    WHERE o.service_id = ${serviceId}::int AND ${unread} ORDER BY o.id LIMIT ${limit}::int`;
}

/** A queued delivery read with its record (queuedRecordTexts, queuedRecordXmls). */
export interface QueuedRecord {
  /** The queue entry's id. */
  id: number;
  event: DeliveryEvent;
  /** When it was queued, epoch milliseconds. */
  createdMs: number;
  /** The body: the record's JSON as the data API shows it, or its XML; undefined when the record was deleted. */
  text: string | undefined;
}

/** queuedRecordTexts (src/modules/submissions/repository.ts) for XML services: each queued record with its submitted XML. */
export async function queuedRecordXmls(db: DbOrTx, formId: number, queue: RawBuilder<unknown>, prepared?: string): Promise<QueuedRecord[]> {
  const marker = sql.raw(prepared === undefined ? '' : preparedMarker(prepared));
  const result = await sql<{ delivery_id: string; event: DeliveryEvent; created_ms: number; xml: string | null }>`${marker}WITH q AS MATERIALIZED (${queue})
    SELECT q.id AS delivery_id, q.event, (extract(epoch FROM q.created_at) * 1000)::float8 AS created_ms, i.xml
    FROM q LEFT JOIN instances i ON i.id = q.instance_id AND i.form_id = ${formId}::int AND i.deleted_at IS NULL
    ORDER BY q.id`.execute(db);
  return result.rows.map((row) => ({ id: Number(row.delivery_id), event: row.event, createdMs: row.created_ms, text: row.xml ?? undefined }));
}

export interface DeliveryOutcome {
  /** Deliveries to remove from the queue: delivered, their record gone, or dropped. */
  done: readonly number[];
  delivered: number;
  dropped: number;
  /** The last attempt's status and error; undefined when nothing was attempted. */
  attempted: { status: number | null; error: string | null; ok: boolean } | undefined;
  /** Back-off after a failure; null: none. */
  retryAfter: Date | null;
  now: Date;
  /** False: a checkpoint of a long hold; the service stays held (and retryAfter is ignored). */
  release?: boolean;
}

/**
 * Removes finished deliveries and writes the delivery log, while `lockedBy` holds the service;
 * then lets the service go, unless `release` is false. False when `lockedBy` no longer held it.
 */
export async function settleService(db: DbOrTx, serviceId: number, lockedBy: string, outcome: DeliveryOutcome): Promise<boolean> {
  const { attempted } = outcome;
  const ok = attempted?.ok ?? true;
  const release = outcome.release ?? true;
  const result = await sql`WITH gone AS (
      DELETE FROM rest_service_outbox WHERE service_id = ${serviceId}::int AND id = ANY(${outcome.done.map(String)}::bigint[])
    )
    UPDATE rest_services SET
      locked_by = CASE WHEN ${release}::bool THEN NULL ELSE locked_by END,
      locked_until = CASE WHEN ${release}::bool THEN NULL ELSE locked_until END,
      delivered_count = delivered_count + ${outcome.delivered}::int,
      dropped_count = dropped_count + ${outcome.dropped}::int,
      retry_after = CASE WHEN ${release}::bool THEN ${outcome.retryAfter}::timestamptz ELSE retry_after END,
      attempts = CASE WHEN ${attempted === undefined}::bool THEN attempts WHEN ${ok}::bool THEN 0 ELSE attempts + 1 END,
      last_status = CASE WHEN ${attempted === undefined}::bool THEN last_status ELSE ${attempted?.status ?? null}::int END,
      last_error = CASE WHEN ${attempted === undefined}::bool THEN last_error ELSE ${attempted?.error ?? null}::text END,
      last_attempt_at = CASE WHEN ${attempted === undefined}::bool THEN last_attempt_at ELSE ${outcome.now}::timestamptz END,
      last_delivery_at = CASE WHEN ${outcome.delivered}::int > 0 THEN ${outcome.now}::timestamptz ELSE last_delivery_at END
    WHERE id = ${serviceId}::int AND locked_by = ${lockedBy}::text`.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
}

/** Lets every service this dispatcher holds go (graceful stop), without touching the log. */
export async function releaseServices(db: DbOrTx, lockedByPrefix: string): Promise<void> {
  const escaped = lockedByPrefix.replace(/[\\%_]/g, (c) => `\\${c}`);
  await db.updateTable('rest_services').set({ locked_by: null, locked_until: null }).where('locked_by', 'like', `${escaped}%`).execute();
}

/** Renews the hold on a service between rounds of a long batch. */
export async function extendServiceLease(db: DbOrTx, serviceId: number, lockedBy: string, lockedUntil: Date): Promise<void> {
  await db.updateTable('rest_services').set({ locked_until: lockedUntil }).where('id', '=', serviceId).where('locked_by', '=', lockedBy).execute();
}

/** Who holds each held service. */
export async function listServiceHolders(db: DbOrTx): Promise<string[]> {
  const rows = await db.selectFrom('rest_services').select('locked_by').where('locked_by', 'is not', null).execute();
  return [...new Set(rows.map((r) => r.locked_by).filter((v): v is string => v !== null))];
}
