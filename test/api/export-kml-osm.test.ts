// KML and OSM exports, by direct download and by job, with exact expected files.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { basic, createUser, multipart, startTestServer, type MultipartFile, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';
import { runOneJob } from '../../src/jobs/worker.ts';
import { buildJobRegistry } from '../../src/compose.ts';
import { KML_TAIL, kmlHead } from '../../src/lib/writers/kml/writer.ts';

const fixture = (name: string): Buffer => readFileSync(new URL(`../fixtures/osm/${name}`, import.meta.url));
const registry = buildJobRegistry();

let server: TestServer;
let dataDir: string;
let bob: TestUser;

async function publish(file: MultipartFile): Promise<number> {
  const body = multipart({}, [file]);
  const res = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: body.payload, headers: { ...bob.auth, ...body.headers } });
  assert.equal(res.statusCode, 201, res.body);
  return Number(res.json().formid);
}

async function submit(xml: string | Buffer, media: MultipartFile[] = []): Promise<void> {
  const body = multipart({}, [{ name: 'xml_submission_file', fileName: 's.xml', content: xml, contentType: 'text/xml' }, ...media]);
  const res = await server.app.inject({ method: 'POST', url: '/bob/submission', payload: body.payload, headers: { authorization: basic('bob', bob.password), ...body.headers } });
  assert.equal(res.statusCode, 201, res.body);
}

async function byJob(formId: number, format: string): Promise<{ body: string; contentType: string | undefined }> {
  const start = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/export_async?format=${format}`, headers: bob.auth });
  assert.equal(start.statusCode, 202, start.body);
  while (await runOneJob(server.deps, registry, { log: () => {} })) {
    // until the queue is empty
  }
  const done = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/export_async?job_uuid=${start.json().job_uuid}`, headers: bob.auth });
  assert.equal(done.json().job_status, 'SUCCESS', done.body);
  const file = await server.app.inject({ method: 'GET', url: done.json().export_url.replace('http://testserver', ''), headers: bob.auth });
  assert.equal(file.statusCode, 200);
  return { body: file.body, contentType: String(file.headers['content-type'] ?? '') };
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gather-export-kml-osm-'));
  server = await startTestServer({ DATA_DIR: dataDir });
  bob = await createUser(server.app, 'bob');
});
after(async () => {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('KML', () => {
  let formId: number;
  const ids: number[] = [];
  const uuid = randomUUID();

  before(async () => {
    formId = await publish(formFile(HOUSEHOLD_CSV, 'household.csv'));
    await submit(householdXml({ uuid, name: 'Bob &lt;Builder&gt; &amp; co' }));
    // No point: no placemark.
    await submit(householdXml({ uuid: randomUUID(), name: 'Nowhere' }).replace(/<gps>[^<]*<\/gps>/, '<gps></gps>'));
    const records = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}`, headers: bob.auth });
    for (const record of records.json() as Array<{ _id: number }>) ids.push(record._id);
  });

  test('a Placemark per record with a geopoint, described by its labelled answers', async () => {
    const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.kml`, headers: bob.auth });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/vnd.google-earth.kml+xml');
    const row = (label: string, value: string) => `&lt;tr&gt;&lt;td&gt;${label}&lt;/td&gt;&lt;td&gt;${value}&lt;/td&gt;&lt;/tr&gt;`;
    const expected =
      kmlHead('Household') +
      `<Placemark><name>Survey Instance: ${ids[0]}</name><description>&lt;table border=&quot;1&quot;&gt;` +
      row('Name', 'Bob &amp;lt;Builder&amp;gt; &amp;amp; co') +
      row('Age', '25') +
      row('Village', 'Kisumu') +
      row('Browsers', 'firefox chrome') +
      row('Location', '-1.2625621 36.7921711 0.0 20.0') +
      row('instanceID', `uuid:${uuid}`) +
      row('Child name [1]', 'Tom') +
      row('Child age [1]', '12') +
      row('Child name [2]', 'Dick') +
      row('Child age [2]', '5') +
      '&lt;/table&gt;</description><styleUrl>#record</styleUrl><Point><coordinates>36.7921711,-1.2625621</coordinates></Point></Placemark>\n' +
      KML_TAIL;
    assert.equal(res.body, expected);
    const job = await byJob(formId, 'kml');
    assert.equal(job.body, expected);
    assert.equal(job.contentType, 'application/vnd.google-earth.kml+xml');
  });
});

describe('OSM', () => {
  const osmForm = (): Promise<number> =>
    publish({ name: 'xls_file', fileName: 'osm.xlsx', content: fixture('osm.xlsx'), contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' });
  let formId: number;

  // The record with OSM files is submitted here, so that the query test restricts a form that has it.
  before(async () => {
    formId = await osmForm();
    await submit(fixture('instance_a.xml'), [
      { name: 'OSMWay234134797.osm', fileName: 'OSMWay234134797.osm', content: fixture('OSMWay234134797.osm'), contentType: 'text/xml' },
      { name: 'OSMWay34298972.osm', fileName: 'OSMWay34298972.osm', content: fixture('OSMWay34298972.osm'), contentType: 'text/xml' },
    ]);
  });

  test('a form without OSM files gives an empty file', async () => {
    // A second copy of the form (its id_string suffixed), which no submission reaches.
    const emptyForm = await osmForm();
    const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${emptyForm}.osm`, headers: bob.auth });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.body, '');
  });

  test('the osm questions’ files combine into onadata’s combined.osm, by download and by job', async () => {
    const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.osm`, headers: bob.auth });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/osm');
    assert.equal(res.body, fixture('combined.osm').toString('utf8'));
    const job = await byJob(formId, 'osm');
    assert.equal(job.body, fixture('combined.osm').toString('utf8'));
  });

  test('a query restricts the OSM export too', async () => {
    const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.osm?query=${encodeURIComponent('{"fav_color":"blue"}')}`, headers: bob.auth });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '');
  });
});
