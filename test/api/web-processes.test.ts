// WEB_PROCESSES: several HTTP processes (node:cluster) on one port, PostgreSQL only. Submissions
// through all of them are stored once each, and killing the primary outright stops its HTTP
// processes too (the port is freed for a restart).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { basic, multipart } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';
import { createServerStorage, type ServerStorage } from '../server-process.ts';

const PASSWORD = 'Cluster-test-pw-42';
const onPostgres = Boolean(process.env['DATABASE_URL']);
let storage: ServerStorage;

before(async () => {
  storage = await createServerStorage();
});
after(async () => {
  await storage.remove();
});

function childrenOf(pid: number): number[] {
  const path = `/proc/${pid}/task/${pid}/children`;
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

test('WEB_PROCESSES above 1 refuses to start on the embedded database', { skip: onPostgres && 'needs the embedded database' }, async () => {
  await assert.rejects(storage.start({ WEB_PROCESSES: '2' }), /server exited with 1/);
});

test('two web processes serve one port, store each submission once, and stop with a killed primary', { skip: !onPostgres && 'needs DATABASE_URL' }, async () => {
  const server = await storage.start({ WEB_PROCESSES: '2' });
  const pid = server.child.pid ?? 0;
  assert.ok(await until(() => childrenOf(pid).length === 2, 120_000), 'the primary runs two web processes');
  const workers = childrenOf(pid);

  const registered = await fetch(`${server.baseUrl}/api/v1/profiles`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'bob', email: 'bob@example.org', first_name: 'Bob', password: PASSWORD }),
  });
  assert.equal(registered.status, 201, await registered.text());
  const me = await fetch(`${server.baseUrl}/api/v1/user`, { headers: { authorization: basic('bob', PASSWORD) } });
  const auth = `Token ${((await me.json()) as { api_token: string }).api_token}`;
  const form = multipart({}, [formFile(HOUSEHOLD_CSV, 'household.csv')]);
  const published = await fetch(`${server.baseUrl}/api/v1/forms`, { method: 'POST', headers: { ...form.headers, authorization: auth }, body: form.payload });
  assert.equal(published.status, 201);
  const formId = Number(((await published.json()) as { formid: number }).formid);

  // Each request on its own connection, which the primary hands to its web processes in turn.
  const uuids = Array.from({ length: 80 }, () => randomUUID());
  let next = 0;
  const statuses: number[] = [];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < uuids.length) {
        const body = multipart({}, [{ name: 'xml_submission_file', fileName: 'submission.xml', content: householdXml({ uuid: uuids[next++] ?? '' }), contentType: 'text/xml' }]);
        const res = await fetch(`${server.baseUrl}/bob/submission`, { method: 'POST', headers: { ...body.headers, authorization: auth, connection: 'close' }, body: body.payload });
        await res.arrayBuffer();
        statuses.push(res.status);
      }
    }),
  );
  assert.deepEqual(new Set(statuses), new Set([201]));
  const record = await fetch(`${server.baseUrl}/api/v1/forms/${formId}`, { headers: { authorization: auth } });
  assert.equal(((await record.json()) as { num_of_submissions: number }).num_of_submissions, uuids.length);

  await server.kill();
  assert.ok(await until(() => workers.every((w) => !existsSync(`/proc/${w}`)), 60_000), 'the web processes stopped with their primary');
  const restarted = await storage.start();
  try {
    const again = await fetch(`${restarted.baseUrl}/api/v1/forms/${formId}`, { headers: { authorization: auth } });
    assert.equal(((await again.json()) as { num_of_submissions: number }).num_of_submissions, uuids.length);
  } finally {
    await restarted.stop();
  }
});
