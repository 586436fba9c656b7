// Fault suite, concurrent duplicates and edits over real HTTP against a server process (the
// in-process races are test/api/submission-edit-races.test.ts): 20 different edits of one version
// at once, and one edit sent 20 times at once. One edit wins; rivals get 409, resends 202; never
// a 500; every acknowledged version is stored (live or in history) exactly once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';
import { createServerStorage, type ServerProcess, type ServerStorage } from '../server-process.ts';
import { getJson, postMultipart, publish, records, registerUser, report } from './harness.ts';

const AT_ONCE = 20;
const ROUNDS = 3;

let storage: ServerStorage;
let server: ServerProcess | undefined;
let auth = '';
let formId = 0;

before(async () => {
  storage = await createServerStorage();
  server = await storage.start();
  auth = await registerUser(server.baseUrl, 'bob');
  formId = await publish(server.baseUrl, auth, formFile(HOUSEHOLD_CSV, 'household.csv'));
});
after(async () => {
  await server?.kill();
  await storage.remove();
});

function running(): ServerProcess {
  assert.ok(server, 'the server is running');
  return server;
}

async function send(xml: string): Promise<number> {
  const res = await postMultipart(running().baseUrl, '/bob/submission', auth, [{ name: 'xml_submission_file', fileName: 'submission.xml', content: xml, contentType: 'text/xml' }]);
  await res.arrayBuffer();
  return res.status;
}

/** The live version and the history of the one record whose name starts with `prefix`. */
async function storedVersions(prefix: string): Promise<{ live: string[]; archived: string[] }> {
  const found = (await records<{ _id: number; _uuid: string; name: string }>(running().baseUrl, auth, formId, ['_id', '_uuid', 'name'])).filter((r) => r.name.startsWith(prefix));
  const archived: string[] = [];
  for (const record of found) {
    const history = await getJson<Array<{ _uuid: string }>>(running().baseUrl, `/api/v1/data/${formId}/${record._id}/history`, auth);
    archived.push(...history.map((h) => h._uuid));
  }
  return { live: found.map((r) => r._uuid), archived };
}

interface Tally {
  sent: number;
  byStatus: Map<number, number>;
  acknowledged: number;
  stored: number;
  lost: number;
  duplicated: number;
}

function tally(): Tally {
  return { sent: 0, byStatus: new Map(), acknowledged: 0, stored: 0, lost: 0, duplicated: 0 };
}

function figures(t: Tally): Record<string, number> {
  const status = (code: number): number => t.byStatus.get(code) ?? 0;
  const others = [...t.byStatus.entries()].filter(([code]) => ![201, 202, 409].includes(code)).reduce((n, [, count]) => n + count, 0);
  return { sent: t.sent, 'answered 201': status(201), 'answered 202': status(202), 'answered 409': status(409), 'answered otherwise': others, acknowledged: t.acknowledged, stored: t.stored, lost: t.lost, duplicated: t.duplicated };
}

/** Counts how the acknowledged versions (`acknowledged`) are found among the stored ones. */
function account(t: Tally, acknowledged: readonly string[], stored: { live: string[]; archived: string[] }): void {
  const all = [...stored.live, ...stored.archived];
  for (const uuid of new Set(acknowledged)) {
    const times = all.filter((u) => u === uuid).length;
    t.acknowledged += 1;
    if (times === 0) t.lost += 1;
    else t.stored += 1;
    if (times > 1) t.duplicated += 1;
  }
}

async function race(t: Tally, original: string, edits: Array<{ uuid: string; name: string }>): Promise<Array<{ uuid: string; status: number }>> {
  const statuses = await Promise.all(edits.map((e) => send(householdXml({ uuid: e.uuid, name: e.name, deprecated: original }))));
  t.sent += edits.length;
  for (const status of statuses) t.byStatus.set(status, (t.byStatus.get(status) ?? 0) + 1);
  return edits.map((e, i) => ({ uuid: e.uuid, status: statuses[i] ?? 0 }));
}

test(`${AT_ONCE} different edits of one version at once: one wins, the rest 409, none lost`, { timeout: 300_000 }, async () => {
  const t = tally();
  for (let round = 0; round < ROUNDS; round++) {
    const prefix = `rivals-${round}-`;
    const original = randomUUID();
    assert.equal(await send(householdXml({ uuid: original, name: `${prefix}orig` })), 201);
    const outcomes = await race(t, original, Array.from({ length: AT_ONCE }, (_, i) => ({ uuid: randomUUID(), name: `${prefix}edit${i}` })));
    const won = outcomes.filter((o) => o.status === 201).map((o) => o.uuid);
    const stored = await storedVersions(prefix);
    account(t, [original, ...won], stored);
    assert.equal(won.length, 1, `round ${round}: ${outcomes.map((o) => o.status).join(' ')}`);
    assert.equal(outcomes.filter((o) => o.status === 409).length, AT_ONCE - 1, `round ${round}: ${outcomes.map((o) => o.status).join(' ')}`);
    assert.deepEqual(stored.live, won, 'one record, at the winning edit');
    assert.deepEqual(stored.archived, [original], 'the original archived once');
  }
  report('concurrent edits', figures(t));
  assert.equal(t.lost, 0);
  assert.equal(t.duplicated, 0);
});

test(`one edit sent ${AT_ONCE} times at once: applied once, the rest 202`, { timeout: 300_000 }, async () => {
  const t = tally();
  for (let round = 0; round < ROUNDS; round++) {
    const prefix = `resend-${round}-`;
    const original = randomUUID();
    assert.equal(await send(householdXml({ uuid: original, name: `${prefix}orig` })), 201);
    const edit = { uuid: randomUUID(), name: `${prefix}edit` };
    const outcomes = await race(t, original, Array.from({ length: AT_ONCE }, () => edit));
    const stored = await storedVersions(prefix);
    account(t, [original, ...outcomes.filter((o) => o.status === 201 || o.status === 202).map((o) => o.uuid)], stored);
    assert.equal(outcomes.filter((o) => o.status === 201).length, 1, `round ${round}: ${outcomes.map((o) => o.status).join(' ')}`);
    assert.equal(outcomes.filter((o) => o.status === 202).length, AT_ONCE - 1, `round ${round}: ${outcomes.map((o) => o.status).join(' ')}`);
    assert.deepEqual(stored.live, [edit.uuid]);
    assert.deepEqual(stored.archived, [original]);
  }
  report('duplicate edits', figures(t));
  assert.equal(t.lost, 0);
  assert.equal(t.duplicated, 0);
});
