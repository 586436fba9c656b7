// Paging through a data query answers from a per-process list of matching ids; these tests show
// that every kind of change to the form's data is seen by the very next page request.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createUser, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { householdCsv, householdXml } from '../fixtures/submissions.ts';

let server: TestServer;
let bob: TestUser;

/** A household form of its own to each test, which counts and orders all of its records. */
let forms = 0;
async function ownForm(): Promise<{ idString: string; formId: number }> {
  const idString = `household_${++forms}`;
  return { idString, formId: await publishForm(server.app, bob, formFile(householdCsv(idString), 'household.csv')) };
}

async function submit(xml: string): Promise<void> {
  const res = await postSubmission(server.app, '/bob/submission', xml, bob.auth);
  assert.equal(res.statusCode, 201, res.body);
}

async function page(formId: number, query: object, pageNumber = 1, pageSize = 2): Promise<{ names: string[]; link: string }> {
  const q = encodeURIComponent(JSON.stringify(query));
  const sort = encodeURIComponent(JSON.stringify({ age: -1 }));
  const res = await server.app.inject({
    method: 'GET',
    url: `/api/v1/data/${formId}?query=${q}&sort=${sort}&page=${pageNumber}&page_size=${pageSize}`,
    headers: bob.auth,
  });
  assert.equal(res.statusCode, 200, res.body);
  return { names: (res.json() as Array<{ name: string }>).map((r) => r.name), link: String(res.headers['link'] ?? '') };
}

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
});
after(() => server.close());

test('pages of a query follow new submissions, edits and deletions at once', async () => {
  const { idString, formId } = await ownForm();
  const uuids = [randomUUID(), randomUUID(), randomUUID()];
  await submit(householdXml({ uuid: uuids[0] ?? '', name: 'Ann', age: 30, formId: idString }));
  await submit(householdXml({ uuid: uuids[1] ?? '', name: 'Ben', age: 40, formId: idString }));
  await submit(householdXml({ uuid: uuids[2] ?? '', name: 'Cat', age: 10, formId: idString }));
  const adults = { age: { $gte: 18 } };

  let first = await page(formId, adults);
  assert.deepEqual(first.names, ['Ben', 'Ann']);
  assert.doesNotMatch(first.link, /rel="next"/);
  // The same request again is answered from the cached list, with the same result.
  assert.deepEqual((await page(formId, adults)).names, ['Ben', 'Ann']);

  // A new matching submission shows up on the next request.
  await submit(householdXml({ uuid: randomUUID(), name: 'Dan', age: 50, formId: idString }));
  first = await page(formId, adults);
  assert.deepEqual(first.names, ['Dan', 'Ben']);
  assert.match(first.link, /page=2&page_size=2>; rel="next"/);
  assert.deepEqual((await page(formId, adults, 2)).names, ['Ann']);

  // An edit (deprecatedID) that makes a record stop matching removes it.
  await submit(householdXml({ uuid: randomUUID(), name: 'Ben', age: 12, deprecated: uuids[1] ?? '', formId: idString }));
  first = await page(formId, adults);
  assert.deepEqual(first.names, ['Dan', 'Ann']);
  assert.doesNotMatch(first.link, /rel="next"/);

  // A deletion removes it too.
  const list = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?query=${encodeURIComponent('{"name":"Dan"}')}`, headers: bob.auth });
  const danId = (list.json() as Array<{ _id: number }>)[0]?._id;
  const deleted = await server.app.inject({ method: 'DELETE', url: `/api/v1/data/${formId}/${danId}`, headers: bob.auth });
  assert.equal(deleted.statusCode, 204);
  assert.deepEqual((await page(formId, adults)).names, ['Ann']);

  // start/limit take the same path.
  const sliced = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?sort=${encodeURIComponent('{"age":1}')}&start=1&limit=2`, headers: bob.auth });
  assert.deepEqual((sliced.json() as Array<{ name: string }>).map((r) => r.name), ['Ben', 'Ann']);
});

test('a list sorted by time takes in new submissions as a list made afresh orders them', async () => {
  const { idString, formId } = await ownForm();
  // A matching record from before the lists are made.
  await submit(householdXml({ uuid: randomUUID(), name: 'Ann', age: 30, formId: idString }));
  const ids = async (sort: string, query: object, extra = ''): Promise<number[]> => {
    const url = `/api/v1/data/${formId}?query=${encodeURIComponent(JSON.stringify(query))}&sort=${encodeURIComponent(sort)}${extra}`;
    const res = await server.app.inject({ method: 'GET', url, headers: bob.auth });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as Array<{ _id: number }>).map((r) => r._id);
  };
  const adults = { age: { $gte: 18 } };
  const sorts = ['{"_submission_time":-1}', '{"_submission_time":1,"_id":-1}', '{"_id":-1}', '{"_last_edited":-1}'];
  // Each list is made (and cached) first, then brought up to date by the submissions below.
  for (const sort of sorts) await ids(sort, adults, '&start=0&limit=100');
  for (const [n, age] of [70, 5, 19, 33].entries()) {
    await submit(householdXml({ uuid: randomUUID(), name: `New${n}`, age, formId: idString }));
    for (const sort of sorts) {
      // The same sort written with a space is another cache entry: a list made afresh.
      const fresh = await ids(sort.replace(':', ': '), adults, '&start=0&limit=100');
      assert.deepEqual(await ids(sort, adults, '&start=0&limit=100'), fresh, `${sort} after submission ${n}`);
    }
  }
  assert.equal((await ids('{"_id":-1}', adults, '&start=0&limit=100')).length, 4); // Ann and New0, New2, New3
});
