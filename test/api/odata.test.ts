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

test('$expand=* inlines every level of repeats; name($expand=…) chooses levels', async () => {
  const nested = [
    'survey,,,,',
    ',type,name,label,',
    ',text,place,Place,',
    ',begin repeat,kids,Kids,',
    ',text,kid,Kid,',
    ',begin repeat,shots,Shots,',
    ',date,shot_date,Shot date,',
    ',end repeat,,,',
    ',end repeat,,,',
    'settings,,,,',
    ',form_id,form_title,version,',
    ',nested_kids,Nested,2026010101,',
    '',
  ].join('\n');
  const nestedId = await publishForm(server.app, bob, formFile(nested, 'nested_kids.csv'));
  const nestedService = `/api/v1/forms/${nestedId}/odata.svc`;
  const uuid = randomUUID();
  const shots = (dates: string[]) => dates.map((d) => `<shots><shot_date>${d}</shot_date></shots>`).join('');
  const xml =
    `<?xml version="1.0"?><nested_kids id="nested_kids" version="2026010101"><place>Here</place>` +
    `<kids><kid>Ann</kid>${shots(['2026-01-01', '2026-02-01'])}</kids><kids><kid>Ben</kid>${shots(['2026-03-01'])}</kids>` +
    `<meta><instanceID>uuid:${uuid}</instanceID></meta></nested_kids>`;
  const res = await postSubmission(server.app, '/bob/submission', xml, bob.auth);
  assert.equal(res.statusCode, 201, res.body);
  const all = (await page(`${nestedService}/Submissions?$expand=*`)).value[0] ?? {};
  const kids = all['kids'] as Array<Record<string, unknown>>;
  assert.deepEqual(kids.map((k) => (k['shots'] as Array<Record<string, unknown>>).map((s) => s['shot_date'])), [['2026-01-01', '2026-02-01'], ['2026-03-01']]);
  assert.equal((kids[0]?.['shots'] as Array<Record<string, unknown>>)[1]?.['__id'], `uuid:${uuid}/kids/1/shots/2`);
  const oneLevel = (await page(`${nestedService}/Submissions?$expand=kids`)).value[0] ?? {};
  assert.match(String((oneLevel['kids'] as Array<Record<string, unknown>>)[0]?.['shots@odata.navigationLink']), /^Submissions\.kids\('uuid%3A.*%2Fkids%2F1'\)\/shots$/);
  const twoLevels = (await page(`${nestedService}/Submissions?$expand=${encodeURIComponent('kids($expand=shots)')}`)).value[0] ?? {};
  assert.deepEqual(twoLevels, all);
  assert.equal((await get(`${nestedService}/Submissions?$expand=${encodeURIComponent('kids($expand=nosuch)')}`)).status, 400);
  // The nested rows: by navigation from a kid, filtered on their parents' ids, and by key.
  const link = String((oneLevel['kids'] as Array<Record<string, unknown>>)[0]?.['shots@odata.navigationLink']);
  assert.deepEqual((await page(`${nestedService}/${link}`)).value.map((s) => s['shot_date']), ['2026-01-01', '2026-02-01']);
  const bens = await page(`${nestedService}/Submissions.kids.shots?$filter=${encodeURIComponent(`__Submissions-kids-id eq 'uuid:${uuid}/kids/2' and __Submissions-id eq 'uuid:${uuid}'`)}`);
  assert.deepEqual(bens.value.map((s) => [s['shot_date'], s['__id']]), [['2026-03-01', `uuid:${uuid}/kids/2/shots/1`]]);
  const shot = (await page(`${nestedService}/Submissions('uuid%3A${uuid}')/kids('${encodeURIComponent(`uuid:${uuid}/kids/1`)}')/shots('${encodeURIComponent(`uuid:${uuid}/kids/1/shots/2`)}')`)) as unknown as Record<string, unknown>;
  assert.equal(shot['shot_date'], '2026-02-01');
  const latest = await page(`${nestedService}/Submissions.kids.shots?$orderby=${encodeURIComponent('shot_date desc')}&$top=1`);
  assert.equal(latest.value[0]?.['shot_date'], '2026-03-01');
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
  for (const query of ['$filter=nosuch eq 1', '$filter=__system/submissionDate gt now()', '$orderby=age', '$skiptoken=' + Buffer.from('{"k":[1]}').toString('base64url')]) {
    const res = await get(`${service}/Submissions.children?${query.replace(/ /g, '%20')}`);
    assert.equal(res.status, 400, query);
  }
  for (const path of ["Submissions('uuid:x')/nosuch", "Submissions('x')", "Submissions.children('uuid:x/other/1')", 'Nothing', "Nothing('a')"]) {
    const res = await get(`${service}/${encodeURI(path)}`);
    assert.equal(res.status, 404, path);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, '404');
  }
  for (const path of ['Submissions/children', "Submissions('uuid:x", "Submissions(1)", 'Submissions//x']) {
    assert.equal((await get(`${service}/${encodeURI(path)}`)).status, 400, path);
  }
});

