// A form's OData feed read by a real OData client (@odata/client) over HTTP, and loaded the way
// Excel's and Power BI's "From OData Feed" connector loads one: service document, $metadata, then
// each entity set page by page through @odata.nextLink, with Basic credentials.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { OData } from '@odata/client';
import { SaxesParser } from 'saxes';
import { basic, createUser, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';

let server: TestServer;
let url: string;
let bob: TestUser;
let alice: TestUser;
let formId: number;
let service: string;
const RECORDS = 12;

interface Page {
  '@odata.context'?: string;
  '@odata.count'?: number;
  '@odata.nextLink'?: string;
  value: Array<Record<string, unknown>>;
}

async function get(path: string, headers: Record<string, string> = bob.auth): Promise<Response> {
  return fetch(path.startsWith('http') ? path : `${url}${path}`, { headers });
}

async function page(path: string, headers: Record<string, string> = bob.auth): Promise<Page> {
  const res = await get(path, headers);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return JSON.parse(text) as Page;
}

before(async () => {
  server = await startTestServer({ BASE_URL: '' });
  await server.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
  bob = await createUser(server.app, 'bob');
  alice = await createUser(server.app, 'alice');
  formId = await publishForm(server.app, bob, formFile(HOUSEHOLD_CSV, 'household.csv'));
  service = `/api/v1/forms/${formId}/odata.svc`;
  for (let n = 0; n < RECORDS; n++) {
    const res = await postSubmission(server.app, '/bob/submission', householdXml({ uuid: randomUUID(), name: `Person ${n}`, age: 20 + n }), bob.auth);
    assert.equal(res.statusCode, 201, res.body);
  }
});
after(() => server.close());

/** The names of the CSDL elements, with their Name attributes: `EntityType:Submission`, … */
function csdlNames(xml: string): string[] {
  const parser = new SaxesParser({ xmlns: true });
  const names: string[] = [];
  parser.on('opentag', (tag) => {
    const name = tag.attributes['Name'];
    names.push(`${tag.local}:${typeof name === 'object' ? name.value : (name ?? '')}`);
  });
  parser.write(xml).close();
  return names;
}

test("Excel's From OData Feed sequence lists the records and the repeat's rows", async () => {
  // Excel and Power BI send Basic credentials and ask for JSON (odata.metadata=minimal).
  const headers = { authorization: basic(bob.username, bob.password), accept: 'application/json;odata.metadata=minimal;q=1.0,application/json;q=0.9,*/*;q=0.1' };
  const anonymous = await get(service, {});
  assert.equal(anonymous.status, 401);
  assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Basic /);
  assert.equal(((await anonymous.json()) as { error: { code: string } }).error.code, '401');

  const doc = await page(service, headers);
  assert.deepEqual(doc.value.map((s) => s['name']), ['Submissions', 'Submissions.children']);
  const metadata = await get(`${service}/$metadata`, { ...headers, accept: 'application/xml' });
  assert.equal(metadata.status, 200);
  assert.match(metadata.headers.get('content-type') ?? '', /application\/xml/);
  assert.equal(metadata.headers.get('odata-version'), '4.0');
  const names = csdlNames(await metadata.text());
  for (const name of ['EntityType:Submission', 'EntityType:Submissions_children', 'ComplexType:Submission_address', 'EntitySet:Submissions', 'EntitySet:Submissions.children', 'NavigationProperty:children', 'Property:__Submissions-id']) {
    assert.ok(names.includes(name), `${name} in $metadata`);
  }

  // Each set page by page through @odata.nextLink (here 5 entities a page).
  const load = async (set: string): Promise<Array<Record<string, unknown>>> => {
    const rows: Array<Record<string, unknown>> = [];
    let next: string | undefined = `${service}/${set}`;
    while (next !== undefined) {
      const res = await get(next, { ...headers, prefer: 'odata.maxpagesize=5' });
      assert.equal(res.status, 200);
      const body = (await res.json()) as Page;
      rows.push(...body.value);
      next = body['@odata.nextLink'];
    }
    return rows;
  };
  const records = await load('Submissions');
  assert.equal(records.length, RECORDS);
  assert.deepEqual(records.map((r) => r['name']), Array.from({ length: RECORDS }, (_, n) => `Person ${n}`));
  const first = records[0] ?? {};
  assert.equal(first['age'], 20);
  assert.deepEqual(first['address'], { village: 'Kisumu' });
  assert.deepEqual(first['gps'], { type: 'Point', coordinates: [36.7921711, -1.2625621, 0], properties: { accuracy: 20 } });
  assert.match(String(first['__id']), /^uuid:/);
  assert.equal((first['__system'] as Record<string, unknown>)['submitterName'], 'bob');
  assert.match(String(first['children@odata.navigationLink']), /^Submissions\('uuid%3A.*'\)\/children$/);
  const children = await load('Submissions.children');
  assert.equal(children.length, RECORDS * 2);
  assert.deepEqual(children.slice(0, 2).map((c) => [c['childs_name'], c['childs_age'], c['__Submissions-id']]), [
    ['Tom', 12, first['__id']],
    ['Dick', 5, first['__id']],
  ]);
});

