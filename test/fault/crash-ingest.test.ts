// Fault suite, ingest: submissions with a photo, sent at concurrency to /submission and
// /{username}/submission, while the server is killed (SIGKILL) twice. After each restart every
// submission acknowledged (201, or 202 for one already stored) is there once with its photo; the
// devices then resend what was not acknowledged, as ODK Collect does, and every submission sent
// ends stored exactly once. test/api/submission-crash.test.ts covers the plain single-kill case.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';
import { createServerStorage, type ServerProcess, type ServerStorage } from '../server-process.ts';
import { postMultipart, publish, records, registerUser, report } from './harness.ts';

const SUBMISSIONS = 300;
const SENDERS = 6;
/** Kills after this many acknowledgements in each life of the server. */
const KILL_AFTER = [50, 50];
const PHOTO = Buffer.alloc(24 * 1024, 0xab);

let storage: ServerStorage;
let server: ServerProcess | undefined;
before(async () => {
  storage = await createServerStorage();
});
after(async () => {
  await server?.kill();
  await storage.remove();
});

interface Stored {
  _uuid: string;
  _attachments: Array<{ name: string }>;
}

function submit(baseUrl: string, auth: string, uuid: string, index: number): Promise<Response> {
  const path = index % 2 === 0 ? '/submission' : '/bob/submission';
  return postMultipart(baseUrl, path, auth, [
    { name: 'xml_submission_file', fileName: 'submission.xml', content: householdXml({ uuid, photo: 'photo.jpg' }), contentType: 'text/xml' },
    { name: 'photo.jpg', fileName: 'photo.jpg', content: PHOTO, contentType: 'image/jpeg' },
  ]);
}

function live(process: ServerProcess | undefined): ServerProcess {
  assert.ok(process, 'the server is running');
  return process;
}

function checkStored(stored: Stored[], acknowledged: Set<string>, sent: readonly string[]): { lost: number; duplicated: number } {
  const counts = new Map<string, number>();
  for (const record of stored) counts.set(record._uuid, (counts.get(record._uuid) ?? 0) + 1);
  const lost = [...acknowledged].filter((uuid) => !counts.has(uuid)).length;
  const duplicated = [...counts.values()].filter((n) => n > 1).length;
  for (const record of stored) {
    assert.ok(sent.includes(record._uuid), `only sent submissions are stored: ${record._uuid}`);
    if (acknowledged.has(record._uuid)) assert.deepEqual(record._attachments.map((a) => a.name), ['photo.jpg'], `acknowledged ${record._uuid} has its photo`);
  }
  return { lost, duplicated };
}

test('ingest: no acknowledged submission lost or stored twice across two SIGKILLs', { timeout: 600_000 }, async () => {
  server = await storage.start();
  const auth = await registerUser(server.baseUrl, 'bob');
  const formId = await publish(server.baseUrl, auth, formFile(HOUSEHOLD_CSV, 'household.csv'));

  const uuids = Array.from({ length: SUBMISSIONS }, () => randomUUID());
  const acknowledged = new Set<string>();
  let next = 0;
  let attempts = 0;
  for (const killAfter of KILL_AFTER) {
    const current = live(server);
    const ackBefore = acknowledged.size;
    let killed = false;
    const sender = async (): Promise<void> => {
      while (!killed && next < uuids.length) {
        const index = next++;
        const uuid = uuids[index] ?? '';
        attempts += 1;
        try {
          const res = await submit(current.baseUrl, auth, uuid, index);
          await res.arrayBuffer();
          if (res.status === 201 || res.status === 202) acknowledged.add(uuid);
          else assert.fail(`submission answered ${res.status}`);
        } catch (error) {
          if (error instanceof assert.AssertionError) throw error;
          return; // the connection died with the server
        }
        if (acknowledged.size - ackBefore >= killAfter && !killed) {
          killed = true;
          await current.kill();
        }
      }
    };
    await Promise.all(Array.from({ length: SENDERS }, sender));
    assert.ok(killed, 'the server was killed while submissions were in flight');
    server = await storage.start();
    const afterRestart = checkStored(await records<Stored>(server.baseUrl, auth, formId, ['_uuid', '_attachments']), acknowledged, uuids);
    assert.equal(afterRestart.lost, 0, 'no acknowledged submission is lost');
    assert.equal(afterRestart.duplicated, 0, 'no submission is stored twice');
  }
  const sentBeforeResend = next;
  const acknowledgedAtKills = acknowledged.size;

  // The devices send what was not acknowledged (and what they had not sent yet), several at once.
  const pending = uuids.map((uuid, index) => ({ uuid, index })).filter(({ uuid }) => !acknowledged.has(uuid));
  const resent = pending.filter(({ index }) => index < sentBeforeResend).length;
  const restarted = live(server);
  let requests = 0;
  const resender = async (): Promise<void> => {
    for (let item = pending.shift(); item; item = pending.shift()) {
      const res = await submit(restarted.baseUrl, auth, item.uuid, item.index);
      await res.arrayBuffer();
      assert.ok(res.status === 201 || res.status === 202, `resend answered ${res.status}`);
      acknowledged.add(item.uuid);
      requests += 1;
    }
  };
  await Promise.all(Array.from({ length: SENDERS }, resender));
  const stored = await records<Stored>(server.baseUrl, auth, formId, ['_uuid', '_attachments']);
  const final = checkStored(stored, acknowledged, uuids);
  report('ingest', {
    sent: attempts + requests,
    'acknowledged before the kills': acknowledgedAtKills,
    'resent unacknowledged': resent,
    stored: stored.length,
    lost: final.lost,
    duplicated: final.duplicated,
  });
  assert.equal(final.lost, 0);
  assert.equal(final.duplicated, 0);
  assert.equal(stored.length, SUBMISSIONS, 'every submission sent is stored once');
  const form = (await (await fetch(`${server.baseUrl}/api/v1/forms/${formId}`, { headers: { authorization: auth } })).json()) as { num_of_submissions: number };
  assert.equal(form.num_of_submissions, SUBMISSIONS, 'the form counter agrees with the records');
  await server.stop();
  server = undefined;
});
