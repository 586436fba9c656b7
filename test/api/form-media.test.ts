// Form media through /api/v1/metadata: files devices download with a form (choice images, CSV for
// select_one_from_file and pulldata), links to such files, and supporting documents; the OpenRosa
// manifest and media routes that ODK Collect and Enketo read them from.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createUser, multipart, postSubmission, publishForm, startTestServer, type MultipartFile, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdCsv, householdXml } from '../fixtures/submissions.ts';

let server: TestServer;
let bob: TestUser;
let eddie: TestUser;
let rita: TestUser;

type Json = Record<string, unknown>;

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==', 'base64');
const CSV = 'name,label,district\nkampala,Kampala,central\ngulu,Gulu,north\n';

const md5 = (content: Uint8Array | string): string => `md5:${createHash('md5').update(content).digest('hex')}`;

async function upload(user: TestUser | undefined, fields: Record<string, string>, file?: MultipartFile) {
  const body = multipart(fields, file ? [file] : []);
  return server.app.inject({ method: 'POST', url: '/api/v1/metadata', payload: body.payload, headers: { ...(user?.auth ?? {}), ...body.headers } });
}

const media = (fileName: string, content: Uint8Array | string, contentType = 'application/octet-stream'): MultipartFile => ({ name: 'data_file', fileName, content, contentType });

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  eddie = await createUser(server.app, 'eddie');
  rita = await createUser(server.app, 'rita');
});
after(() => server.close());

