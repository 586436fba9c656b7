import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import Papa from 'papaparse';
import { createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { unzip } from '../zip.ts';
import type { Role } from '../../src/access/roles.ts';
import { psppUnavailableReason, readWithPspp } from '../../src/lib/writers/sav/testing/pspp.ts';

let server: TestServer;
let bob: TestUser;
let tutorialId: number;
let childrenId: number;
let emptyId: number;

const fixture = (path: string) => readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8');
const TUTORIAL_XML = fixture('submissions/tutorial_w_repeats.xml');

async function publish(user: TestUser, csv: string, fileName: string): Promise<number> {
  const body = multipart({}, [formFile(csv, fileName)]);
  const res = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: body.payload, headers: { ...user.auth, ...body.headers } });
  assert.equal(res.statusCode, 201, res.body);
  return Number(res.json().formid);
}

async function submit(user: TestUser, xml: string, owner: TestUser = user): Promise<void> {
  const body = multipart({}, [{ name: 'xml_submission_file', fileName: 'submission.xml', content: xml, contentType: 'text/xml' }]);
  const res = await server.app.inject({ method: 'POST', url: `/${owner.username}/submission`, payload: body.payload, headers: { ...user.auth, ...body.headers } });
  assert.equal(res.statusCode, 201, res.body);
}

async function download(url: string, headers: Record<string, string> = bob.auth) {
  return server.app.inject({ method: 'GET', url, headers });
}

const CHILDREN_XML = (uuid: string) =>
  `<?xml version="1.0"?><data id="childrens_survey" version="1"><name>Abe</name><age>35</age><tel><tel.office>020123456</tel.office></tel>` +
  `<children><name>Mike</name><age>5</age><fav_colors>red blue</fav_colors><ice.creams>vanilla chocolate</ice.creams>` +
  `<cartoons><name>Tom &amp; Jerry</name><why>Tom is silly</why></cartoons><cartoons><name>Flinstones</name><why>I like bam bam\u0107</why></cartoons></children>` +
  `<children><name>John</name><age>2</age></children>` +
  `<children><name>Imora</name><age>3</age><cartoons><name>Shrek</name><why>He's so funny</why></cartoons>` +
  `<cartoons><name>Dexter's Lab</name><why>He thinks hes smart</why><characters><name>Dee Dee</name><good_or_evil>good</good_or_evil></characters>` +
  `<characters><name>Dexter</name><good_or_evil>evil</good_or_evil></characters></cartoons></children>` +
  `<meta><instanceID>uuid:${uuid}</instanceID></meta></data>`;

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  tutorialId = await publish(bob, fixture('submissions/tutorial_w_repeats.csv'), 'tutorial_w_repeats.csv');
  childrenId = await publish(bob, fixture('exports/childrens_survey.form.csv'), 'childrens_survey.csv');
  emptyId = await publish(bob, fixture('exports/hxl_example.form.csv'), 'hxl_example.csv');
  // onadata's worked example forces the submission time to 2013-02-18 15:54:01Z.
  server.clock.offsetMs = Date.parse('2013-02-18T15:54:01Z') - Date.now();
  await submit(bob, TUTORIAL_XML);
  await submit(bob, CHILDREN_XML(randomUUID()));
  await submit(bob, `<?xml version="1.0"?><data id="childrens_survey" version="1"><meta><instanceID>uuid:${randomUUID()}</instanceID></meta></data>`);
  server.clock.offsetMs = 0;
});
after(() => server.close());

const TUTORIAL_HEADER =
  'name,age,picture,has_children,children[1]/childs_name,children[1]/childs_age,children[2]/childs_name,children[2]/childs_age,gps,_gps_latitude,_gps_longitude,_gps_altitude,_gps_precision,web_browsers/firefox,web_browsers/chrome,web_browsers/ie,web_browsers/safari,meta/instanceID,_id,_uuid,_submission_time,_date_modified,_tags,_notes,_version,_duration,_submitted_by,_last_edited_by,_total_media,_media_count,_media_all_received';

