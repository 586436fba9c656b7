// Edits (meta/deprecatedID) racing each other: two devices editing the same version, twenty at
// once, the same edit re-sent twenty times, and the original re-sent while it is being edited.
// Exactly one edit of a version wins; every other is a 409 (another edit won) or a 202 (this
// very edit, or the original, was stored before); never a 500. Every edit answered 201 must be
// found afterwards: as the record's current version or in its history, exactly once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createUser, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';

let server: TestServer;
let bob: TestUser;
let formId: number;

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  formId = await publishForm(server.app, bob, formFile(HOUSEHOLD_CSV, 'household.csv'));
});
after(() => server.close());

async function submit(xml: string): Promise<number> {
  const res = await postSubmission(server.app, '/bob/submission', xml, bob.auth);
  assert.ok([201, 202, 409].includes(res.statusCode), `unexpected ${res.statusCode}: ${res.body}`);
  return res.statusCode;
}

interface StoredVersions {
  live: string[];
  archived: string[];
}

/** Every version the database holds of the records whose name starts with `prefix`. */
async function storedVersions(prefix: string): Promise<StoredVersions> {
  const rows = await server.deps.db
    .selectFrom('instances')
    .select(['id', 'uuid'])
    .where('form_id', '=', formId)
    .where('deleted_at', 'is', null)
    .where((eb) => eb(eb.ref('json', '->>').key('name'), 'like', `${prefix}%`))
    .execute();
  const history = rows.length
    ? await server.deps.db.selectFrom('instance_history').select('uuid').where('instance_id', 'in', rows.map((r) => r.id)).execute()
    : [];
  return { live: rows.map((r) => r.uuid), archived: history.map((h) => h.uuid) };
}

/** Edits that all start from `original`, sent at once; answers each edit's uuid with its status. */
async function raceEdits(original: string, edits: Array<{ uuid: string; name: string }>): Promise<Array<{ uuid: string; status: number }>> {
  const statuses = await Promise.all(edits.map((e) => submit(householdXml({ uuid: e.uuid, name: e.name, deprecated: original }))));
  return edits.map((e, i) => ({ uuid: e.uuid, status: statuses[i] ?? 0 }));
}

function count(list: readonly string[], item: string): number {
  return list.filter((x) => x === item).length;
}

describe('concurrent edits of one version', () => {
  for (const n of [2, 20]) {
    test(`${n} different edits at once: one wins, the others are 409, nothing acknowledged is lost`, async () => {
      for (let round = 0; round < 5; round++) {
        const prefix = `race${n}-${round}-`;
        const original = randomUUID();
        assert.equal(await submit(householdXml({ uuid: original, name: `${prefix}orig` })), 201);
        const outcomes = await raceEdits(original, Array.from({ length: n }, (_, i) => ({ uuid: randomUUID(), name: `${prefix}edit${i}` })));
        const won = outcomes.filter((o) => o.status === 201);
        assert.equal(won.length, 1, `round ${round}: ${JSON.stringify(outcomes.map((o) => o.status))}`);
        assert.equal(outcomes.filter((o) => o.status === 409).length, n - 1);
        const stored = await storedVersions(prefix);
        assert.deepEqual(stored.live, [won[0]?.uuid], 'one record, at the winning edit');
        assert.deepEqual(stored.archived, [original], 'the original archived once');
      }
    });
  }

  test('the same edit re-sent 20 times at once is applied once; the rest are duplicates', async () => {
    for (let round = 0; round < 5; round++) {
      const prefix = `resend-${round}-`;
      const original = randomUUID();
      assert.equal(await submit(householdXml({ uuid: original, name: `${prefix}orig` })), 201);
      const edit = { uuid: randomUUID(), name: `${prefix}edit` };
      const outcomes = await raceEdits(original, Array.from({ length: 20 }, () => edit));
      assert.equal(outcomes.filter((o) => o.status === 201).length, 1, JSON.stringify(outcomes.map((o) => o.status)));
      assert.equal(outcomes.filter((o) => o.status === 202).length, 19);
      const stored = await storedVersions(prefix);
      assert.deepEqual(stored.live, [edit.uuid]);
      assert.deepEqual(stored.archived, [original]);
    }
  });

  test('the original re-sent while it is being edited stays a duplicate: one record', async () => {
    for (let round = 0; round < 5; round++) {
      const prefix = `orig-resend-${round}-`;
      const original = randomUUID();
      const originalXml = householdXml({ uuid: original, name: `${prefix}orig` });
      assert.equal(await submit(originalXml), 201);
      const edits = Array.from({ length: 5 }, (_, i) => ({ uuid: randomUUID(), name: `${prefix}edit${i}` }));
      const [outcomes, resent] = await Promise.all([raceEdits(original, edits), Promise.all(Array.from({ length: 5 }, () => submit(originalXml)))]);
      assert.deepEqual(resent, [202, 202, 202, 202, 202]);
      const won = outcomes.filter((o) => o.status === 201);
      assert.equal(won.length, 1, JSON.stringify(outcomes.map((o) => o.status)));
      const stored = await storedVersions(prefix);
      assert.deepEqual(stored.live, [won[0]?.uuid]);
      assert.deepEqual(stored.archived, [original]);
    }
  });

  test('a chain of edits, each raced by rivals: every acknowledged edit is stored exactly once', async () => {
    const prefix = 'chain-';
    let current: string = randomUUID();
    assert.equal(await submit(householdXml({ uuid: current, name: `${prefix}v0` })), 201);
    const acknowledged = [current];
    for (let step = 1; step <= 6; step++) {
      const rivals = Array.from({ length: 4 }, (_, i) => ({ uuid: randomUUID(), name: `${prefix}v${step}-${i}` }));
      const outcomes = await raceEdits(current, [...rivals, rivals[0] ?? { uuid: '', name: '' }]);
      const won = [...new Set(outcomes.filter((o) => o.status === 201).map((o) => o.uuid))];
      assert.equal(won.length, 1, JSON.stringify(outcomes));
      current = won[0] ?? '';
      acknowledged.push(current);
    }
    const stored = await storedVersions(prefix);
    assert.deepEqual(stored.live, [current]);
    const all = [...stored.live, ...stored.archived];
    for (const uuid of acknowledged) assert.equal(count(all, uuid), 1, `acknowledged version ${uuid} stored once`);
    assert.equal(all.length, acknowledged.length, 'nothing stored that was not acknowledged');
  });
});