test('a real OData client reads $filter, $orderby, $select, $top, $skip and $count', async () => {
  const client = OData.New4({ serviceEndpoint: `${url}${service}/`, credential: { username: bob.username, password: bob.password } });
  const submissions = client.getEntitySet<Record<string, unknown>>('Submissions');
  const adults = await submissions.query(OData.newParam().filter('age ge 25 and age lt 30').orderby('age', 'desc').select(['name', 'age']));
  assert.deepEqual(adults.map((r) => [r['name'], r['age']]), [['Person 9', 29], ['Person 8', 28], ['Person 7', 27], ['Person 6', 26], ['Person 5', 25]]);
  assert.deepEqual(Object.keys(adults[0] ?? {}).sort(), ['__id', 'age', 'children@odata.navigationLink', 'name']);
  const window = await submissions.query(OData.newParam().top(2).skip(3));
  assert.deepEqual(window.map((r) => r['name']), ['Person 3', 'Person 4']);
  assert.equal(await submissions.count(), RECORDS);
});

test('filters on meta fields, date functions, text functions, not and parentheses', async () => {
  const names = async (filter: string): Promise<unknown[]> => (await page(`${service}/Submissions?$filter=${encodeURIComponent(filter)}`)).value.map((r) => r['name']);
  const year = new Date().getUTCFullYear();
  assert.equal((await names(`year(__system/submissionDate) eq ${year} and __system/submissionDate le now()`)).length, RECORDS);
  assert.equal((await names(`date(__system/submissionDate) lt 2000-01-01`)).length, 0);
  assert.equal((await names(`__system/submissionDate gt 2000-01-01T00:00:00Z and month(__system/submissionDate) ge 1 and day(__system/submissionDate) ge 1 and hour(__system/submissionDate) ge 0 and minute(__system/submissionDate) ge 0 and second(__system/submissionDate) ge 0`)).length, RECORDS);
  assert.deepEqual(await names(`(name eq 'Person 1' or name eq 'Person 2') and not (age eq 21)`), ['Person 2']);
  assert.deepEqual(await names(`startswith(name, 'Person 1') and contains(tolower(name), '1') and endswith(name, '0')`), ['Person 10']);
  assert.equal((await names(`__system/reviewState eq null and __system/submitterName eq 'bob' and address/village eq 'Kisumu'`)).length, RECORDS);
  assert.deepEqual(await names(`name eq 'O''Brien'`), []);
  const counted = await page(`${service}/Submissions?$filter=${encodeURIComponent('age gt 28')}&$count=true&$top=1`);
  assert.equal(counted['@odata.count'], 3);
  assert.equal(counted.value.length, 1);
  assert.equal(counted['@odata.nextLink'], undefined, 'the $top of 1 is all that was asked for');
  const paged = (await (await get(`${service}/Submissions?$filter=${encodeURIComponent('age gt 28')}&$top=2`, { ...bob.auth, prefer: 'odata.maxpagesize=1' })).json()) as Page;
  assert.match(paged['@odata.nextLink'] ?? '', /\$skiptoken=.*\$top=1|\$top=1.*\$skiptoken=/);
  const rest = await page(paged['@odata.nextLink'] ?? '');
  assert.deepEqual([...paged.value, ...rest.value].map((r) => r['age']), [29, 30]);
  assert.equal(rest['@odata.nextLink'], undefined);
});