test('one record by key, its repeat rows by navigation, and one row by key', async () => {
  const [first, second] = (await page(`${service}/Submissions?$top=2`)).value;
  const id = String(first?.['__id']);
  const one = (await page(`${service}/Submissions('${encodeURIComponent(id)}')`)) as unknown as Record<string, unknown>;
  assert.equal(one['@odata.context'], `${url}${service}/$metadata#Submissions/$entity`);
  assert.equal(one['__id'], id);
  assert.equal(one['name'], first?.['name']);
  // The navigation link each record carries is a URL relative to the service: follow it.
  const link = String(one['children@odata.navigationLink']);
  const rows = await page(`${service}/${link}`);
  assert.deepEqual(rows.value.map((r) => [r['childs_name'], r['__Submissions-id'], r['__id']]), [
    ['Tom', id, `${id}/children/1`],
    ['Dick', id, `${id}/children/2`],
  ]);
  assert.equal(rows['@odata.context'], `${url}${service}/$metadata#Submissions.children`);
  const dick = (await page(`${service}/Submissions.children('${encodeURIComponent(`${id}/children/2`)}')`)) as unknown as Record<string, unknown>;
  assert.equal(dick['childs_name'], 'Dick');
  assert.equal(dick['@odata.context'], `${url}${service}/$metadata#Submissions.children/$entity`);
  const viaRecord = (await page(`${service}/Submissions('${encodeURIComponent(id)}')/children('${encodeURIComponent(`${id}/children/1`)}')`)) as unknown as Record<string, unknown>;
  assert.equal(viaRecord['childs_name'], 'Tom');
  // Options apply below an entity too; a row of another record is not below this one.
  const older = await page(`${service}/Submissions('${encodeURIComponent(id)}')/children?$filter=${encodeURIComponent('childs_age gt 10')}&$select=childs_name&$count=true`);
  assert.equal(older['@odata.count'], 1);
  assert.deepEqual(older.value, [{ __id: `${id}/children/1`, childs_name: 'Tom' }]);
  const selected = (await page(`${service}/Submissions('${encodeURIComponent(id)}')?$select=age&$expand=children`)) as unknown as Record<string, unknown>;
  assert.deepEqual(Object.keys(selected).sort(), ['@odata.context', '__id', 'age', 'children']);
  const otherId = String(second?.['__id']);
  assert.equal((await get(`${service}/Submissions('${encodeURIComponent(id)}')/children('${encodeURIComponent(`${otherId}/children/1`)}')`)).status, 404);
  assert.equal((await get(`${service}/Submissions('uuid:${randomUUID()}')`)).status, 404);
  assert.equal((await get(`${service}/Submissions.children('${encodeURIComponent(`${id}/children/3`)}')`)).status, 404);
  // Someone who may not read the form gets what the data API gives them.
  assert.equal((await get(`${service}/Submissions('${encodeURIComponent(id)}')`, { authorization: basic('nobody', 'x') })).status, 401);
});

