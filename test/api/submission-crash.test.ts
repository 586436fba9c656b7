// A server killed (SIGKILL) in the middle of a stream of submissions loses none it acknowledged
// and stores none twice: after a restart every 201 is there exactly once, and devices resending
// what was not acknowledged (as ODK Collect does) end with every submission stored once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { basic, multipart } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';
import { createServerStorage, type ServerStorage } from '../server-process.ts';

const PASSWORD = 'Crash-test-pw-42';
let storage: ServerStorage;
let auth = basic('bob', PASSWORD);

before(async () => {
  storage = await createServerStorage();
});
after(async () => {
  await storage.remove();
});

async function post(baseUrl: string, path: string, body: { payload: Buffer; headers: Record<string, string> }): Promise<Response> {
  return fetch(`${baseUrl}${path}`, { method: 'POST', headers: { ...body.headers, authorization: auth }, body: body.payload });
}

function submissionBody(xml: string) {
  return multipart({}, [{ name: 'xml_submission_file', fileName: 'submission.xml', content: xml, contentType: 'text/xml' }]);
}

async function storedUuids(baseUrl: string, formId: number): Promise<string[]> {
  const fields = encodeURIComponent('["_uuid"]');
  const res = await fetch(`${baseUrl}/api/v1/data/${formId}?fields=${fields}`, { headers: { authorization: auth } });
  assert.equal(res.status, 200);
  return ((await res.json()) as Array<{ _uuid: string }>).map((r) => r._uuid);
}

test('every acknowledged submission survives a SIGKILL mid-stream, exactly once', async () => {
  let server = await storage.start();
  const registered = await fetch(`${server.baseUrl}/api/v1/profiles`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'bob', email: 'bob@example.org', first_name: 'Bob', password: PASSWORD }),
  });
  assert.equal(registered.status, 201, await registered.text());
  // Token authentication from here on: Basic would hash the password on every request.
  const me = await fetch(`${server.baseUrl}/api/v1/user`, { headers: { authorization: auth } });
  auth = `Token ${((await me.json()) as { api_token: string }).api_token}`;
  const published = await post(server.baseUrl, '/api/v1/forms', multipart({}, [formFile(HOUSEHOLD_CSV, 'household.csv')]));
  assert.equal(published.status, 201);
  const formId = Number(((await published.json()) as { formid: number }).formid);

  const uuids: string[] = Array.from({ length: 600 }, () => randomUUID());
  const acknowledged = new Set<string>();
  let next = 0;
  let killed = false;
  const killAfter = 60;
  const sender = async (): Promise<void> => {
    while (!killed && next < uuids.length) {
      const uuid = uuids[next++] ?? '';
      try {
        const res = await post(server.baseUrl, '/bob/submission', submissionBody(householdXml({ uuid })));
        await res.arrayBuffer();
        if (res.status === 201) acknowledged.add(uuid);
      } catch {
        return; // the connection died with the server
      }
      if (acknowledged.size >= killAfter && !killed) {
        killed = true;
        await server.kill();
      }
    }
  };
  await Promise.all([sender(), sender(), sender(), sender()]);
  assert.ok(killed, 'the server was killed while submissions were in flight');
  const attempted = uuids.slice(0, next);

  server = await storage.start();
  try {
    const stored = await storedUuids(server.baseUrl, formId);
    assert.equal(new Set(stored).size, stored.length, 'no submission is stored twice');
    for (const uuid of acknowledged) assert.ok(stored.includes(uuid), `acknowledged ${uuid} is stored`);
    for (const uuid of stored) assert.ok(attempted.includes(uuid), 'only attempted submissions are stored');

    // Devices send again whatever they did not get a 201 for, and may repeat what they did.
    for (const uuid of attempted) {
      const res = await post(server.baseUrl, '/bob/submission', submissionBody(householdXml({ uuid })));
      await res.arrayBuffer();
      if (acknowledged.has(uuid)) assert.equal(res.status, 202, 'an acknowledged submission is a duplicate');
      else assert.ok(res.status === 201 || res.status === 202, `resend answered ${res.status}`);
    }
    const final = await storedUuids(server.baseUrl, formId);
    assert.equal(final.length, attempted.length);
    assert.equal(new Set(final).size, attempted.length);

    const form = await fetch(`${server.baseUrl}/api/v1/forms/${formId}`, { headers: { authorization: auth } });
    assert.equal(((await form.json()) as { num_of_submissions: number }).num_of_submissions, attempted.length, 'the counters agree with the records');
  } finally {
    await server.stop();
  }
});