/** A household form of bob's own, with eddie as its editor and rita as a reader. */
let forms = 0;
async function sharedForm(): Promise<number> {
  const formId = await publishForm(server.app, bob, formFile(householdCsv(`household_${++forms}`), 'household.csv'));
  for (const [user, role] of [[eddie, 'editor'], [rita, 'readonly']] as const) {
    const shared = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/share`, headers: bob.auth, payload: { username: user.username, role } });
    assert.equal(shared.statusCode, 204, shared.body);
  }
  return formId;
}

/**
 * A shared form of its own to each test that reads or changes its media: an image, a CSV named by
 * its data_value and a link, uploaded by the owner in that order.
 */
async function formWithMedia(): Promise<{ formId: number; png: Json; csv: Json; link: Json }> {
  const formId = await sharedForm();
  const res = await upload(bob, { xform: String(formId), data_type: 'media' }, media('photos/kampala.png', PNG, 'text/html'));
  assert.equal(res.statusCode, 201, res.body);
  const named = await upload(bob, { xform: String(formId), data_type: 'media', data_value: 'towns.csv' }, media('upload.csv', CSV, 'application/vnd.ms-excel'));
  assert.equal(named.statusCode, 201, named.body);
  const linked = await upload(bob, { xform: String(formId), data_type: 'media', data_value: 'https://files.example.org/maps/region%201.geojson' });
  assert.equal(linked.statusCode, 201, linked.body);
  return { formId, png: res.json<Json>(), csv: named.json<Json>(), link: linked.json<Json>() };
}

describe('form media', () => {
  test('an owner uploads an image and a CSV: 201 with the file’s name, detected type, md5 and download address', async () => {
    const formId = await sharedForm();
    const res = await upload(bob, { xform: String(formId), data_type: 'media' }, media('photos/kampala.png', PNG, 'text/html'));
    assert.equal(res.statusCode, 201, res.body);
    const png = res.json<Json>();
    const url = `http://testserver/api/v1/metadata/${String(png['id'])}.png`;
    assert.deepEqual({ ...png, date_created: undefined }, {
      id: png['id'],
      xform: formId,
      data_value: 'kampala.png',
      data_type: 'media',
      data_file: url,
      extra_data: {},
      data_file_type: 'image/png',
      media_url: url,
      file_hash: md5(PNG),
      url: `http://testserver/api/v1/metadata/${String(png['id'])}`,
      date_created: undefined,
    });

    const named = await upload(bob, { xform: String(formId), data_type: 'media', data_value: 'towns.csv' }, media('upload.csv', CSV, 'application/vnd.ms-excel'));
    assert.equal(named.statusCode, 201, named.body);
    const csv = named.json<Json>();
    assert.equal(csv['data_value'], 'towns.csv', 'a given data_value names the file');
    assert.equal(csv['data_file_type'], 'text/csv');
  });

  test('a media link is kept as its address', async () => {
    const formId = await sharedForm();
    const res = await upload(bob, { xform: String(formId), data_type: 'media', data_value: 'https://files.example.org/maps/region%201.geojson' });
    assert.equal(res.statusCode, 201, res.body);
    const link = res.json<Json>();
    assert.equal(link['data_file'], null);
    assert.equal(link['media_url'], null);
  });

  test('the manifest lists the files with their md5 and the form list points at it', async () => {
    const { formId, png, csv, link } = await formWithMedia();
    const list = await server.app.inject({ method: 'GET', url: '/bob/formList' });
    assert.match(list.body, new RegExp(`<manifestUrl>http://testserver/bob/xformsManifest/${formId}</manifestUrl>`));
    const manifest = await server.app.inject({ method: 'GET', url: `/bob/xformsManifest/${formId}` });
    assert.equal(manifest.statusCode, 200);
    const base = `http://testserver/bob/xformsMedia/${formId}`;
    assert.equal(
      manifest.body,
      '<?xml version="1.0" encoding="utf-8"?>\n<manifest xmlns="http://openrosa.org/xforms/xformsManifest">' +
        `<mediaFile><filename>kampala.png</filename><hash>${md5(PNG)}</hash><downloadUrl>${base}/${String(png['id'])}.png</downloadUrl></mediaFile>` +
        `<mediaFile><filename>towns.csv</filename><hash>${md5(CSV)}</hash><downloadUrl>${base}/${String(csv['id'])}.csv</downloadUrl></mediaFile>` +
        `<mediaFile><filename>region 1.geojson</filename><hash>${md5(String(link['data_value']))}</hash><downloadUrl>${base}/${String(link['id'])}.geojson</downloadUrl></mediaFile>` +
        '</manifest>',
    );
  });

  test('devices download the bytes as uploaded; a link redirects; other forms’ entries are not found', async () => {
    const { formId, png, csv, link } = await formWithMedia();
    const image = await server.app.inject({ method: 'GET', url: `/bob/xformsMedia/${formId}/${String(png['id'])}.png` });
    assert.equal(image.statusCode, 200);
    assert.equal(image.headers['content-type'], 'image/png');
    assert.equal(image.headers['x-content-type-options'], 'nosniff');
    assert.deepEqual(image.rawPayload, PNG);
    const text = await server.app.inject({ method: 'GET', url: `/xformsMedia/${formId}/${String(csv['id'])}.csv`, headers: bob.auth });
    assert.equal(text.body, CSV);
    const linked = await server.app.inject({ method: 'GET', url: `/bob/xformsMedia/${formId}/${String(link['id'])}.geojson` });
    assert.equal(linked.statusCode, 302);
    assert.equal(linked.headers['location'], 'https://files.example.org/maps/region%201.geojson');

    const other = await publishForm(server.app, bob, formFile(HOUSEHOLD_CSV.replace(/household/g, 'household_two'), 'household_two.csv'));
    assert.equal((await server.app.inject({ method: 'GET', url: `/bob/xformsMedia/${other}/${String(png['id'])}.png` })).statusCode, 404);
    assert.equal((await server.app.inject({ method: 'GET', url: `/bob/xformsMedia/${formId}/99999.png` })).statusCode, 404);
  });

  test('the entry’s own address with an extension downloads the file for those who see the form', async () => {
    const { png } = await formWithMedia();
    const file = await server.app.inject({ method: 'GET', url: `/api/v1/metadata/${String(png['id'])}.png`, headers: rita.auth });
    assert.equal(file.statusCode, 200);
    assert.deepEqual(file.rawPayload, PNG);
    assert.match(String(file.headers['content-disposition']), /^attachment; filename="kampala.png"/);
    assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/metadata/${String(png['id'])}.json`, headers: rita.auth })).json<Json>()['id'], png['id']);
    const stranger = await createUser(server.app, 'stranger');
    assert.equal((await server.app.inject({ method: 'GET', url: `/api/v1/metadata/${String(png['id'])}.png`, headers: stranger.auth })).statusCode, 404);
  });

  test('files are judged by name and content; 400s say why and store nothing', async () => {
    const { formId } = await formWithMedia();
    const cases: Array<[string, Record<string, string>, MultipartFile | undefined, Json]> = [
      ['not an allowed type', { data_type: 'media' }, media('run.exe', 'MZ'), { data_file: ['"run.exe" is not an allowed file type; allowed: csv, xml, geojson, png, jpg, jpeg, gif, mp4, 3gp, m4a, mp3, wav, ogg.'] }],
      ['an image that is not one', { data_type: 'media' }, media('fake.png', '<html></html>'), { data_file: ['The uploaded file "fake.png" is not a valid .png file.'] }],
      ['CSV that is not UTF-8 text', { data_type: 'media' }, media('bad.csv', Buffer.from([0x61, 0x00, 0xff])), { data_file: ['The uploaded file "bad.csv" is not a valid .csv file.'] }],
      ['XML with a DOCTYPE', { data_type: 'media' }, media('evil.xml', '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>'), { data_file: ['The uploaded file "evil.xml" is not a valid .xml file.'] }],
      ['broken GeoJSON', { data_type: 'media' }, media('map.geojson', '{"type":'), { data_file: ['The uploaded file "map.geojson" is not a valid .geojson file.'] }],
      ['an empty file', { data_type: 'media' }, media('empty.csv', ''), { data_file: ['The uploaded file "empty.csv" is empty.'] }],
      ['a file on a text entry', { data_type: 'source', data_value: 'x' }, media('a.csv', CSV), { data_file: ['Only media and supporting_doc entries take a file.'] }],
      ['a media entry that is neither file nor link', { data_type: 'media', data_value: 'towns' }, undefined, { data_value: ["Invalid url 'towns': give a data_file, the http(s) address of the file, or 'xform [form id] [file name]' for another form's data."] }],
      ['a link without a file name', { data_type: 'media', data_value: 'https://example.org/' }, undefined, { data_value: ['Cannot get filename from URL https://example.org/. URL should include the filename e.g http://example.com/data.csv'] }],
      ['a supporting document without its file', { data_type: 'supporting_doc', data_value: 'x.pdf' }, undefined, { data_file: ['A supporting document needs its file (data_file).'] }],
    ];
    for (const [what, fields, file, expected] of cases) {
      const res = await upload(bob, { xform: String(formId), ...fields }, file);
      assert.equal(res.statusCode, 400, what);
      assert.deepEqual(res.json(), expected, what);
    }
    const again = await upload(bob, { xform: String(formId), data_type: 'media' }, media('kampala.png', PNG));
    assert.equal(again.statusCode, 400);
    assert.deepEqual(again.json(), ['Object already exists']);
    const entries = (await server.app.inject({ method: 'GET', url: `/api/v1/metadata?xform=${formId}`, headers: bob.auth })).json<Json[]>();
    assert.deepEqual(entries.filter((e) => e['data_type'] === 'media').map((e) => e['data_value']), ['kampala.png', 'towns.csv', 'https://files.example.org/maps/region%201.geojson']);
  });

  test('a supporting document is kept beside the form but not sent to devices', async () => {
    const formId = await sharedForm();
    const pdf = Buffer.from('%PDF-1.4\n%\u00e2\u00e3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n', 'latin1');
    const res = await upload(bob, { xform: String(formId), data_type: 'supporting_doc' }, media('Training guide.pdf', pdf));
    assert.equal(res.statusCode, 201, res.body);
    const doc = res.json<Json>();
    assert.equal(doc['data_file_type'], 'application/pdf');
    assert.equal(doc['media_url'], `http://testserver/api/v1/metadata/${String(doc['id'])}.pdf`);
    assert.deepEqual((await server.app.inject({ method: 'GET', url: String(doc['media_url']).replace('http://testserver', ''), headers: bob.auth })).rawPayload, pdf);
    assert.doesNotMatch((await server.app.inject({ method: 'GET', url: `/bob/xformsManifest/${formId}` })).body, /Training guide/);
  });

  test('only owners and managers add or remove media; editors cannot rename a file; removing takes it off the manifest', async () => {
    const { formId, png, link } = await formWithMedia();
    assert.equal((await upload(eddie, { xform: String(formId), data_type: 'media' }, media('other.png', PNG))).statusCode, 403);
    assert.equal((await upload(undefined, { xform: String(formId), data_type: 'media' }, media('other.png', PNG))).statusCode, 401);
    const rename = await server.app.inject({ method: 'PATCH', url: `/api/v1/metadata/${String(png['id'])}`, headers: eddie.auth, payload: { data_value: 'renamed.png' } });
    assert.equal(rename.statusCode, 400);
    assert.deepEqual(rename.json(), { data_value: ['The name of an uploaded file cannot be changed; delete the entry and upload the file again.'] });
    const relink = await server.app.inject({ method: 'PATCH', url: `/api/v1/metadata/${String(link['id'])}`, headers: eddie.auth, payload: { data_value: 'https://files.example.org/maps/region2.geojson' } });
    assert.equal(relink.statusCode, 200, relink.body);

    assert.equal((await server.app.inject({ method: 'DELETE', url: `/api/v1/metadata/${String(png['id'])}`, headers: eddie.auth })).statusCode, 403);
    assert.equal((await server.app.inject({ method: 'DELETE', url: `/api/v1/metadata/${String(png['id'])}`, headers: bob.auth })).statusCode, 204);
    const manifest = (await server.app.inject({ method: 'GET', url: `/bob/xformsManifest/${formId}` })).body;
    assert.doesNotMatch(manifest, /kampala\.png/);
    assert.match(manifest, /<filename>region2\.geojson<\/filename>/);
    assert.equal((await server.app.inject({ method: 'GET', url: `/bob/xformsMedia/${formId}/${String(png['id'])}.png` })).statusCode, 404);
  });
});

