// /api/v1/submissionreview over HTTP: create (one or a list), list and filters, retrieve, change,
// delete, who may do what, and the record keys (_review_*, _notes) the data API then shows.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createUser, multipart, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { householdCsv, householdXml } from '../fixtures/submissions.ts';

let server: TestServer;
let bob: TestUser; // owner
let mary: TestUser; // manager
let eddie: TestUser; // editor
let rita: TestUser; // readonly
let sam: TestUser; // no role

type Json = Record<string, unknown>;
type Stored = { id: number; uuid: string };

const call = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, user?: TestUser, payload?: unknown) =>
  server.app.inject({ method, url, headers: user ? user.auth : {}, ...(payload === undefined ? {} : { payload: payload as Json }) });

/** A form of its own to each test, with its members and three records (Bob, Jane and Zed). */
interface Survey {
  readonly owner: TestUser;
  readonly manager: TestUser;
  readonly formId: number;
  /** The form's id_string, which submissions name. */
  readonly xmlId: string;
  readonly records: readonly [Stored, Stored, Stored];
}

let surveys = 0;

async function survey(owner = bob, members: { manager: TestUser; editor: TestUser; reader: TestUser } = { manager: mary, editor: eddie, reader: rita }): Promise<Survey> {
  const xmlId = `household_${++surveys}`;
  const formId = await publishForm(server.app, owner, formFile(householdCsv(xmlId), 'household.csv'));
  for (const [user, role] of [[members.manager, 'manager'], [members.editor, 'editor'], [members.reader, 'readonly']] as const) {
    const res = await call('POST', `/api/v1/forms/${formId}/share`, owner, { username: user.username, role });
    assert.equal(res.statusCode, 204, res.body);
  }
  const submit = async (name: string): Promise<Stored> => {
    const uuid = randomUUID();
    const res = await postSubmission(server.app, `/${owner.username}/submission`, householdXml({ uuid, name, formId: xmlId }), owner.auth);
    assert.equal(res.statusCode, 201, res.body);
    const list = await call('GET', `/api/v1/data/${formId}?query=${encodeURIComponent(JSON.stringify({ _uuid: uuid }))}`, owner);
    return { id: Number(list.json<Json[]>()[0]?.['_id']), uuid };
  };
  const records = [await submit('Bob'), await submit('Jane'), await submit('Zed')] as const;
  return { owner, manager: members.manager, formId, xmlId, records };
}

/**
 * The reviews a form's records carry in the tests that need earlier ones: the owner rejects the
 * first with a note, approves the second and marks the third pending in one list, then the
 * manager marks the second pending with a note.
 */
async function reviewed(s: Survey): Promise<Survey> {
  const [first, second, third] = s.records;
  const made = [
    await call('POST', '/api/v1/submissionreview', s.owner, { instance: first.id, status: '2', note: 'Wrong location' }),
    await call('POST', '/api/v1/submissionreview', s.owner, [
      { instance: second.id, status: '1' },
      { instance: third.id, status: '3', note: null },
    ]),
    await call('POST', '/api/v1/submissionreview', s.manager, { instance: second.id, status: '3', note: 'Checking again' }),
  ];
  for (const res of made) assert.equal(res.statusCode, 201, res.body);
  return s;
}

async function record(s: Survey, id: number, user: TestUser = s.owner): Promise<Json> {
  const res = await call('GET', `/api/v1/data/${s.formId}/${id}`, user);
  assert.equal(res.statusCode, 200, res.body);
  return res.json<Json>();
}

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  mary = await createUser(server.app, 'mary');
  eddie = await createUser(server.app, 'eddie');
  rita = await createUser(server.app, 'rita');
  sam = await createUser(server.app, 'sam');
});
after(() => server.close());