test('$filter and $orderby on a repeat set: its answers, __id and __Submissions-id, paged by keyset', async () => {
  const records = (await page(`${service}/Submissions?$orderby=${encodeURIComponent('age desc')}&$top=3&$select=age`)).value;
  const ids = records.map((r) => String(r['__id']));
  const rows = async (query: string, pageSize?: number): Promise<Array<Record<string, unknown>>> => {
    const out: Array<Record<string, unknown>> = [];
    let next: string | undefined = `${service}/Submissions.children?${query}`;
    while (next !== undefined) {
      const body: Page = (await (await get(next, { ...bob.auth, ...(pageSize ? { prefer: `odata.maxpagesize=${pageSize}` } : {}) })).json()) as Page;
      out.push(...body.value);
      next = body['@odata.nextLink'];
    }
    return out;
  };
  const toms = await rows(`$filter=${encodeURIComponent("childs_name eq 'Tom' and childs_age ge 12")}&$count=true`);
  assert.equal(toms.length, RECORDS);
  const ofOne = await rows(`$filter=${encodeURIComponent(`__Submissions-id eq '${ids[0]}'`)}`);
  assert.deepEqual(ofOne.map((r) => r['childs_name']), ['Tom', 'Dick']);
  const byId = await rows(`$filter=${encodeURIComponent(`__id eq '${ids[1]}/children/2' or startswith(__id, '${ids[2]}/')`)}`);
  assert.equal(byId.length, 3);
  // Ordered by age then by record descending, two rows a page: every row once, in order.
  const ordered = await rows(`$orderby=${encodeURIComponent('childs_age asc,__Submissions-id desc')}&$select=childs_age,__Submissions-id`, 2);
  assert.equal(ordered.length, RECORDS * 2);
  assert.equal(new Set(ordered.map((r) => r['__id'])).size, RECORDS * 2);
  assert.deepEqual(ordered.map((r) => r['childs_age']), [...Array<number>(RECORDS).fill(5), ...Array<number>(RECORDS).fill(12)]);
  const parents = ordered.slice(0, RECORDS).map((r) => String(r['__Submissions-id']));
  assert.deepEqual(parents, [...parents].sort().reverse());
  const top = await page(`${service}/Submissions.children?$filter=${encodeURIComponent('childs_age lt 10')}&$orderby=${encodeURIComponent('__id desc')}&$top=1&$count=true`);
  assert.equal(top['@odata.count'], RECORDS);
  assert.equal(top.value.length, 1);
});

test('$orderby pages follow a keyset: no record lost or repeated, nulls first ascending', async () => {
  const walk = async (orderby: string): Promise<Array<Record<string, unknown>>> => {
    const out: Array<Record<string, unknown>> = [];
    let next: string | undefined = `${service}/Submissions?$orderby=${encodeURIComponent(orderby)}&$select=name,age`;
    while (next !== undefined) {
      const body: Page = (await (await get(next, { ...bob.auth, prefer: 'odata.maxpagesize=5' })).json()) as Page;
      out.push(...body.value);
      next = body['@odata.nextLink'];
    }
    return out;
  };
  const byDate = await walk('__system/submissionDate desc');
  assert.deepEqual(byDate.map((r) => r['name']), Array.from({ length: RECORDS }, (_, n) => `Person ${RECORDS - 1 - n}`));
  const byVillage = await walk('address/village asc,age desc');
  assert.deepEqual(byVillage.map((r) => r['age']), Array.from({ length: RECORDS }, (_, n) => 20 + RECORDS - 1 - n));
  const byMissing = await walk('photo desc,name');
  assert.equal(new Set(byMissing.map((r) => r['__id'])).size, RECORDS);
});