describe('linked datasets', () => {
  const VISIT_CSV = [
    'survey,,,,',
    ',type,name,label,calculation',
    ',text,household_name,Household,',
    ',calculate,age,,"pulldata(\'households\', \'age\', \'name\', ${household_name})"',
    'settings,,,,',
    ',form_id,form_title,version,',
    ',visit,Visit,1,',
    '',
  ].join('\n');
  let visitId: number;
  let registryId: number;
  let entry: Json;

  before(async () => {
    registryId = await publishForm(server.app, bob, formFile(HOUSEHOLD_CSV.replace(/household,Household/, 'registry,Registry').replace(/household/g, 'registry'), 'registry.csv'));
    visitId = await publishForm(server.app, bob, formFile(VISIT_CSV, 'visit.csv'));
    const xml = householdXml({ uuid: '7c3d6a43-0d4b-4b8e-9f5e-000000000001', name: 'Achieng' }).replace(/household/g, 'registry');
    assert.equal((await postSubmission(server.app, '/bob/submission', xml, bob.auth)).statusCode, 201);
  });

  test('a manager links another form’s records: devices get them as CSV with dotted column names', async () => {
    const res = await upload(bob, { xform: String(visitId), data_type: 'media', data_value: `xform ${registryId} households` });
    assert.equal(res.statusCode, 201, res.body);
    entry = res.json<Json>();
    const manifest = (await server.app.inject({ method: 'GET', url: `/bob/xformsManifest/${visitId}` })).body;
    const found = /<filename>households\.csv<\/filename><hash>(md5:[0-9a-f]{32})<\/hash><downloadUrl>([^<]+)<\/downloadUrl>/.exec(manifest);
    assert.ok(found, manifest);
    assert.equal(found[2], `http://testserver/bob/xformsMedia/${visitId}/${String(entry['id'])}.csv?group_delimiter=.&amp;repeat_index_tags=_,_`);
    const csv = await server.app.inject({ method: 'GET', url: found[2].replace('http://testserver', '').replace('&amp;', '&') });
    assert.equal(csv.statusCode, 200, csv.body);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    const [header, row] = csv.body.split('\n');
    assert.match(header ?? '', /^name,age,address\.village,browsers\.firefox,browsers\.chrome,gps,/);
    assert.match(header ?? '', /children_1_\.childs_name/);
    assert.match(row ?? '', /^Achieng,25,Kisumu,True,True,/);

    // The hash follows the records: a new one makes devices fetch the file again.
    const xml = householdXml({ uuid: '7c3d6a43-0d4b-4b8e-9f5e-000000000002', name: 'Otieno' }).replace(/household/g, 'registry');
    assert.equal((await postSubmission(server.app, '/bob/submission', xml, bob.auth)).statusCode, 201);
    const later = (await server.app.inject({ method: 'GET', url: `/bob/xformsManifest/${visitId}` })).body;
    assert.doesNotMatch(later, new RegExp(found[1] ?? 'x'));
    assert.match(later, /<filename>households\.csv<\/filename>/);
  });

  test('only a form’s managers may link its data', async () => {
    const sam = await createUser(server.app, 'sam');
    const samsForm = await publishForm(server.app, sam, formFile(HOUSEHOLD_CSV, 'household.csv'));
    const shared = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${samsForm}/share`, headers: sam.auth, payload: { username: 'bob', role: 'readonly' } });
    assert.equal(shared.statusCode, 204);
    for (const target of [samsForm, 999999]) {
      const res = await upload(bob, { xform: String(visitId), data_type: 'media', data_value: `xform ${target} theirs` });
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), { data_value: [`Form ${target} does not exist or you do not manage it, so its data cannot be linked.`] });
    }
  });
});
