// OSM answers (onadata-data.md §3.7, §3.2): an OpenMapKit `.osm` file posted with a record, or
// late, is read; the form's instances_with_osm, the forms filter, the record's osm keys and the
// CSV / XLSX columns show it as onadata does. Hostile files never cost the submission its 201.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as XLSX from '@e965/xlsx';
import { createUser, multipart, postSubmission, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { unzip } from '../zip.ts';
import { OSM_PARSE_LIMIT } from '../../src/modules/osm/parse.ts';

const fixture = (name: string): Buffer => readFileSync(new URL(`../fixtures/osm/${name}`, import.meta.url));
const ROAD = 'OSMWay234134797.osm';
const BUILDING = 'OSMWay34298972.osm';

let server: TestServer;

/**
 * The OSM form, published by an account of each test's own (the form id is the fixture's): the tests
 * count its records, its exports show them all, and the forms filter lists the account's forms.
 */
interface OsmForm {
  user: TestUser;
  formId: number;
}
let accounts = 0;
async function osmForm(): Promise<OsmForm> {
  const user = await createUser(server.app, `mapper${++accounts}`);
  const body = multipart({}, [{ name: 'xls_file', fileName: 'osm.xlsx', content: fixture('osm.xlsx'), contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' }]);
  const res = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: body.payload, headers: { ...user.auth, ...body.headers } });
  assert.equal(res.statusCode, 201, res.body);
  return { user, formId: Number(res.json().formid) };
}

/** onadata's instance_a.xml under another instanceID. */
function instance(uuid: string): string {
  return fixture('instance_a.xml').toString('utf8').replace('uuid:d3ef929e-e3e7-456c-9f27-7679c0074f4f', `uuid:${uuid}`);
}

function osmFile(name: string, content: Buffer | string): { name: string; content: Buffer; type: string } {
  return { name, content: Buffer.from(content), type: 'application/octet-stream' };
}

async function submit(f: OsmForm, uuid: string, files: Array<{ name: string; content: Buffer; type: string }>, status = 201): Promise<void> {
  const res = await postSubmission(server.app, `/${f.user.username}/submission`, instance(uuid), f.user.auth, files);
  assert.equal(res.statusCode, status, res.body);
}

async function record(f: OsmForm, uuid: string): Promise<Record<string, unknown>> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/data/${f.formId}?query={"_uuid":"${uuid}"}`, headers: f.user.auth });
  assert.equal(res.statusCode, 200, res.body);
  const [found] = res.json();
  return found;
}

const osmKeys = (r: Record<string, unknown>): string[] => Object.keys(r).filter((k) => k.startsWith('osm_')).filter((k) => k.includes(':')).sort();

async function listedWithOsm(f: OsmForm, value: string): Promise<number[]> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms?instances_with_osm=${value}`, headers: f.user.auth });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().map((f: { formid: number }) => f.formid);
}

before(async () => {
  server = await startTestServer();
});
after(() => server.close());

/** The OSM form with the first test's record: both OpenMapKit files posted with it. */
async function osmFormWithRecord(): Promise<OsmForm & { firstUuid: string }> {
  const f = await osmForm();
  const firstUuid = randomUUID();
  await submit(f, firstUuid, [osmFile(ROAD, fixture(ROAD)), osmFile(BUILDING, fixture(BUILDING))]);
  return { ...f, firstUuid };
}

