import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { basic, createUser, multipart, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';

let server: TestServer;
let bob: TestUser;
let alice: TestUser;
let formId: number;

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201e2b3b7d30000000049454e44ae426082', 'hex');

async function submit(url: string, xml: string, headers: Record<string, string> = {}, media: Array<{ name: string; content: Buffer; type: string }> = []) {
  return postSubmission(server.app, url, xml, headers, media);
}

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  alice = await createUser(server.app, 'alice');
  formId = await publishForm(server.app, bob, formFile(HOUSEHOLD_CSV, 'household.csv'));
});
after(() => server.close());

describe('OpenRosa submission', () => {
  test('formList → form download → submission with a photo → data API', async () => {
    // An account and form of its own: the test reads the form's only record and its count.
    const owen = await createUser(server.app, 'owen');
    const formId = await publishForm(server.app, owen, formFile(HOUSEHOLD_CSV, 'household.csv'));
    const list = await server.app.inject({ method: 'GET', url: '/owen/formList', headers: { authorization: basic('owen', owen.password) } });
    const downloadUrl = /<downloadUrl>([^<]+)<\/downloadUrl>/.exec(list.body)?.[1];
    assert.ok(downloadUrl);
    const xform = await server.app.inject({ method: 'GET', url: downloadUrl.replace('http://testserver', '') });
    const formhubUuid = /<formhub><uuid>([^<]+)<\/uuid><\/formhub>/.exec(xform.body)?.[1];
    assert.ok(formhubUuid);

    const uuid = randomUUID();
    const res = await submit('/owen/submission', householdXml({ uuid, photo: 'photo.png', formhubUuid }), { authorization: basic('owen', owen.password) }, [
      { name: 'photo.png', content: PNG, type: 'image/png' },
    ]);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['x-openrosa-version'], '1.0');
    assert.match(res.body, /<message>Successful submission\.<\/message>/);
    assert.match(res.body, new RegExp(`instanceID="uuid:${uuid}"`));

    const records = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}`, headers: owen.auth });
    assert.equal(records.statusCode, 200);
    const [record] = records.json();
    assert.equal(record.name, 'Bob');
    assert.equal(record.age, 25);
    assert.equal(record['address/village'], 'Kisumu');
    assert.equal(record.browsers, 'firefox chrome');
    assert.deepEqual(record.children, [
      { 'children/childs_name': 'Tom', 'children/childs_age': 12 },
      { 'children/childs_name': 'Dick', 'children/childs_age': 5 },
    ]);
    assert.equal(record._uuid, uuid);
    assert.equal(record['meta/instanceID'], `uuid:${uuid}`);
    assert.equal(record._xform_id_string, 'household');
    assert.equal(record._version, '2026010101');
    assert.equal(record._status, 'submitted_via_web');
    assert.equal(record._submitted_by, 'owen');
    assert.deepEqual(record._geolocation, [-1.2625621, 36.7921711]);
    assert.equal(record._total_media, 1);
    assert.equal(record._media_count, 1);
    assert.equal(record._media_all_received, true);
    assert.match(record._submission_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    assert.equal(record._attachments.length, 1);
    const file = await server.app.inject({ method: 'GET', url: record._attachments[0].download_url.replace('http://testserver', ''), headers: owen.auth });
    assert.equal(file.statusCode, 200);
    assert.deepEqual(Buffer.from(file.rawPayload), PNG);

    const form = (await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}`, headers: owen.auth })).json();
    assert.equal(form.num_of_submissions, 1);
    assert.ok(form.last_submission_time);
    assert.equal(form.instances_with_geopoints, true);
  });

  test('the same instance again is a 202 duplicate and is not stored twice; its late media are added', async () => {
    const uuid = randomUUID();
    const xml = householdXml({ uuid, photo: 'late.png' });
    assert.equal((await submit('/bob/submission', xml)).statusCode, 201);
    const again = await submit('/bob/submission', xml, {}, [{ name: 'late.png', content: PNG, type: 'image/png' }]);
    assert.equal(again.statusCode, 202);
    assert.match(again.body, /Duplicate submission/);
    const records = (await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?query=${encodeURIComponent(JSON.stringify({ _uuid: uuid }))}`, headers: bob.auth })).json();
    assert.equal(records.length, 1);
    assert.equal(records[0]._media_count, 1);
  });

  test('an edit through deprecatedID updates the record in place', async () => {
    const original = randomUUID();
    await submit('/bob/submission', householdXml({ uuid: original, name: 'Before' }));
    const edited = randomUUID();
    const res = await submit('/bob/submission', householdXml({ uuid: edited, name: 'After', deprecated: original }));
    assert.equal(res.statusCode, 201);
    const records = (await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?query=${encodeURIComponent(JSON.stringify({ name: { $in: ['Before', 'After'] } }))}`, headers: bob.auth })).json();
    assert.equal(records.length, 1);
    assert.equal(records[0].name, 'After');
    assert.equal(records[0]._uuid, edited);
    assert.equal(records[0]._edited, true);

    // The earlier version is kept, and shown at /history.
    const history = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}/${String(records[0]._id)}/history`, headers: bob.auth });
    assert.equal(history.statusCode, 200, history.body);
    assert.deepEqual(history.json().map((v: Record<string, unknown>) => [v['_uuid'], v['name']]), [[original, 'Before']]);
  });

  test('edit conflicts: a second edit of the same version is a 409; re-sent versions are duplicates; one record stays', async () => {
    const original = randomUUID();
    const first = randomUUID();
    const second = randomUUID();
    const posts = [
      householdXml({ uuid: original, name: 'Orig' }),
      householdXml({ uuid: first, name: 'Edit one', deprecated: original }),
      householdXml({ uuid: first, name: 'Edit one', deprecated: original }),
      householdXml({ uuid: second, name: 'Edit two', deprecated: original }),
      householdXml({ uuid: original, name: 'Orig' }),
    ];
    const statuses: number[] = [];
    for (const xml of posts) statuses.push((await submit('/bob/submission', xml)).statusCode);
    assert.deepEqual(statuses, [201, 201, 202, 409, 202]);
    const query = encodeURIComponent(JSON.stringify({ name: { $in: ['Orig', 'Edit one', 'Edit two'] } }));
    const records = (await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?query=${query}`, headers: bob.auth })).json();
    assert.deepEqual(records.map((r: Record<string, unknown>) => r['name']), ['Edit one']);
  });

  test('with require_auth, editing needs an editor role: data entry may add records, not replace them', async () => {
    const original = randomUUID();
    const dave = await createUser(server.app, 'dave');
    assert.equal((await submit('/bob/submission', householdXml({ uuid: original, name: 'Bob’s' }), bob.auth)).statusCode, 201);
    await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/share`, payload: { username: 'dave', role: 'dataentry' }, headers: bob.auth });
    await server.app.inject({ method: 'PATCH', url: '/api/v1/profiles/bob', payload: { require_auth: true }, headers: bob.auth });
    try {
      const edit = await submit('/bob/submission', householdXml({ uuid: randomUUID(), name: 'Overwritten', deprecated: original }), dave.auth);
      assert.equal(edit.statusCode, 403);
      assert.match(edit.body, /dave is not allowed to make edit submissions to bob's Household form\./);
      await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/share`, payload: { username: 'dave', role: 'editor' }, headers: bob.auth });
      assert.equal((await submit('/bob/submission', householdXml({ uuid: randomUUID(), name: 'Edited', deprecated: original }), dave.auth)).statusCode, 201);
    } finally {
      await server.app.inject({ method: 'PATCH', url: '/api/v1/profiles/bob', payload: { require_auth: false }, headers: bob.auth });
    }
  });

  test('an enumerator’s own address lists and takes forms shared with them; read-only roles do not get forms on devices', async () => {
    const carol = await createUser(server.app, 'carol');
    const reader = await createUser(server.app, 'reader');
    await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/share`, payload: { username: 'carol', role: 'dataentry' }, headers: bob.auth });
    await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/share`, payload: { username: 'reader', role: 'readonly' }, headers: bob.auth });
    const list = await server.app.inject({ method: 'GET', url: '/carol/formList', headers: carol.auth });
    assert.match(list.body, new RegExp(`<downloadUrl>http://testserver/bob/forms/${formId}/form.xml</downloadUrl>`));
    const xform = (await server.app.inject({ method: 'GET', url: `/bob/forms/${formId}/form.xml`, headers: carol.auth })).body;
    const formhubUuid = /<formhub><uuid>([^<]+)<\/uuid><\/formhub>/.exec(xform)?.[1] ?? '';
    assert.notEqual(formhubUuid, '');
    const posted = await submit('/carol/submission', householdXml({ uuid: randomUUID(), formhubUuid }), carol.auth);
    assert.equal(posted.statusCode, 201, posted.body);
    assert.doesNotMatch((await server.app.inject({ method: 'GET', url: '/formList', headers: reader.auth })).body, /<formID>household<\/formID>/);
  });

  test('an instance in the single-byte encoding its declaration names is read so; bytes that are not what they claim are refused', async () => {
    const post = (bytes: Buffer) => {
      const body = multipart({}, [{ name: 'xml_submission_file', fileName: 'submission.xml', content: bytes, contentType: 'text/xml' }]);
      return server.app.inject({ method: 'POST', url: '/bob/submission', payload: body.payload, headers: body.headers });
    };
    const uuid = randomUUID();
    const latin = householdXml({ uuid, name: 'Caf\u00e9' }).replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="ISO-8859-1"?>');
    assert.equal((await post(Buffer.from(latin, 'latin1'))).statusCode, 201);
    const stored = (await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?query=${encodeURIComponent(JSON.stringify({ _uuid: uuid }))}`, headers: bob.auth })).json();
    assert.equal(stored[0]?.name, 'Caf\u00e9');
    const broken = await post(Buffer.from(householdXml({ uuid: randomUUID(), name: 'Caf\u00e9' }), 'latin1'));
    assert.equal(broken.statusCode, 400);
    assert.match(broken.body, /File likely corrupted during transmission, please try later\./);
  });

  test('an empty POST without credentials where they are needed is answered with the challenge (curl --digest probes so)', async () => {
    const res = await server.app.inject({ method: 'POST', url: '/submission', headers: { 'content-length': '0' } });
    assert.equal(res.statusCode, 401);
    assert.match(String(res.headers['www-authenticate']), /^Digest /);
  });

  test('bad submissions get clear 400s and store nothing', async () => {
    const before = (await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}`, headers: bob.auth })).json().num_of_submissions;
    const malformed = await submit('/bob/submission', '<household id="household"><name>x</household>');
    assert.equal(malformed.statusCode, 400);
    assert.match(malformed.body, /Improperly formatted XML\./);
    const xxe = await submit('/bob/submission', '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><household id="household"><name>&e;</name></household>');
    assert.equal(xxe.statusCode, 400);
    assert.doesNotMatch(xxe.body, /root:/);
    const empty = await submit('/bob/submission', '<household id="household"></household>');
    assert.equal(empty.statusCode, 400);
    const unknown = await submit('/bob/submission', '<other id="no_such_form"><a>1</a></other>');
    assert.equal(unknown.statusCode, 404);
    const body = multipart({ foo: 'bar' });
    const noXml = await server.app.inject({ method: 'POST', url: '/bob/submission', payload: body.payload, headers: body.headers });
    assert.equal(noXml.statusCode, 400);
    assert.match(noXml.body, /No XML submission file\./);
    assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}`, headers: bob.auth })).json().num_of_submissions, before);
  });

  test('who may submit: /submission needs credentials; require_auth accounts refuse anonymous devices; data-entry roles may', async () => {
    const xml = () => householdXml({ uuid: randomUUID() });
    const anonymous = await submit('/submission', xml());
    assert.equal(anonymous.statusCode, 401);
    assert.ok(anonymous.headers['www-authenticate']);
    assert.equal((await submit('/submission', xml(), bob.auth)).statusCode, 201);
    assert.equal((await server.app.inject({ method: 'HEAD', url: '/bob/submission' })).statusCode, 204);
    assert.equal((await server.app.inject({ method: 'HEAD', url: '/submission' })).statusCode, 401);

    await server.app.inject({ method: 'PATCH', url: '/api/v1/profiles/bob', payload: { require_auth: true }, headers: bob.auth });
    try {
      assert.equal((await submit('/bob/submission', xml())).statusCode, 401);
      const outsider = await submit('/bob/submission', xml(), alice.auth);
      assert.equal(outsider.statusCode, 403);
      assert.match(outsider.body, /alice is not allowed to make submissions to bob's Household form\./);
      await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/share`, payload: { username: 'alice', role: 'dataentry' }, headers: bob.auth });
      const member = await submit('/bob/submission', xml(), alice.auth);
      assert.equal(member.statusCode, 201);
    } finally {
      await server.app.inject({ method: 'PATCH', url: '/api/v1/profiles/bob', payload: { require_auth: false }, headers: bob.auth });
    }
  });

  test('an inactive (not downloadable) form refuses submissions with 405', async () => {
    await server.app.inject({ method: 'PATCH', url: `/api/v1/forms/${formId}`, payload: { downloadable: false }, headers: bob.auth });
    try {
      const res = await submit('/bob/submission', householdXml({ uuid: randomUUID() }));
      assert.equal(res.statusCode, 405);
      assert.match(res.body, /Form is inactive/);
    } finally {
      await server.app.inject({ method: 'PATCH', url: `/api/v1/forms/${formId}`, payload: { downloadable: true }, headers: bob.auth });
    }
  });
});