function tutorialRow(id: string): string {
  return `Bob,25,n/a,1,Tom,12,Dick,5,-1.2625621 36.7921711 0.0 20.0,-1.2625621,36.7921711,0.0,20.0,n/a,n/a,n/a,n/a,uuid:b31c6ac2-b8ca-4180-914f-c844fa10ed3b,${id},b31c6ac2-b8ca-4180-914f-c844fa10ed3b,2013-02-18T15:54:01+00:00,2013-02-18T15:54:01+00:00,,,2014111,,bob,,0,0,True`;
}

async function tutorialRecordId(): Promise<string> {
  const records = await download(`/api/v1/data/${tutorialId}`);
  return String(records.json()[0]._id);
}

describe('direct CSV download', () => {
  test('tutorial_w_repeats: exactly onadata’s header and row (§3.10, black-box test 25)', async () => {
    const res = await download(`/api/v1/forms/${tutorialId}.csv`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/csv');
    assert.match(String(res.headers['content-disposition']), /^attachment; filename="download\.csv"; filename\*=UTF-8''tutorial_w_repeats-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\.csv$/);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.body, `${TUTORIAL_HEADER}\n${tutorialRow(await tutorialRecordId())}\n`);
  });

  test('the data API serves the same file at /api/v1/data/{pk}.csv', async () => {
    const res = await download(`/api/v1/data/${tutorialId}.csv`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.body, `${TUTORIAL_HEADER}\n${tutorialRow(await tutorialRecordId())}\n`);
  });

  test('group_delimiter=. and remove_group_name=true (file name says so)', async () => {
    const dotted = await download(`/api/v1/forms/${tutorialId}.csv?group_delimiter=.`);
    assert.equal(dotted.body.split('\n')[0], TUTORIAL_HEADER.replace(/\//g, '.'));
    const removed = await download(`/api/v1/forms/${tutorialId}.csv?remove_group_name=true`);
    assert.match(String(removed.headers['content-disposition']), /tutorial_w_repeats-group-name-removed-/);
    const header = removed.body.split('\n')[0]?.split(',') ?? [];
    assert.deepEqual(header.slice(4, 8), ['childs_name', 'childs_age', 'childs_name', 'childs_age']);
    assert.equal(header[17], 'instanceID');
  });

  test('select_multiple options, labels and HXL through the query string', async () => {
    const unsplit = await download(`/api/v1/forms/${tutorialId}.csv?do_not_split_select_multiples=true`);
    assert.ok(unsplit.body.split('\n')[0]?.includes(',web_browsers,'));
    // A bare flag is false (str_to_bool), so splitting stays on.
    const bare = await download(`/api/v1/forms/${tutorialId}.csv?do_not_split_select_multiples`);
    assert.ok(bare.body.includes('web_browsers/firefox'));
    const labels = await download(`/api/v1/forms/${tutorialId}.csv?include_labels=true`);
    assert.match(labels.body.split('\n')[1] ?? '', /^1\. What is your name\?,2\. How old are you\?,/);
    assert.ok(labels.body.split('\n')[1]?.includes('web_browsers/Mozilla Firefox'));
    const only = await download(`/api/v1/forms/${tutorialId}.csv?include_labels_only=true`);
    assert.match(only.body, /^1\. What is your name\?,/);
  });

  test('win_excel_utf8: a BOM at the start of the file only; HXL row, include_hxl=false drops it', async () => {
    const res = await download(`/api/v1/forms/${emptyId}.csv?win_excel_utf8=true`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual([...res.rawPayload.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    const lines = res.rawPayload.subarray(3).toString('utf8').split('\n');
    assert.match(lines[0] ?? '', /^age,name,meta\/instanceID,_id,/);
    assert.equal(lines[1], `#age${','.repeat(15)}`);
    assert.equal(res.rawPayload.indexOf(Buffer.from([0xef, 0xbb, 0xbf]), 3), -1);
    const noHxl = await download(`/api/v1/forms/${emptyId}.csv?include_hxl=false`);
    assert.equal(noHxl.body.split('\n').length, 2);
  });

  test('an empty form exports a header-only file', async () => {
    const res = await download(`/api/v1/forms/${emptyId}.csv?include_hxl=false`);
    assert.equal(res.body, 'age,name,meta/instanceID,_id,_uuid,_submission_time,_date_modified,_tags,_notes,_version,_duration,_submitted_by,_last_edited_by,_total_media,_media_count,_media_all_received\n');
  });

  test('query restricts the rows; start/end and repeat_index_tags are validated', async () => {
    const none = await download(`/api/v1/forms/${childrenId}.csv?query=${encodeURIComponent('{"name":"Nobody"}')}`);
    assert.equal(none.statusCode, 200);
    assert.equal(none.body.trim().split('\n').length, 1);
    const abe = await download(`/api/v1/forms/${childrenId}.csv?query=${encodeURIComponent('{"name":"Abe"}')}`);
    assert.equal(abe.body.trim().split('\n').length, 2);
    const ranged = await download(`/api/v1/forms/${childrenId}.csv?start=13_02_18_00_00_00&end=13_02_19_00_00_00`);
    assert.equal(ranged.body.trim().split('\n').length, 3);
    const later = await download(`/api/v1/forms/${childrenId}.csv?start=14_01_01_00_00_00`);
    assert.equal(later.body.trim().split('\n').length, 1);
    const badDate = await download(`/api/v1/forms/${childrenId}.csv?start=2013-02-18`);
    assert.equal(badDate.statusCode, 400);
    assert.deepEqual(badDate.json(), { detail: 'Dates must be in the format YY_MM_DD_hh_mm_ss' });
    const badTags = await download(`/api/v1/forms/${childrenId}.csv?repeat_index_tags=x,y`);
    assert.equal(badTags.statusCode, 400);
    const badQuery = await download(`/api/v1/forms/${childrenId}.csv?query=${encodeURIComponent('{"name":')}`);
    assert.equal(badQuery.statusCode, 400);
    const tags = await download(`/api/v1/forms/${tutorialId}.csv?repeat_index_tags=_,_`);
    assert.ok(tags.body.startsWith('name,age,picture,has_children,children_1_/childs_name,'));
  });

  test('a suffix that names no format is 404, as a Django REST framework suffix no renderer takes', async () => {
    for (const url of [`/api/v1/forms/${tutorialId}.pdf`, `/api/v1/data/${tutorialId}.pdf`, `/api/v1/forms/${tutorialId}.CSV`]) {
      const res = await download(url);
      assert.equal(res.statusCode, 404, url);
      assert.deepEqual(res.json(), { detail: 'Not found.' }, url);
    }
    assert.equal((await download(`/api/v1/forms/999999.csv`)).statusCode, 404);
    // A pk that is not a number stays a malformed id.
    assert.equal((await download(`/api/v1/forms/abc`)).statusCode, 400);
  });
});

describe('who may export', () => {
  const shareTutorial = async (user: TestUser, role: Role): Promise<void> => {
    const res = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${tutorialId}/share`, payload: { username: user.username, role }, headers: bob.auth });
    assert.equal(res.statusCode, 204, res.body);
  };
  const roles: Array<[Role, number]> = [
    ['readonly', 200],
    ['readonly-no-download', 403],
    ['editor-no-download', 403],
    ['dataentry', 200],
  ];
  for (const [n, [role, status]] of roles.entries()) {
    test(`${role} gets ${status} on a direct CSV download`, async () => {
      const user = await createUser(server.app, `member${n}`);
      // A share lands as the role asked (the form's meta permissions only ever narrow it).
      await shareTutorial(user, role);
      const res = await download(`/api/v1/forms/${tutorialId}.csv`, user.auth);
      assert.equal(res.statusCode, status, res.body);
    });
  }

  test('a role that sees only its own submissions exports only those', async () => {
    const minor = await createUser(server.app, 'minorone');
    await shareTutorial(minor, 'dataentry-minor');
    await submit(minor, TUTORIAL_XML.replace('b31c6ac2-b8ca-4180-914f-c844fa10ed3b', randomUUID()).replace('<name>Bob</name>', '<name>Mia</name>'), bob);
    const own = await download(`/api/v1/forms/${tutorialId}.csv`, minor.auth);
    assert.equal(own.statusCode, 200, own.body);
    const rows = own.body.trim().split('\n').slice(1);
    assert.deepEqual(rows.map((r) => r.split(',')[0]), ['Mia']);
    const all = await download(`/api/v1/forms/${tutorialId}.csv`);
    assert.deepEqual(all.body.trim().split('\n').slice(1).map((r) => r.split(',')[0]), ['Bob', 'Mia']);
    await server.app.inject({ method: 'DELETE', url: `/api/v1/data/${tutorialId}/${(await download(`/api/v1/data/${tutorialId}`)).json()[1]._id}`, headers: bob.auth });
  });

  test('anonymous callers get 404 on a private form, and a stranger 404 too', async () => {
    assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/forms/${tutorialId}.csv` })).statusCode, 404);
    const stranger = await createUser(server.app, 'stranger');
    assert.equal((await download(`/api/v1/forms/${tutorialId}.csv`, stranger.auth)).statusCode, 404);
  });
});