test('$expand=* inlines the repeat rows; $select keeps only the chosen answers', async () => {
  const expanded = await page(`${service}/Submissions?$expand=*&$top=1&$select=name,address/village`);
  const record = expanded.value[0] ?? {};
  assert.deepEqual(Object.keys(record).sort(), ['__id', 'address', 'children', 'name']);
  const rows = record['children'] as Array<Record<string, unknown>>;
  assert.deepEqual(rows.map((r) => r['childs_name']), ['Tom', 'Dick']);
  assert.equal(rows[0]?.['__Submissions-id'], record['__id']);
  const counted = await page(`${service}/Submissions.children?$count=true&$top=3&$skip=1`);
  assert.equal(counted['@odata.count'], RECORDS * 2);
  assert.deepEqual(counted.value.map((r) => r['childs_name']), ['Dick', 'Tom', 'Dick']);
});

test('paging a repeat set splits a record between pages without losing or repeating a row', async () => {
  const seen: unknown[] = [];
  let next: string | undefined = `${service}/Submissions.children`;
  while (next !== undefined) {
    const res = await get(next, { ...bob.auth, prefer: 'odata.maxpagesize=3' });
    const body = (await res.json()) as Page;
    seen.push(...body.value.map((r) => r['__id']));
    next = body['@odata.nextLink'];
  }
  assert.equal(seen.length, RECORDS * 2);
  assert.equal(new Set(seen).size, RECORDS * 2);
});

test('permissions are the data API’s: a stranger is refused as by the data API, a readonly share reads, Token works', async () => {
  const stranger = await get(`${service}/Submissions`, alice.auth);
  const dataApi = await get(`/api/v1/data/${formId}`, alice.auth);
  assert.equal(stranger.status, dataApi.status);
  assert.equal(stranger.status, 404);
  assert.ok(((await stranger.json()) as { error: { message: string } }).error.message);
  const shared = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/share`, headers: bob.auth, payload: { username: 'alice', role: 'readonly' } });
  assert.ok(shared.statusCode < 300, shared.body);
  assert.equal((await page(`${service}/Submissions`, alice.auth)).value.length, RECORDS);
  assert.equal((await page(`${service}/Submissions`, { authorization: basic(alice.username, alice.password) })).value.length, RECORDS);
  assert.equal((await get(`/api/v1/forms/999999/odata.svc/Submissions`)).status, 404);
});

test('bad queries get 400 with an OData error body', async () => {
  for (const query of [
    '$filter=age gt',
    '$filter=nosuch eq 1',
    "$filter=age eq 'x' or",
    '$filter=gps eq 1',
    '$filter=substringof(name, 1)',
    '$top=-1',
    '$orderby=age sideways',
    '$select=nosuch',
    '$expand=nosuch',
    '$skiptoken=garbage',
    '$format=atom',
    '$search=x',
    '$foo=1',
    '$filter=' + encodeURIComponent("'unterminated"),
    '$filter=' + encodeURIComponent('('.repeat(100) + 'age eq 1' + ')'.repeat(100)),
  ]) {
    const res = await get(`${service}/Submissions?${query.replace(/ /g, '%20')}`);
    assert.equal(res.status, 400, query);
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    assert.equal(body.error?.code, '400', query);
    assert.ok(body.error?.message, query);
  }
  const filteredRepeat = await get(`${service}/Submissions.children?$filter=${encodeURIComponent('childs_age gt 1')}`);
  assert.equal(filteredRepeat.status, 400);
  assert.equal((await get(`${service}/Nothing`)).status, 404);
});