describe('data API', () => {
  // A reader of these tests' own (the OpenRosa tests change alice's role on the form).
  let rita: TestUser;
  before(async () => {
    rita = await createUser(server.app, 'rita');
    await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/share`, payload: { username: 'rita', role: 'readonly' }, headers: bob.auth });
    for (const [name, age] of [['Ann', 30], ['Ben', 41], ['Cid', 19]] as const) {
      await submit('/bob/submission', householdXml({ uuid: randomUUID(), name, age }));
    }
  });

  const data = (query: string, user: TestUser | null = bob) =>
    server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}${query}`, headers: user ? user.auth : {} });

  test('query: equality, comparisons, $or, meta keys; fields; sort; start/limit', async () => {
    const q = (o: unknown) => `?query=${encodeURIComponent(JSON.stringify(o))}`;
    assert.deepEqual(((await data(q({ name: 'Ben' }))).json() as Array<{ age: number }>).map((r) => r.age), [41]);
    assert.deepEqual(((await data(`${q({ age: { $gt: 25, $lt: 41 } })}`)).json() as Array<{ name: string }>).map((r) => r.name).sort(), ['Ann']);
    assert.deepEqual(((await data(`${q({ $or: [{ name: 'Ann' }, { name: 'Cid' }] })}`)).json() as Array<{ name: string }>).map((r) => r.name).sort(), ['Ann', 'Cid']);
    assert.ok(((await data(q({ _submission_time: { $gte: '2000-01-01' } }))).json() as unknown[]).length >= 3);
    assert.equal((await data(q({ _submission_time: { $gte: 'yesterday' } }))).statusCode, 400);
    assert.equal((await data('?query={bad json')).statusCode, 400);
    const fields = (await data(`${q({ name: 'Ann' })}&fields=${encodeURIComponent('["name","_id","missing"]')}`)).json();
    assert.deepEqual(Object.keys(fields[0]), ['name', '_id', 'missing']);
    assert.equal(fields[0].missing, null);
    const sorted = ((await data(`${q({ name: { $in: ['Ann', 'Ben', 'Cid'] } })}&sort=${encodeURIComponent('{"age": -1}')}`)).json() as Array<{ age: number }>).map((r) => r.age);
    assert.deepEqual(sorted, [41, 30, 19]);
    const limited = (await data(`${q({ name: { $in: ['Ann', 'Ben', 'Cid'] } })}&sort=${encodeURIComponent('{"age": 1}')}&start=1&limit=1`)).json();
    assert.deepEqual(limited.map((r: { age: number }) => r.age), [30]);
    // Field names are data, not SQL.
    assert.equal((await data(q({ "name') OR 1=1 --": 'x' }))).json().length, 0);
  });

  test('column filters: uuid, submitted_by__username, version, date_created__*, media_all_received, tags', async () => {
    const all = (await data('')).json() as Array<Record<string, unknown>>;
    const ann = all.find((r) => r['name'] === 'Ann');
    assert.ok(ann);
    const names = async (params: string) => ((await data(params)).json() as Array<{ name: string }>).map((r) => r.name).sort();
    assert.deepEqual(await names(`?uuid=${String(ann['_uuid'])}`), ['Ann']);
    assert.deepEqual(await names('?uuid=00000000-0000-4000-8000-000000000000'), []);
    assert.deepEqual(await names('?submitted_by__username=nobody'), []);
    assert.deepEqual(await names('?version=nosuchversion'), []);
    assert.equal((await names('?version=2026010101')).length, all.length);
    assert.deepEqual(await names('?date_created__year__lt=2000'), []);
    assert.equal((await names('?date_created__gte=2000-01-01')).length, all.length);
    assert.deepEqual(await names('?date_created__lt=2000-01-01'), []);
    assert.equal((await names('?media_all_received=true')).length + (await names('?media_all_received=false')).length, all.length);
    assert.deepEqual(await names('?tags=nosuchtag'), []);
    assert.equal((await names('?not_tagged=nosuchtag')).length, all.length);
    // With a query, and paged (the cached match list is per filter).
    assert.deepEqual(await names(`?query=${encodeURIComponent(JSON.stringify({ name: 'Ann' }))}&uuid=${String(ann['_uuid'])}&page=1&page_size=10`), ['Ann']);
    assert.deepEqual(await names(`?query=${encodeURIComponent(JSON.stringify({ name: 'Ann' }))}&uuid=x`), []);
    assert.equal((await data('?date_created__year=20x6')).statusCode, 400);
  });

  test('page and page_size answer a bare array with Link navigation', async () => {
    const first = await data('?page=1&page_size=2');
    assert.equal(first.json().length, 2);
    assert.match(String(first.headers['link']), /rel="next"/);
    assert.equal((await data('?page=99&page_size=2')).statusCode, 404);
  });

  test('one record, deletion, and who may read or delete', async () => {
    // A record of its own to delete: the other tests query Ann, Ben and Cid.
    await submit('/bob/submission', householdXml({ uuid: randomUUID(), name: 'Dot', age: 52 }));
    const [record] = (await data(`?query=${encodeURIComponent(JSON.stringify({ name: 'Dot' }))}`)).json();
    const url = `/api/v1/data/${formId}/${record._id}`;
    assert.equal((await server.app.inject({ method: 'GET', url, headers: bob.auth })).json().name, 'Dot');
    const xml = await server.app.inject({ method: 'GET', url: `${url}.xml`, headers: bob.auth });
    assert.match(String(xml.headers['content-type']), /^text\/xml/);
    assert.match(xml.body, /<name>Dot<\/name>/);
    assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}/abc`, headers: bob.auth })).statusCode, 400);
    assert.equal((await data('', null)).statusCode, 404);
    // public_data alone shares the records with everyone (the form itself stays private).
    await server.app.inject({ method: 'PATCH', url: `/api/v1/forms/${formId}`, payload: { public_data: true }, headers: bob.auth });
    try {
      assert.equal((await data('', null)).statusCode, 200);
      assert.equal((await server.app.inject({ method: 'GET', url })).json().name, 'Dot');
      assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}` })).statusCode, 404);
      assert.deepEqual((await server.app.inject({ method: 'GET', url: '/api/v1/data/public' })).json().map((f: { id: number }) => f.id), [formId]);
    } finally {
      await server.app.inject({ method: 'PATCH', url: `/api/v1/forms/${formId}`, payload: { public_data: false }, headers: bob.auth });
    }
    assert.equal((await data('', null)).statusCode, 404);
    assert.deepEqual((await server.app.inject({ method: 'GET', url: '/api/v1/data/public' })).json(), []);
    await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/share`, payload: { username: 'rita', role: 'readonly' }, headers: bob.auth });
    assert.equal((await data('', rita)).statusCode, 200);
    const denied = await server.app.inject({ method: 'DELETE', url, headers: rita.auth });
    assert.equal(denied.statusCode, 403);
    assert.deepEqual(denied.json(), { detail: 'You do not have delete permissions.' });
    const before = (await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}`, headers: bob.auth })).json().num_of_submissions;
    assert.equal((await server.app.inject({ method: 'DELETE', url, headers: bob.auth })).statusCode, 204);
    assert.equal((await server.app.inject({ method: 'GET', url, headers: bob.auth })).statusCode, 404);
    assert.equal((await server.app.inject({ method: 'DELETE', url, headers: bob.auth })).statusCode, 404);
    assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}`, headers: bob.auth })).json().num_of_submissions, before - 1);
  });

  test('record labels: editors tag records (any case is one tag); the tags filter finds them; readers see them', async () => {
    const [record] = (await data(`?query=${encodeURIComponent(JSON.stringify({ name: 'Ben' }))}`)).json() as Array<{ _id: number }>;
    const url = `/api/v1/data/${formId}/${String(record?._id)}/labels`;
    const added = await server.app.inject({ method: 'POST', url, headers: bob.auth, payload: { tags: 'verified,Urgent' } });
    assert.equal(added.statusCode, 201, added.body);
    assert.deepEqual(added.json(), ['verified', 'Urgent']);
    assert.deepEqual((await server.app.inject({ method: 'POST', url, headers: bob.auth, payload: { tags: 'URGENT' } })).json(), ['verified', 'Urgent']);
    assert.deepEqual((await server.app.inject({ method: 'GET', url, headers: bob.auth })).json(), ['verified', 'Urgent']);
    assert.deepEqual(((await data('?tags=urgent')).json() as Array<{ name: string }>).map((r) => r.name), ['Ben']);
    assert.ok(!((await data('?not_tagged=verified')).json() as Array<{ name: string }>).some((r) => r.name === 'Ben'));
    const [ben] = (await data(`?query=${encodeURIComponent(JSON.stringify({ name: 'Ben' }))}`)).json() as Array<{ _tags: string[] }>;
    assert.deepEqual(ben?._tags, ['verified', 'Urgent']);
    const removed = await server.app.inject({ method: 'DELETE', url: `${url}/urgent`, headers: bob.auth });
    assert.equal(removed.statusCode, 200);
    assert.deepEqual(removed.json(), ['verified']);
    assert.equal((await server.app.inject({ method: 'DELETE', url: `${url}/absent`, headers: bob.auth })).statusCode, 202);
    assert.equal((await server.app.inject({ method: 'POST', url, headers: rita.auth, payload: { tags: 'mine' } })).statusCode, 403, 'a reader cannot tag');
  });

  test('a record keeps its tags when a device edits it, as onadata keeps them on the record', async () => {
    const original = randomUUID();
    await submit('/bob/submission', householdXml({ uuid: original, name: 'Tagged' }));
    const [record] = (await data(`?query=${encodeURIComponent(JSON.stringify({ name: 'Tagged' }))}`)).json() as Array<{ _id: number }>;
    const url = `/api/v1/data/${formId}/${String(record?._id)}/labels`;
    assert.equal((await server.app.inject({ method: 'POST', url, headers: bob.auth, payload: { tags: 'checked' } })).statusCode, 201);
    const edit = await submit('/bob/submission', householdXml({ uuid: randomUUID(), name: 'Tagged again', deprecated: original }));
    assert.equal(edit.statusCode, 201, edit.body);
    const [edited] = (await data(`?query=${encodeURIComponent(JSON.stringify({ name: 'Tagged again' }))}`)).json() as Array<{ _id: number; _tags: string[] }>;
    assert.equal(edited?._id, record?._id);
    assert.deepEqual(edited?._tags, ['checked']);
  });

  test('DELETE /api/v1/data/{pk} with instance_ids or delete_all deletes those records at once', async () => {
    const ids: number[] = [];
    for (const name of ['Del1', 'Del2', 'Del3']) {
      await submit('/bob/submission', householdXml({ uuid: randomUUID(), name }));
      ids.push(((await data(`?query=${encodeURIComponent(JSON.stringify({ name }))}`)).json() as Array<{ _id: number }>)[0]?._id ?? 0);
    }
    const url = `/api/v1/data/${formId}`;
    const none = await server.app.inject({ method: 'DELETE', url, headers: bob.auth });
    assert.equal(none.statusCode, 400);
    assert.deepEqual(none.json(), { detail: 'Data id(s) not provided.' });
    assert.equal((await server.app.inject({ method: 'DELETE', url, headers: rita.auth, payload: { instance_ids: String(ids[0]) } })).statusCode, 403);
    const some = await server.app.inject({ method: 'DELETE', url, headers: bob.auth, payload: { instance_ids: `${ids[0]},${ids[1]}` } });
    assert.equal(some.statusCode, 200, some.body);
    assert.deepEqual(some.json(), { message: '2 records were deleted' });
    const left = ((await data('')).json() as Array<{ name: string }>).map((r) => r.name);
    assert.ok(!left.includes('Del1') && !left.includes('Del2') && left.includes('Del3'));
    assert.deepEqual((await server.app.inject({ method: 'DELETE', url, headers: bob.auth, payload: { permanent_delete: 'True', delete_all: 'True' } })).json(), {
      error: 'Permanent submission deletion is not enabled for this server.',
    });
  });

  test('GET /api/v1/data lists the forms with data the caller may read', async () => {
    const list = (await server.app.inject({ method: 'GET', url: '/api/v1/data', headers: bob.auth })).json();
    assert.deepEqual(list.find((f: { id: number }) => f.id === formId), {
      id: formId, id_string: 'household', title: 'Household', description: '', url: `http://testserver/api/v1/data/${formId}`,
    });
  });
});