/** Blanks the columns whose values vary between runs (ids, uuids, times, submitter). */
function withoutVolatile(csv: string): string {
  const parsed = Papa.parse<string[]>(csv.trim(), { skipEmptyLines: true });
  const [header = [], ...rows] = parsed.data;
  const volatile = new Set(['meta/instanceID', '_id', '_uuid', '_submission_time', '_version', '_submitted_by']);
  return [header, ...rows.map((row) => row.map((cell, i) => (volatile.has(header[i] ?? '') ? '' : cell)))].map((r) => r.join('|')).join('\n');
}

describe('csvzip and savzip', () => {
  test('childrens_survey csvzip: the four files of onadata’s fixtures (black-box test 32)', async () => {
    const res = await download(`/api/v1/forms/${childrenId}.csvzip`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/zip');
    assert.match(String(res.headers['content-disposition']), /filename\*=UTF-8''childrens_survey-[\d-]+\.zip$/);
    const files = await unzip(res.rawPayload);
    assert.deepEqual([...files.keys()], ['childrens_survey.csv', 'children.csv', 'children_cartoons.csv', 'children_cartoons_characters.csv']);
    for (const [name, bytes] of files) {
      assert.equal(withoutVolatile(bytes.toString('utf8')), withoutVolatile(fixture(`exports/childrens_survey/${name}`)), name);
    }
  });

  test('savzip: one .sav per section that PSPP reads back', { skip: !process.env['CI'] && psppUnavailableReason() }, async () => {
    const res = await download(`/api/v1/forms/${tutorialId}.savzip`);
    assert.equal(res.statusCode, 200, res.body);
    const files = await unzip(res.rawPayload);
    assert.deepEqual([...files.keys()], ['tutorial_w_repeats.sav', 'children.sav']);
    const main = readWithPspp([files.get('tutorial_w_repeats.sav') ?? new Uint8Array()]);
    assert.equal(main.info.get('Label'), 'File exported by Ona');
    const names = main.variables.map((v) => v.name);
    assert.deepEqual(names.slice(0, 9), ['name', 'age', 'picture', 'has_children', 'gps', '@_gps_latitude', '@_gps_longitude', '@_gps_altitude', '@_gps_precision']);
    assert.deepEqual(names.slice(9, 14), ['web_browsers', 'web_browsers.firefox', 'web_browsers.chrome', 'web_browsers.ie', 'web_browsers.safari']);
    assert.ok(names.includes('@_id') && names.includes('@_submission_time') && names.includes('@_index'));
    assert.deepEqual(main.valueLabels.get('has_children'), [['0', 'no'], ['1', 'yes']]);
    const [header = [], row = []] = main.data;
    const at = (name: string) => row[header.indexOf(name)]?.trim();
    assert.equal(at('name'), 'Bob');
    assert.equal(at('age'), '25');
    assert.equal(at('has_children'), '1');
    const children = readWithPspp([files.get('children.sav') ?? new Uint8Array()]);
    assert.deepEqual(children.data.slice(1).map((r) => r[0]?.trim()), ['Tom', 'Dick']);
  });
});