describe('submission reviews', () => {
  test('an owner reviews a record: 201 in onadata’s shape, and the record shows the review and its note', async () => {
    const s = await survey();
    const [first] = s.records;
    const before = await record(s, first.id);
    assert.equal(before['_review_status'], undefined);
    server.clock.advance(2);
    const res = await call('POST', '/api/v1/submissionreview', bob, { instance: first.id, status: '2', note: '  Wrong location ' });
    assert.equal(res.statusCode, 201, res.body);
    const review = res.json<Json>();
    assert.deepEqual(Object.keys(review), ['id', 'instance', 'created_by', 'status', 'date_created', 'note', 'date_modified']);
    assert.equal(review['instance'], first.id);
    assert.equal(review['created_by'], bob.id);
    assert.equal(review['status'], '2');
    assert.equal(review['note'], 'Wrong location');
    assert.match(String(review['date_created']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

    const after = await record(s, first.id);
    assert.equal(after['_review_status'], '2');
    assert.equal(after['_review_comment'], 'Wrong location');
    assert.equal(Date.parse(String(after['_review_date'])), Date.parse(String(review['date_created'])));
    const notes = after['_notes'] as Json[];
    assert.equal(notes.length, 1);
    assert.deepEqual({ ...notes[0], id: 0 }, { id: 0, owner: 'bob', note: 'Wrong location', instance_field: '_review_status', created_by: bob.id });
    assert.ok(Date.parse(String(after['_date_modified'])) > Date.parse(String(before['_date_modified'])), 'a review modifies the record');

    // The data API's query reads the review status like any key.
    const rejected = await call('GET', `/api/v1/data/${s.formId}?query=${encodeURIComponent('{"_review_status": "2"}')}`, bob);
    assert.deepEqual(rejected.json<Json[]>().map((r) => r['_id']), [first.id]);
  });

  test('bad input gets 400 with DRF field messages; a rejection needs a comment', async () => {
    const s = await survey();
    const [, second] = s.records;
    const cases: Array<[unknown, Json]> = [
      [{ instance: second.id, status: '2' }, { note: ['Cannot reject a submission without a comment.'] }],
      [{ instance: second.id, status: '2', note: '' }, { note: ['Cannot reject a submission without a comment.'] }],
      [{ instance: second.id, status: '9' }, { status: ['"9" is not a valid choice.'] }],
      [{ status: '1' }, { instance: ['This field is required.'] }],
      [{ instance: 99999999, status: '1' }, { instance: ['Invalid pk "99999999" - object does not exist.'] }],
      [{ instance: [1] }, { instance: ['Incorrect type. Expected pk value, received list.'] }],
      ['text', { non_field_errors: ['Invalid data. Expected a dictionary, but got str.'] }],
    ];
    for (const [payload, expected] of cases) {
      const res = await server.app.inject({ method: 'POST', url: '/api/v1/submissionreview', headers: { ...bob.auth, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
      assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
      assert.deepEqual(res.json(), expected, JSON.stringify(payload));
    }
    assert.equal((await record(s, second.id))['_review_status'], undefined);
  });

  test('a list creates a review per item, all or none; a bad item gets its errors in place', async () => {
    const s = await survey();
    const [, second, third] = s.records;
    const bad = await call('POST', '/api/v1/submissionreview', bob, [
      { instance: second.id, status: '1' },
      { instance: third.id, status: '2' },
    ]);
    assert.equal(bad.statusCode, 400, bad.body);
    assert.deepEqual(bad.json(), [{}, { note: ['Cannot reject a submission without a comment.'] }]);
    assert.equal((await record(s, second.id))['_review_status'], undefined, 'nothing was written');

    const res = await call('POST', '/api/v1/submissionreview', bob, [
      { instance: second.id, status: '1' },
      { instance: third.id, status: '3', note: null },
    ]);
    assert.equal(res.statusCode, 201, res.body);
    const items = res.json<Json[]>();
    assert.deepEqual(items.map((r) => [r['instance'], r['status'], r['note']]), [[second.id, '1', null], [third.id, '3', null]]);
    const approved = await record(s, second.id);
    assert.equal(approved['_review_status'], '1');
    assert.equal(approved['_review_comment'], undefined, 'no comment, no key');
    assert.deepEqual(approved['_notes'], []);
    const empty = await call('POST', '/api/v1/submissionreview', bob, []);
    assert.equal(empty.statusCode, 400);
  });

  test('managers review; editors, readers and strangers may not; anonymous gets 401', async () => {
    const s = await survey();
    const [, second] = s.records;
    const byManager = await call('POST', '/api/v1/submissionreview', mary, { instance: second.id, status: '3', note: 'Checking again' });
    assert.equal(byManager.statusCode, 201, byManager.body);
    assert.equal((await record(s, second.id))['_review_status'], '3', 'the latest review wins');

    for (const user of [eddie, rita]) {
      const res = await call('POST', '/api/v1/submissionreview', user, { instance: second.id, status: '1' });
      assert.equal(res.statusCode, 403, `${user.username}: ${res.body}`);
    }
    // Bulk: one record the caller may not review refuses the lot.
    const mixed = await call('POST', '/api/v1/submissionreview', eddie, [{ instance: second.id, status: '1' }]);
    assert.equal(mixed.statusCode, 403);
    // A record the caller cannot read does not exist for them.
    const stranger = await call('POST', '/api/v1/submissionreview', sam, { instance: second.id, status: '1' });
    assert.equal(stranger.statusCode, 400);
    assert.deepEqual(stranger.json(), { instance: [`Invalid pk "${second.id}" - object does not exist.`] });
    const anonymous = await call('POST', '/api/v1/submissionreview', undefined, { instance: second.id, status: '1' });
    assert.equal(anonymous.statusCode, 401);

    const review = byManager.json<Json>();
    assert.equal((await call('PATCH', `/api/v1/submissionreview/${String(review['id'])}`, eddie, { status: '1' })).statusCode, 403);
    assert.equal((await call('DELETE', `/api/v1/submissionreview/${String(review['id'])}`, eddie)).statusCode, 403);
    assert.equal((await call('DELETE', `/api/v1/submissionreview/${String(review['id'])}`, sam)).statusCode, 404);
  });

  test('the list shows the reviews of records the caller may read, filtered by instance, instance__xform, status and created_by', async () => {
    // Accounts of its own: the list holds every review the caller may read, on any form.
    const olive = await createUser(server.app, 'olive');
    const mona = await createUser(server.app, 'mona');
    const rhea = await createUser(server.app, 'rhea');
    const stan = await createUser(server.app, 'stan');
    const ed = await createUser(server.app, 'edna');
    const s = await reviewed(await survey(olive, { manager: mona, editor: ed, reader: rhea }));
    const [first, second, third] = s.records;
    const all = (await call('GET', '/api/v1/submissionreview', olive)).json<Json[]>();
    assert.equal(all.length, 4);
    assert.deepEqual(all.map((r) => r['id']), [...all.map((r) => Number(r['id']))].sort((a, b) => a - b), 'in id order');
    assert.equal((await call('GET', '/api/v1/submissionreview', rhea)).json<Json[]>().length, 4, 'readers see reviews');
    assert.deepEqual((await call('GET', '/api/v1/submissionreview', stan)).json(), [], 'strangers see none');
    assert.deepEqual((await call('GET', '/api/v1/submissionreview')).json(), [], 'nor does anonymous');

    const ids = async (query: string): Promise<unknown[]> => (await call('GET', `/api/v1/submissionreview?${query}`, olive)).json<Json[]>().map((r) => r['instance']);
    assert.deepEqual(await ids(`instance=${first.id}`), [first.id]);
    assert.deepEqual(await ids(`instance__xform=${s.formId}`), [first.id, second.id, third.id, second.id]);
    assert.deepEqual(await ids(`instance__xform=${s.formId + 1000}`), []);
    assert.deepEqual(await ids('status=3'), [third.id, second.id]);
    assert.deepEqual(await ids(`created_by=${mona.id}`), [second.id]);
    const bad = await call('GET', '/api/v1/submissionreview?status=7&instance=x', olive);
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), {
      instance: ['Select a valid choice. That choice is not one of the available choices.'],
      status: ['Select a valid choice. 7 is not one of the available choices.'],
    });
  });

  test('retrieve, change and delete a review; the record follows its latest live review', async () => {
    const s = await reviewed(await survey());
    const [, , third] = s.records;
    const created = await call('POST', '/api/v1/submissionreview', bob, { instance: third.id, status: '1', note: 'Fine' });
    const id = String(created.json<Json>()['id']);
    const got = await call('GET', `/api/v1/submissionreview/${id}`, rita);
    assert.equal(got.statusCode, 200);
    assert.deepEqual(got.json(), created.json());
    assert.equal((await call('GET', `/api/v1/submissionreview/${id}`, sam)).statusCode, 404);
    assert.equal((await call('GET', '/api/v1/submissionreview/abc', bob)).statusCode, 404);

    server.clock.advance(1);
    const rejected = await call('PATCH', `/api/v1/submissionreview/${id}`, mary, { status: '2' });
    assert.equal(rejected.statusCode, 400, 'a rejection still needs its comment in the request');
    const changed = await call('PATCH', `/api/v1/submissionreview/${id}`, mary, { status: '2', note: 'Not fine' });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.equal(changed.json<Json>()['note'], 'Not fine');
    assert.notEqual(changed.json<Json>()['date_modified'], created.json<Json>()['date_modified']);
    let shown = await record(s, third.id);
    assert.equal(shown['_review_status'], '2');
    assert.equal(shown['_review_comment'], 'Not fine');
    assert.deepEqual((shown['_notes'] as Json[]).map((n) => n['note']), ['Not fine'], 'the note was changed, not added');

    const uncommented = await call('PUT', `/api/v1/submissionreview/${id}`, bob, { note: '' });
    assert.equal(uncommented.statusCode, 200, uncommented.body);
    assert.equal(uncommented.json<Json>()['note'], null);
    shown = await record(s, third.id);
    assert.equal(shown['_review_comment'], undefined);
    assert.deepEqual(shown['_notes'], []);

    assert.equal((await call('DELETE', `/api/v1/submissionreview/${id}`, bob)).statusCode, 204);
    assert.equal((await call('DELETE', `/api/v1/submissionreview/${id}`, bob)).statusCode, 404);
    assert.equal((await call('GET', `/api/v1/submissionreview/${id}`, bob)).statusCode, 404);
    assert.ok(!(await call('GET', '/api/v1/submissionreview', bob)).json<Json[]>().some((r) => String(r['id']) === id));
    // The record's earlier review (pending, from the bulk create) shows again.
    shown = await record(s, third.id);
    assert.equal(shown['_review_status'], '3');
  });

  test('editing a reviewed record keeps its review and notes', async () => {
    const s = await reviewed(await survey());
    const [first] = s.records;
    const { id, uuid } = first;
    const newUuid = randomUUID();
    const res = await postSubmission(server.app, `/${bob.username}/submission`, householdXml({ uuid: newUuid, name: 'Bobby', deprecated: uuid, formId: s.xmlId }), bob.auth);
    assert.equal(res.statusCode, 201, res.body);
    const edited = await record(s, id);
    assert.equal(edited['name'], 'Bobby');
    assert.equal(edited['_review_status'], '2');
    assert.equal(edited['_review_comment'], 'Wrong location');
    assert.deepEqual((edited['_notes'] as Json[]).map((n) => n['note']), ['Wrong location']);
  });

  test('a CSV import that edits a reviewed record keeps its review and notes', async () => {
    const s = await reviewed(await survey());
    const [, second] = s.records;
    const { id, uuid } = second;
    const csv = `name,age,address/village,browsers,gps,photo,_uuid\nJanet,31,Kisumu,firefox,-1.2 36.7 0 0,,${uuid}\n`;
    const body = multipart({}, [{ name: 'csv_file', fileName: 'edit.csv', content: csv, contentType: 'text/csv' }]);
    const res = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${s.formId}/csv_import`, payload: body.payload, headers: { ...bob.auth, ...body.headers } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<Json>()['updates'], 1, res.body);
    const edited = await record(s, id);
    assert.equal(edited['name'], 'Janet');
    assert.equal(edited['_review_status'], '3');
    assert.equal(edited['_review_comment'], 'Checking again');
    assert.deepEqual((edited['_notes'] as Json[]).map((n) => n['note']), ['Checking again']);
  });
});
