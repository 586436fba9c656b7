// Fault suite, edits: chains of edits (meta/deprecatedID), each edit sent twice at once as a device
// retrying would, on several records at the same time, while the server is killed (SIGKILL). After
// the restart the devices resend the edit they got no answer for; then every acknowledged version
// (201 or 202) is either the record's live version or in its history, exactly once, and the live
// version is the last edit of its chain.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';
import { createServerStorage, type ServerProcess, type ServerStorage } from '../server-process.ts';
import { getJson, postMultipart, publish, records, registerUser, report } from './harness.ts';

const CHAINS = 8;
/** Kills once this many edits have been acknowledged in all. */
const KILL_AFTER = 60;

let storage: ServerStorage;
let server: ServerProcess | undefined;
before(async () => {
  storage = await createServerStorage();
});
after(async () => {
  await server?.kill();
  await storage.remove();
});

interface Chain {
  readonly name: string;
  /** Every version acknowledged, oldest first: the original and its edits. */
  readonly versions: string[];
  /** The edit sent and not answered when the server died. */
  pending: string | undefined;
}

let sent = 0;

async function send(baseUrl: string, auth: string, xml: string): Promise<number> {
  sent += 1;
  const res = await postMultipart(baseUrl, '/bob/submission', auth, [{ name: 'xml_submission_file', fileName: 'submission.xml', content: xml, contentType: 'text/xml' }]);
  await res.arrayBuffer();
  return res.status;
}

function editXml(chain: Chain, uuid: string, step: number, deprecated: string): string {
  return householdXml({ uuid, name: `${chain.name}v${step}`, deprecated });
}

test('edits: every acknowledged edit survives a SIGKILL, live or in history exactly once', { timeout: 600_000 }, async () => {
  server = await storage.start();
  const running = server;
  const auth = await registerUser(running.baseUrl, 'bob');
  const formId = await publish(running.baseUrl, auth, formFile(HOUSEHOLD_CSV, 'household.csv'));

  const chains: Chain[] = [];
  for (let c = 0; c < CHAINS; c++) {
    const chain: Chain = { name: `chain${c}-`, versions: [randomUUID()], pending: undefined };
    assert.equal(await send(running.baseUrl, auth, householdXml({ uuid: chain.versions[0] ?? '', name: `${chain.name}v0` })), 201);
    chains.push(chain);
  }

  let acknowledged = 0;
  let killed = false;
  const editor = async (chain: Chain): Promise<void> => {
    for (let step = 1; !killed; step++) {
      const uuid = randomUUID();
      const current = chain.versions.at(-1) ?? '';
      chain.pending = uuid;
      let statuses: number[];
      try {
        // The same edit twice at once: a device resending before its first answer came.
        statuses = await Promise.all([0, 1].map(() => send(running.baseUrl, auth, editXml(chain, uuid, step, current))));
      } catch {
        return; // the server died: this edit's fate is unknown to the device
      }
      assert.deepEqual([...statuses].sort(), [201, 202], `an edit and its resend answered ${statuses.join(', ')}`);
      chain.pending = undefined;
      chain.versions.push(uuid);
      acknowledged += 1;
      if (acknowledged >= KILL_AFTER && !killed) {
        killed = true;
        await running.kill();
      }
    }
  };
  await Promise.all(chains.map(editor));
  assert.ok(killed, 'the server was killed while edits were in flight');
  const unanswered = chains.filter((c) => c.pending !== undefined).length;

  server = await storage.start();
  const restarted = server;
  // The devices resend the edit they had no answer for: stored once (202) or now (201).
  for (const chain of chains) {
    if (chain.pending === undefined) continue;
    const step = chain.versions.length;
    const status = await send(restarted.baseUrl, auth, editXml(chain, chain.pending, step, chain.versions.at(-1) ?? ''));
    assert.ok(status === 201 || status === 202, `the resent edit answered ${status}`);
    chain.versions.push(chain.pending);
    chain.pending = undefined;
  }

  const live = await records<{ _id: number; _uuid: string; name: string }>(restarted.baseUrl, auth, formId, ['_id', '_uuid', 'name']);
  let stored = 0;
  let lost = 0;
  let duplicated = 0;
  for (const chain of chains) {
    const current = live.filter((r) => r.name.startsWith(chain.name));
    assert.equal(current.length, 1, `${chain.name}: one live record`);
    const record = current[0];
    assert.ok(record);
    const history = await getJson<Array<{ _uuid: string }>>(restarted.baseUrl, `/api/v1/data/${formId}/${record._id}/history`, auth);
    const all = [record._uuid, ...history.map((h) => h._uuid)];
    for (const uuid of chain.versions) {
      const times = all.filter((u) => u === uuid).length;
      if (times === 0) lost += 1;
      else stored += 1;
      if (times > 1) duplicated += 1;
    }
    assert.equal(record._uuid, chain.versions.at(-1), `${chain.name}: the live version is the last edit`);
    assert.equal(all.length, new Set(all).size, `${chain.name}: no version stored twice`);
    assert.deepEqual(new Set(all), new Set(chain.versions), `${chain.name}: exactly the acknowledged versions are stored`);
  }
  const versions = chains.reduce((n, c) => n + c.versions.length, 0);
  report('edits', { sent, 'edits acknowledged before the kill': acknowledged, 'unanswered at the kill': unanswered, versions, stored, lost, duplicated });
  assert.equal(lost, 0);
  assert.equal(duplicated, 0);
  await restarted.stop();
  server = undefined;
});