test('OpenMapKit files posted with a record set the flag, the filter and the record’s osm keys', async () => {
  const f = await osmForm();
  const { formId } = f;
  const firstUuid = randomUUID();
  assert.deepEqual(await listedWithOsm(f, 'True'), []);
  assert.deepEqual(await listedWithOsm(f, 'False'), [formId]);

  await submit(f, firstUuid, [osmFile(ROAD, fixture(ROAD)), osmFile(BUILDING, fixture(BUILDING))]);

  assert.deepEqual(await listedWithOsm(f, 'True'), [formId]);
  assert.deepEqual(await listedWithOsm(f, 'true'), [formId]);
  assert.deepEqual(await listedWithOsm(f, 'False'), []);
  const form = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}`, headers: f.user.auth });
  assert.equal(form.json().instances_with_osm, true);

  const data = await record(f, firstUuid);
  assert.deepEqual(osmKeys(data), [
    'osm_building:building', 'osm_building:building:levels', 'osm_building:ctr:lat', 'osm_building:ctr:lon', 'osm_building:name', 'osm_building:way:id',
    'osm_road:ctr:lat', 'osm_road:ctr:lon', 'osm_road:highway', 'osm_road:lanes', 'osm_road:name', 'osm_road:way:id',
  ]);
  assert.equal(data['osm_road:way:id'], '234134797');
  assert.equal(data['osm_road:name'], 'Patuatuli Road');
  assert.equal(data['osm_building:building:levels'], '4');
  assert.equal(typeof data['osm_building:ctr:lat'], 'number');
  assert.ok(Math.abs(Number(data['osm_road:ctr:lat']) - 23.708174238006087) < 1e-12);
  // The answers themselves stay as submitted; the OSM files are stored as XML.
  assert.equal(data['osm_road'], ROAD);
  const attachments = data['_attachments'] as Array<{ filename: string; mimetype: string }>;
  assert.deepEqual(attachments.map((a) => [a.filename, a.mimetype]), [[ROAD, 'text/xml'], [BUILDING, 'text/xml']]);

  // The keys can be queried like any other.
  const byTag = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?query={"osm_road:highway":"tertiary"}`, headers: f.user.auth });
  assert.equal(byTag.json().length, 1);
});

test('the CSV export ends with each osm question’s tag columns, as onadata’s osm.csv', async () => {
  const f = await osmFormWithRecord();
  const { formId } = f;
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.csv`, headers: f.user.auth });
  assert.equal(res.statusCode, 200, res.body);
  const [header, row] = res.body.split('\n');
  const expected = fixture('osm.csv').toString('utf8').trim().split('\n');
  const tail = (line: string | undefined, n: number): string[] => (line ?? '').split(',').slice(-n);
  assert.deepEqual(tail(header, 12), tail(expected[0], 12));
  assert.deepEqual(tail(row, 12), tail(expected[1], 12));
});

test('the XLSX export puts each osm question’s tag columns after it', async () => {
  const f = await osmFormWithRecord();
  const { formId } = f;
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.xlsx`, headers: f.user.auth });
  assert.equal(res.statusCode, 200, res.body);
  const book = XLSX.read(res.rawPayload, { type: 'buffer' });
  const first = book.SheetNames[0] ?? assert.fail('no sheet');
  const rows = XLSX.utils.sheet_to_json<unknown[]>(book.Sheets[first] ?? assert.fail(first), { header: 1, raw: true, defval: null });
  const header = rows[0] as string[];
  const road = header.indexOf('osm_road');
  assert.deepEqual(header.slice(road, road + 7), ['osm_road', 'osm_road:ctr:lat', 'osm_road:ctr:lon', 'osm_road:highway', 'osm_road:lanes', 'osm_road:name', 'osm_road:way:id']);
  const values = rows[1] as unknown[];
  assert.equal(values[header.indexOf('osm_building:name')], 'kol');
  assert.equal(values[header.indexOf('osm_road:way:id')], '234134797');
});