test('a page or a record read again shows an edit, a review and a deletion at once', async () => {
  const filtered = `${service}/Submissions?$filter=${encodeURIComponent('age ge 90')}&$top=10`;
  const rows = async (): Promise<unknown[][]> =>
    (await page(filtered)).value.map((r) => [r['__id'], r['name'], r['age'], (r['__system'] as Record<string, unknown>)['reviewState']]);
  const uuid = randomUUID();
  assert.equal((await postSubmission(server.app, '/bob/submission', householdXml({ uuid, name: 'Memo', age: 90 }), bob.auth)).statusCode, 201);
  assert.deepEqual(await rows(), [[`uuid:${uuid}`, 'Memo', 90, null]]);
  assert.deepEqual(await rows(), [[`uuid:${uuid}`, 'Memo', 90, null]]);

  const edited = randomUUID();
  assert.equal((await postSubmission(server.app, '/bob/submission', householdXml({ uuid: edited, name: 'Memo edited', age: 91, deprecated: uuid }), bob.auth)).statusCode, 201);
  assert.deepEqual(await rows(), [[`uuid:${edited}`, 'Memo edited', 91, null]]);

  const byKey = `${service}/Submissions('${encodeURIComponent(`uuid:${edited}`)}')`;
  const one = (await page(byKey)) as unknown as Record<string, Record<string, unknown>>;
  const recordId = Number(one['__system']?.['recordId']);
  assert.equal(one['__system']?.['reviewState'], null);
  const review = await server.app.inject({ method: 'POST', url: '/api/v1/submissionreview', headers: bob.auth, payload: { instance: recordId, status: '1' } });
  assert.equal(review.statusCode, 201, review.body);
  assert.deepEqual(await rows(), [[`uuid:${edited}`, 'Memo edited', 91, 'approved']]);
  assert.equal(((await page(byKey)) as unknown as Record<string, Record<string, unknown>>)['__system']?.['reviewState'], 'approved');

  // The submitter's name is not in the record's row: a renamed submitter shows too.
  const submitter = async (path: string): Promise<unknown[]> => (await page(path)).value.map((r) => (r['__system'] as Record<string, unknown>)['submitterName']);
  assert.deepEqual(await submitter(filtered), ['bob']);
  await server.deps.db.updateTable('users').set({ username: 'bob_renamed' }).where('id', '=', bob.id).execute();
  try {
    assert.deepEqual(await submitter(filtered), ['bob_renamed']);
    assert.equal(((await page(byKey)) as unknown as Record<string, Record<string, unknown>>)['__system']?.['submitterName'], 'bob_renamed');
  } finally {
    await server.deps.db.updateTable('users').set({ username: 'bob' }).where('id', '=', bob.id).execute();
  }

  const deleted = await server.app.inject({ method: 'DELETE', url: `/api/v1/data/${formId}/${recordId}`, headers: bob.auth });
  assert.equal(deleted.statusCode, 204, deleted.body);
  assert.deepEqual(await rows(), []);
  assert.equal((await get(byKey)).status, 404);
});

test('a page larger than the pieces it is sent in arrives whole, every entity once and in order', async () => {
  const csv = ['survey,,,', ',type,name,label', ',text,note,Note', 'settings,,,', ',form_id,,', ',long_notes,,'].join('\n');
  const notesForm = await publishForm(server.app, bob, formFile(csv, 'long_notes.csv'));
  // About 4 KB an entity, beyond ASCII: 40 of them make a page several times the 64 KB pieces.
  const note = (n: number): string => `${n} ` + 'Zoë — 名前 🌍 '.repeat(200);
  for (let n = 0; n < 40; n++) {
    const xml = `<?xml version="1.0"?><long_notes id="long_notes"><note>${note(n)}</note><meta><instanceID>uuid:${randomUUID()}</instanceID></meta></long_notes>`;
    const res = await postSubmission(server.app, '/bob/submission', xml, bob.auth);
    assert.equal(res.statusCode, 201, res.body);
  }
  const body = await page(`/api/v1/forms/${notesForm}/odata.svc/Submissions`);
  assert.equal(body.value.length, 40);
  assert.deepEqual(body.value.map((entity) => entity['note']), Array.from({ length: 40 }, (_, n) => note(n)));
  // Read again: the same page from the remembered entities.
  assert.deepEqual(await page(`/api/v1/forms/${notesForm}/odata.svc/Submissions`), body);
});
