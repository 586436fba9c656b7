// Fault suite, REST services: a server process delivering records to a slow receiver (a local
// HTTP server started here plays the remote service) is killed with SIGKILL while deliveries are
// in flight, then started again on the same data. Every acknowledged record reaches the receiver
// at least once. Delivery is at least once, not exactly once: a record whose POST was under way
// (or answered, but not yet removed from the queue) when the process died is sent again after
// the restart, with the same X-Gather-Delivery id, by which the receiver can drop the repeat.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';
import { createServerStorage, type ServerProcess, type ServerStorage } from '../server-process.ts';
import { getJson, postMultipart, publish, registerUser, report, waitFor } from './harness.ts';

const RECORDS = 200;
const SENDERS = 8;

interface Arrival {
  uuid: string;
  deliveryId: string;
  event: string;
}

/** The remote service: answers each POST after `delayMs`, and notes every POST that reached it. */
class SlowReceiver {
  readonly arrivals: Arrival[] = [];
  delayMs = 1000;
  unanswered = 0;
  readonly #server: Server;
  readonly #waiting = new Set<ServerResponse>();

  constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const record = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { _uuid?: unknown };
        this.arrivals.push({ uuid: String(record._uuid), deliveryId: String(req.headers['x-gather-delivery']), event: String(req.headers['x-gather-event']) });
        this.unanswered += 1;
        this.#waiting.add(res);
        setTimeout(() => {
          this.#waiting.delete(res);
          this.unanswered -= 1;
          if (!res.destroyed) res.writeHead(200).end();
        }, this.delayMs);
      });
    });
  }

  async listen(): Promise<string> {
    this.#server.listen(0, '127.0.0.1');
    await once(this.#server, 'listening');
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`;
  }

  close(): void {
    for (const res of this.#waiting) res.destroy();
    this.#server.closeAllConnections();
    this.#server.close();
  }
}

let storage: ServerStorage;
let server: ServerProcess | undefined;
const receiver = new SlowReceiver();
before(async () => {
  storage = await createServerStorage();
});
after(async () => {
  await server?.kill();
  receiver.close();
  await storage.remove();
});

test('REST services: every record reaches the receiver across a SIGKILL mid-delivery', { timeout: 300_000 }, async () => {
  const hook = await receiver.listen();
  const env = { ALLOW_PRIVATE_URLS: 'true', REST_SERVICE_TIMEOUT: '10' };
  server = await storage.start(env);
  const auth = await registerUser(server.baseUrl, 'bob');
  const formId = await publish(server.baseUrl, auth, formFile(HOUSEHOLD_CSV, 'household.csv'));
  const created = await fetch(`${server.baseUrl}/api/v1/restservices`, {
    method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify({ xform: formId, name: 'generic_json', service_url: hook }),
  });
  assert.equal(created.status, 201, await created.text());

  // Every record acknowledged while the receiver, answering each POST after a second, is still
  // taking the first of them.
  const first = server;
  const uuids = Array.from({ length: RECORDS }, () => randomUUID());
  let next = 0;
  const sender = async (): Promise<void> => {
    for (let i = next++; i < RECORDS; i = next++) {
      const res = await postMultipart(first.baseUrl, '/bob/submission', auth, [
        { name: 'xml_submission_file', fileName: 'submission.xml', content: householdXml({ uuid: uuids[i] ?? '', name: `Record ${i}` }), contentType: 'text/xml' },
      ]);
      await res.arrayBuffer();
      assert.equal(res.status, 201);
    }
  };
  await Promise.all(Array.from({ length: SENDERS }, sender));
  await waitFor('deliveries in flight', () => Promise.resolve(receiver.unanswered > 0 ? true : undefined), 30_000, 20);
  const reachedBeforeKill = new Set(receiver.arrivals.map((a) => a.uuid)).size;
  const inFlightAtKill = receiver.unanswered;
  assert.ok(reachedBeforeKill < RECORDS, 'the kill comes before every record was sent');
  await first.kill();
  const arrivalsBeforeRestart = receiver.arrivals.length;

  receiver.delayMs = 50;
  server = await storage.start(env);
  const restarted = server;
  await waitFor('every record at the receiver', () => Promise.resolve(new Set(receiver.arrivals.map((a) => a.uuid)).size === RECORDS ? true : undefined), 120_000);
  // Whatever the restarted server still had to send has gone once its queue is empty.
  interface Listed { delivery: { pending: number; delivered: number } }
  const settled = await waitFor('an empty queue', async () => {
    const [service] = await getJson<Listed[]>(restarted.baseUrl, `/api/v1/restservices?xform=${formId}`, auth);
    return service && service.delivery.pending === 0 && receiver.unanswered === 0 ? service : undefined;
  }, 60_000);

  const byRecord = new Map<string, Arrival[]>();
  for (const arrival of receiver.arrivals) byRecord.set(arrival.uuid, [...(byRecord.get(arrival.uuid) ?? []), arrival]);
  assert.deepEqual([...byRecord.keys()].sort(), [...uuids].sort(), 'every record, and only those, reached the receiver');
  const repeated = [...byRecord.values()].filter((arrivals) => arrivals.length > 1);
  for (const arrivals of byRecord.values()) {
    assert.equal(new Set(arrivals.map((a) => a.deliveryId)).size, 1, `one delivery id per record across the retry: ${arrivals[0]?.uuid}`);
    assert.ok(arrivals.every((a) => a.event === 'created'));
  }
  assert.equal(new Set([...byRecord.values()].map((arrivals) => arrivals[0]?.deliveryId)).size, RECORDS, 'each record its own delivery id');
  report('restservices', {
    records: RECORDS,
    'reached before the kill': reachedBeforeKill,
    'in flight at the kill': inFlightAtKill,
    'POSTs before the restart': arrivalsBeforeRestart,
    'POSTs in all': receiver.arrivals.length,
    'sent twice (same delivery id)': repeated.length,
    lost: RECORDS - byRecord.size,
    'delivered in the service log': settled.delivery.delivered,
  });
  assert.ok(repeated.length >= 1, 'a delivery in flight at the kill is sent again');
  await restarted.stop();
  server = undefined;
});