test('files that arrive late, with a re-sent record, are read then', async () => {
  // A record with both files first: the export below shows both records.
  const f = await osmFormWithRecord();
  const { formId } = f;
  const uuid = randomUUID();
  await submit(f, uuid, []);
  assert.deepEqual(osmKeys(await record(f, uuid)), []);
  await submit(f, uuid, [osmFile(ROAD, fixture(ROAD))], 202);
  const late = await record(f, uuid);
  assert.equal(late['osm_road:way:id'], '234134797');
  assert.equal(late['osm_road:highway'], 'tertiary');
  assert.equal(late['osm_building:way:id'], undefined);
  await submit(f, uuid, [osmFile(BUILDING, fixture(BUILDING))], 202);
  assert.equal((await record(f, uuid))['osm_building:name'], 'kol');

  // The CSV export shows it (stored exports of the form's data are not reused).
  const csv = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.csv`, headers: f.user.auth });
  assert.equal(csv.body.trim().split('\n').length, 3);
  assert.match(csv.body, /Patuatuli Road[^\n]*\n[^\n]*Patuatuli Road/);
});

test('an entity bomb, a malformed file and a file over the limit are stored but never read', async () => {
  const f = await osmForm();
  const bomb =
    '<?xml version="1.0"?><!DOCTYPE osm [<!ENTITY a "aaaaaaaaaaaaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">' +
    '<!ENTITY e SYSTEM "file:///etc/passwd">]><osm><way id="1"><tag k="name" v="&c;&e;"/></way></osm>';
  const malformed = '<osm><way id="2"><tag k="name" v="cut';
  const huge = `<osm><way id="3"><tag k="name" v="big"/></way>${' '.repeat(OSM_PARSE_LIMIT)}</osm>`;
  const cases: Array<[string, Buffer]> = [['bomb', Buffer.from(bomb)], ['malformed', Buffer.from(malformed)], ['huge', Buffer.from(huge)], ['binary', Buffer.from([0xff, 0xfe, 0, 1, 2])]];
  for (const [what, content] of cases) {
    const uuid = randomUUID();
    const started = Date.now();
    await submit(f, uuid, [osmFile(ROAD, content), osmFile(BUILDING, fixture(BUILDING))]);
    assert.ok(Date.now() - started < 10_000, what);
    const stored = await record(f, uuid);
    assert.equal(stored['osm_road:way:id'], undefined, what);
    assert.equal(stored['osm_road:name'], undefined, what);
    // The good file beside it is read as usual, and the bad one is kept as an attachment.
    assert.equal(stored['osm_building:name'], 'kol', what);
    assert.deepEqual((stored['_attachments'] as Array<{ filename: string }>).map((a) => a.filename).sort(), [ROAD, BUILDING], what);
  }
});

test('the combined OSM export still joins the records’ files', async () => {
  const f = await osmFormWithRecord();
  const { formId, firstUuid } = f;
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.osm?query={"_uuid":"${firstUuid}"}`, headers: f.user.auth });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.body, fixture('combined.osm').toString('utf8'));
});

test('an edit that does not re-send its OSM file keeps the record’s osm keys', async () => {
  const f = await osmForm();
  const uuid = randomUUID();
  await submit(f, uuid, [osmFile(ROAD, fixture(ROAD))]);
  const edited = randomUUID();
  const xml = instance(edited).replace('</instanceID>', `</instanceID><deprecatedID>uuid:${uuid}</deprecatedID>`).replace('<fav_color>red</fav_color>', '<fav_color>blue</fav_color>');
  const res = await postSubmission(server.app, `/${f.user.username}/submission`, xml, f.user.auth);
  assert.equal(res.statusCode, 201, res.body);
  const after = await record(f, edited);
  assert.equal(after['fav_color'], 'blue');
  assert.equal(after['osm_road:way:id'], '234134797');
  assert.equal(after['osm_road:highway'], 'tertiary');
});

test('the zipped CSV and SPSS exports carry the osm columns too', async () => {
  const f = await osmFormWithRecord();
  const { formId } = f;
  const csvzip = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.csvzip`, headers: f.user.auth });
  assert.equal(csvzip.statusCode, 200, csvzip.body);
  const [main] = [...(await unzip(csvzip.rawPayload)).values()];
  assert.match(main?.toString('utf8').split('\n')[0] ?? '', /osm_road,osm_road:ctr:lat,osm_road:ctr:lon,osm_road:highway/);
  const savzip = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.savzip`, headers: f.user.auth });
  assert.equal(savzip.statusCode, 200, savzip.body);
});