describe('JSON submissions', () => {
  test('POST /api/v1/submissions with {id, submission} stores a record like an XML one', async () => {
    // An age outside the data API's range query (25 to 41), which reads every record of the form.
    const res = await server.app.inject({
      method: 'POST',
      url: '/api/v1/submissions',
      headers: bob.auth,
      payload: { id: 'household', submission: { name: 'Jay', age: 63, address: { village: 'Kisii' }, browsers: ['firefox', 'chrome'], children: [{ childs_name: 'Kim', childs_age: 3 }] } },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().message, 'Successful submission.');
    const uuid = String(res.json().instanceID).replace('uuid:', '');
    const [record] = (await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?query=${encodeURIComponent(JSON.stringify({ _uuid: uuid }))}`, headers: bob.auth })).json();
    assert.equal(record.name, 'Jay');
    assert.equal(record.age, 63);
    assert.equal(record['address/village'], 'Kisii');
    assert.equal(record.browsers, 'firefox chrome');
    assert.deepEqual(record.children, [{ 'children/childs_name': 'Kim', 'children/childs_age': 3 }]);
  });

  test('JSON errors: no submission key, empty, unknown form, anonymous, duplicate', async () => {
    const post = (payload: unknown, headers: Record<string, string> = bob.auth) =>
      server.app.inject({ method: 'POST', url: '/api/v1/submissions', headers, payload: payload as Record<string, unknown> });
    assert.deepEqual((await post({ id: 'household' })).json(), { submission: ['No submission key provided.'] });
    assert.deepEqual((await post({ id: 'household', submission: {} })).json(), { submission: ['Received empty submission. No instance was created'] });
    assert.equal((await post({ id: 'nope', submission: { name: 'x' } })).statusCode, 404);
    assert.equal((await post({ id: 'household', submission: { name: 'x' } }, {})).statusCode, 401);
    const uuid = randomUUID();
    const body = { id: 'household', submission: { name: 'Dup', meta: { instanceID: `uuid:${uuid}` } } };
    assert.equal((await post(body)).statusCode, 201);
    const again = await post(body);
    assert.equal(again.statusCode, 400);
    assert.deepEqual(again.json(), ['Duplicate submission']);
  });
});

describe('GeoJSON', () => {
  test('/api/v1/data/{pk}.geojson maps each record’s geopoints (lon, lat) with its id', async () => {
    // A record of its own: the data API's records belong to that suite.
    assert.equal((await submit('/bob/submission', householdXml({ uuid: randomUUID(), name: 'Geo' }))).statusCode, 201);
    const res = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}.geojson?fields=name&title=name`, headers: bob.auth });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/geo\+json/);
    const collection = res.json();
    assert.equal(collection.type, 'FeatureCollection');
    const feature = collection.features[0];
    assert.equal(feature.type, 'Feature');
    assert.deepEqual(feature.geometry, { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [36.7921711, -1.2625621] }] });
    assert.equal(feature.properties.xform, formId);
    assert.equal(typeof feature.properties.id, 'number');
    assert.equal(typeof feature.properties.name, 'string');
    assert.equal(feature.properties.title, feature.properties.name);
    const simple = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}.geojson?simple_style=true`, headers: bob.auth });
    assert.deepEqual(simple.json().features[0].geometry, { type: 'Point', coordinates: [36.7921711, -1.2625621] });
    assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}.geojson` })).statusCode, 404);
  });
});
