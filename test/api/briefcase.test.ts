// ODK Briefcase against the Briefcase Aggregate API, replayed request by request as Briefcase
// sends them when it pulls a form (formList, the form, submissionList pages by cursor,
// downloadSubmission per id, each file) and when it pushes one (formUpload, then /submission).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { basic, createUser, multipart, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { csvForm, formFile } from '../fixtures/forms.ts';

let server: TestServer;
let bob: TestUser;
let alice: TestUser;
let rita: TestUser;
let dora: TestUser;
let formId: number;
let root: string;
const ID = 'briefcase_pull';
/** What each posted record was, by uuid: its XML as sent and its photo's bytes. */
const sent = new Map<string, { xml: string; photo: Buffer; name: string }>();
/** The uuids of the records of the shared form ID, in the order sent; no test changes them. */
let order: string[] = [];

/** A form to pull: its id_string, its id, the root element of its records and its records' uuids in the order sent. */
interface PullForm {
  id: string;
  formId: number;
  root: string;
  order: string[];
}

const md5 = (bytes: string | Buffer): string => `md5:${createHash('md5').update(bytes).digest('hex')}`;
const get = (url: string, user?: TestUser): Promise<LightMyRequestResponse> =>
  server.app.inject({ method: 'GET', url, headers: user ? { authorization: basic(user.username, user.password) } : {} });

function photoBytes(seed: number): Buffer {
  // A JPEG's markers around seeded bytes: content checks see an image, every file differs.
  const body = Buffer.alloc(300 + seed, seed % 251);
  return Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00]), body, Buffer.from([0xff, 0xd9])]);
}

async function submit(user: TestUser, n: number, form: PullForm = { id: ID, formId, root, order }): Promise<string> {
  const uuid = randomUUID();
  const name = `photo-${n}.jpg`;
  const xml =
    `<?xml version='1.0' ?><${form.root} id="${form.id}" version="2026010101"><name>Person ${n} &amp; co</name><age>${20 + n}</age>` +
    `<photo>${name}</photo><meta><instanceID>uuid:${uuid}</instanceID></meta></${form.root}>`;
  const photo = photoBytes(n);
  const body = multipart({}, [
    { name: 'xml_submission_file', fileName: 'submission.xml', content: xml, contentType: 'text/xml' },
    { name, fileName: name, content: photo, contentType: 'image/jpeg' },
  ]);
  const res = await server.app.inject({ method: 'POST', url: '/bob/submission', payload: body.payload, headers: { authorization: basic(user.username, user.password), ...body.headers } });
  assert.equal(res.statusCode, 201, res.body);
  sent.set(uuid, { xml, photo, name });
  form.order.push(uuid);
  return uuid;
}

/** The ids and cursor of an idChunk. */
function readChunk(body: string): { ids: string[]; cursor: string } {
  assert.match(body, /^<idChunk xmlns="http:\/\/opendatakit.org\/submissions"><idList>/);
  const ids = [...body.matchAll(/<id>([^<]*)<\/id>/g)].map((m) => m[1] ?? '');
  const cursor = /<resumptionCursor>([^<]*)<\/resumptionCursor>/.exec(body)?.[1];
  assert.ok(cursor !== undefined, body);
  return { ids, cursor };
}

/** Pages through submissionList as Briefcase does (cursor empty first, 100 a page unless told) until an empty page. */
async function pullIds(user: TestUser | undefined, numEntries: number, prefix = '/bob', id = ID): Promise<{ ids: string[]; pages: number; cursor: string }> {
  const ids: string[] = [];
  let cursor = '';
  for (let pages = 1; ; pages++) {
    const url = `${prefix}/view/submissionList?formId=${id}&cursor=${encodeURIComponent(cursor)}&numEntries=${numEntries}&includeIncomplete=true`;
    const res = await get(url, user);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'text/xml; charset=utf-8');
    assert.equal(res.headers['x-openrosa-version'], '1.0');
    const chunk = readChunk(res.body);
    if (chunk.ids.length === 0) {
      assert.equal(chunk.cursor, cursor === '' ? '0' : cursor, 'an empty page keeps the cursor it was asked with');
      return { ids, pages, cursor: chunk.cursor };
    }
    ids.push(...chunk.ids);
    cursor = chunk.cursor;
  }
}

/** The Authorization header a Digest client (Briefcase's HTTP client) answers a challenge with (RFC 7616, qop=auth). */
function digestAuthorization(challenge: string, user: TestUser, uri: string): string {
  const params: Record<string, string> = {};
  for (const m of challenge.slice('Digest '.length).matchAll(/([a-z]+)=(?:"([^"]*)"|([^,\s]*))/g)) params[m[1] ?? ''] = m[2] ?? m[3] ?? '';
  const hex = (text: string): string => createHash('md5').update(text, 'utf8').digest('hex');
  const [realm, nonce, cnonce, nc] = [params['realm'] ?? '', params['nonce'] ?? '', 'b1e2f3a4', '00000001'];
  const response = hex(`${hex(`${user.username}:${realm}:${user.password}`)}:${nonce}:${nc}:${cnonce}:auth:${hex(`GET:${uri}`)}`);
  return `Digest username="${user.username}", realm="${realm}", nonce="${nonce}", uri="${uri}", algorithm=MD5, response="${response}", opaque="${params['opaque'] ?? ''}", qop=auth, nc=${nc}, cnonce="${cnonce}"`;
}

function submissionKey(uuid: string, form: { id: string; root: string } = { id: ID, root }): string {
  return `${form.id}[@version=2026010101 and @uiVersion=null]/${form.root}[@key=${uuid}]`;
}

/**
 * Bob's form `id`, shared with rita (read-only) and dora (who reads only her own records), with six
 * records: the fourth is dora's. Tests that add or delete records pull a form of their own.
 */
async function publishPullForm(id: string): Promise<PullForm> {
  const published = await publishForm(server.app, bob, formFile(csvForm({ id, title: 'Briefcase pull', extra: ',image,photo,Photo' }), `${id}.csv`));
  const xform = (await get(`/bob/forms/${published}/form.xml`)).body;
  const form: PullForm = { id, formId: published, root: /<instance>\s*<([\w.-]+)/.exec(xform)?.[1] ?? 'data', order: [] };
  for (const [user, role] of [[rita, 'readonly'], [dora, 'dataentry-minor']] as const) {
    const res = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${published}/share`, payload: { username: user.username, role }, headers: bob.auth });
    assert.equal(res.statusCode, 204, res.body);
  }
  for (let n = 1; n <= 6; n++) await submit(n === 4 ? dora : bob, n, form);
  return form;
}

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  alice = await createUser(server.app, 'alice');
  rita = await createUser(server.app, 'rita');
  dora = await createUser(server.app, 'dora');
  ({ formId, root, order } = await publishPullForm(ID));
});
after(() => server.close());

describe('Briefcase pull', () => {
  test('replays a pull: formList, the form, submissionList pages, downloadSubmission, every file byte for byte', async () => {
    const list = await get('/bob/formList', bob);
    assert.equal(list.statusCode, 200);
    const downloadUrl = new RegExp(`<formID>${ID}</formID>[\\s\\S]*?<downloadUrl>([^<]+)</downloadUrl>`).exec(list.body)?.[1];
    assert.ok(downloadUrl);
    assert.equal((await get(new URL(downloadUrl).pathname, bob)).statusCode, 200);

    const { ids, pages } = await pullIds(bob, 4);
    assert.deepEqual(ids, order.map((u) => `uuid:${u}`));
    assert.equal(pages, 3, 'two pages of records, then the empty page that ends the pull');

    for (const id of ids) {
      const res = await get(`/bob/view/downloadSubmission?formId=${encodeURIComponent(submissionKey(id))}`, bob);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['content-type'], 'text/xml; charset=utf-8');
      const uuid = id.slice('uuid:'.length);
      const original = sent.get(uuid);
      assert.ok(original);
      const data = /<data>([\s\S]*)<\/data>/.exec(res.body)?.[1] ?? '';
      const rootTag = new RegExp(`^<${root}( [^>]*)>`).exec(data);
      assert.ok(rootTag, data);
      const attributes = rootTag[1] ?? '';
      assert.match(attributes, new RegExp(`instanceID="uuid:${uuid}"`));
      assert.match(attributes, /submissionDate="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00"/);
      assert.match(attributes, /isComplete="true"/);
      assert.match(attributes, /markedAsCompleteDate="/);
      assert.match(attributes, new RegExp(` id="${ID}" version="2026010101"`));
      // Everything after the root's start tag is the record as it was sent.
      const sentBody = original.xml.slice(original.xml.indexOf('>', original.xml.indexOf(`<${root}`)) + 1);
      assert.equal(data.slice(rootTag[0].length), sentBody);

      const mediaFiles = [...res.body.matchAll(/<mediaFile><filename>([^<]*)<\/filename><hash>([^<]*)<\/hash><downloadUrl>([^<]*)<\/downloadUrl><\/mediaFile>/g)];
      assert.equal(mediaFiles.length, 1);
      const [, filename, hash, url] = mediaFiles[0] ?? [];
      assert.equal(filename, original.name);
      assert.equal(hash, md5(original.photo));
      const file = await server.app.inject({ method: 'GET', url: new URL((url ?? '').replace(/&amp;/g, '&')).pathname + new URL((url ?? '').replace(/&amp;/g, '&')).search, headers: { authorization: basic(bob.username, bob.password) } });
      assert.equal(file.statusCode, 200);
      assert.ok(file.rawPayload.equals(original.photo), 'the file comes back byte for byte');
    }
  });

  test('the cursor resumes after the last record listed, and a later pull lists only newer records', async () => {
    const own = await publishPullForm('briefcase_cursor');
    const first = readChunk((await get(`/bob/view/submissionList?formId=${own.id}&numEntries=2&cursor=`, bob)).body);
    assert.equal(first.ids.length, 2);
    const rest = readChunk((await get(`/bob/view/submissionList?formId=${own.id}&numEntries=100&cursor=${first.cursor}`, bob)).body);
    assert.deepEqual([...first.ids, ...rest.ids], own.order.map((u) => `uuid:${u}`));
    // Briefcase keeps the last cursor; pulling again from it finds nothing until a record arrives.
    assert.deepEqual(readChunk((await get(`/bob/view/submissionList?formId=${own.id}&cursor=${rest.cursor}`, bob)).body).ids, []);
    const uuid = await submit(bob, 7, own);
    assert.deepEqual(readChunk((await get(`/bob/view/submissionList?formId=${own.id}&cursor=${rest.cursor}`, bob)).body).ids, [`uuid:${uuid}`]);
  });

  test('deleted records are neither listed nor downloadable', async () => {
    const own = await publishPullForm('briefcase_deleted');
    const victim = own.order[1] ?? '';
    const record = (await get(`/api/v1/data/${own.formId}?query=${encodeURIComponent(JSON.stringify({ _uuid: victim }))}`, bob)).json<Array<{ _id: number }>>()[0];
    assert.ok(record);
    assert.equal((await server.app.inject({ method: 'DELETE', url: `/api/v1/data/${own.formId}/${record._id}`, headers: bob.auth })).statusCode, 204);
    const { ids } = await pullIds(bob, 100, '/bob', own.id);
    assert.ok(!ids.includes(`uuid:${victim}`));
    assert.equal(ids.length, own.order.length - 1);
    assert.equal((await get(`/bob/view/downloadSubmission?formId=${encodeURIComponent(submissionKey(`uuid:${victim}`, own))}`, bob)).statusCode, 404);
  });

  test('without the account in the path, the caller’s form of that id_string is pulled', async () => {
    const { ids } = await pullIds(bob, 3, '');
    assert.deepEqual(ids, order.map((u) => `uuid:${u}`));
    const anonymous = await get(`/view/submissionList?formId=${ID}`);
    assert.equal(anonymous.statusCode, 401);
    assert.match(String(anonymous.headers['www-authenticate']), /^Digest /);
  });
});

describe('Briefcase permissions', () => {
  test('a caller without credentials is challenged (Digest), on the list and on a record', async () => {
    for (const url of [`/bob/view/submissionList?formId=${ID}`, `/bob/view/downloadSubmission?formId=${encodeURIComponent(submissionKey(`uuid:${order[0] ?? ''}`))}`]) {
      const res = await get(url);
      assert.equal(res.statusCode, 401, url);
      assert.match(String(res.headers['www-authenticate']), /^Digest /);
      assert.match(res.body, /<OpenRosaResponse/);
    }
  });

  test('Digest credentials answer the challenge, as Briefcase sends them', async () => {
    const uri = `/bob/view/submissionList?formId=${ID}&cursor=&numEntries=100&includeIncomplete=false`;
    const challenge = await get(uri);
    assert.equal(challenge.statusCode, 401);
    const res = await server.app.inject({ method: 'GET', url: uri, headers: { authorization: digestAuthorization(String(challenge.headers['www-authenticate']), bob, uri) } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(readChunk(res.body).ids, order.map((u) => `uuid:${u}`));
  });

  test('a stranger gets the refusal the data API gives them', async () => {
    const dataApi = await get(`/api/v1/data/${formId}`, alice);
    const list = await get(`/bob/view/submissionList?formId=${ID}`, alice);
    const one = await get(`/bob/view/downloadSubmission?formId=${encodeURIComponent(submissionKey(`uuid:${order[0] ?? ''}`))}`, alice);
    assert.ok(dataApi.statusCode === 403 || dataApi.statusCode === 404);
    assert.equal(list.statusCode, dataApi.statusCode);
    assert.equal(one.statusCode, dataApi.statusCode);
  });

  test('a read-only member pulls every record; a role that reads only its own pulls only those', async () => {
    assert.deepEqual((await pullIds(rita, 100)).ids, order.map((u) => `uuid:${u}`));
    // Dora sent the fourth record.
    const own = await pullIds(dora, 100);
    assert.deepEqual(own.ids, [`uuid:${order[3] ?? ''}`]);
    const others = await get(`/bob/view/downloadSubmission?formId=${encodeURIComponent(submissionKey(`uuid:${order[0] ?? ''}`))}`, dora);
    assert.equal(others.statusCode, 404);
    assert.equal((await get(`/bob/view/downloadSubmission?formId=${encodeURIComponent(submissionKey(`uuid:${order[3] ?? ''}`))}`, dora)).statusCode, 200);
  });
});

describe('Briefcase bad input', () => {
  test('an unknown form or record is a 404; an unknown account too', async () => {
    assert.equal((await get('/bob/view/submissionList?formId=nope', bob)).statusCode, 404);
    assert.equal((await get('/nobody/view/submissionList?formId=nope', bob)).statusCode, 404);
    assert.equal((await get(`/bob/view/downloadSubmission?formId=${encodeURIComponent(submissionKey(`uuid:${randomUUID()}`))}`, bob)).statusCode, 404);
  });

  test('a bad formId, cursor or numEntries is a 400 that says what is wrong', async () => {
    const cases: Array<[string, RegExp]> = [
      ['/bob/view/submissionList', /formId is required/],
      [`/bob/view/submissionList?formId=${ID}&cursor=abc`, /Invalid cursor/],
      [`/bob/view/submissionList?formId=${ID}&cursor=-5`, /Invalid cursor/],
      [`/bob/view/submissionList?formId=${ID}&numEntries=0`, /numEntries/],
      ['/bob/view/downloadSubmission', /formId is required/],
      [`/bob/view/downloadSubmission?formId=${ID}`, /Invalid formId/],
      [`/bob/view/downloadSubmission?formId=${encodeURIComponent(`${ID}/${root}`)}`, /Invalid formId/],
    ];
    for (const [url, message] of cases) {
      const res = await get(url, bob);
      assert.equal(res.statusCode, 400, url);
      assert.match(res.body, message, url);
      assert.match(res.body, /^<\?xml/);
    }
  });
});

describe('Briefcase push', () => {
  let carl: TestUser;
  before(async () => {
    carl = await createUser(server.app, 'carl');
  });

  const upload = (user: TestUser | undefined, url: string, files: Parameters<typeof multipart>[1]): Promise<LightMyRequestResponse> => {
    const body = multipart({}, files);
    return server.app.inject({
      method: 'POST',
      url,
      payload: body.payload,
      headers: { ...(user ? { authorization: basic(user.username, user.password) } : {}), ...body.headers, 'x-openrosa-version': '1.0' },
    });
  };

  test('replays a push: the pulled form and its media to formUpload, each pulled record to /submission, then pulls them back unchanged', async () => {
    const xform = (await get(`/bob/forms/${formId}/form.xml`, bob)).body;
    const towns = 'name,label\nkisumu,Kisumu\n';
    assert.equal((await server.app.inject({ method: 'HEAD', url: '/carl/formUpload', headers: { authorization: basic(carl.username, carl.password) } })).statusCode, 204);
    const published = await upload(carl, '/carl/formUpload', [
      { name: 'form_def_file', fileName: `${ID}.xml`, content: xform, contentType: 'application/xml' },
      { name: 'towns.csv', fileName: 'towns.csv', content: towns, contentType: 'text/csv' },
    ]);
    assert.equal(published.statusCode, 201, published.body);
    assert.match(published.body, new RegExp(`<OpenRosaResponse xmlns="http://openrosa.org/http/response"><message nature="">${ID} successfully published.</message>`));
    // Briefcase's next 10 MB part sends the form again with more files: they join the same form.
    const part2 = await upload(carl, '/carl/formUpload', [
      { name: 'form_def_file', fileName: `${ID}.xml`, content: xform, contentType: 'application/xml' },
      { name: 'villages.csv', fileName: 'villages.csv', content: 'name,label\nx,X\n', contentType: 'text/csv' },
    ]);
    assert.equal(part2.statusCode, 201, part2.body);
    const list = (await get('/carl/formList', carl)).body;
    assert.match(list, new RegExp(`<formID>${ID}</formID><name>Briefcase pull</name><version>2026010101</version>`));
    const manifestUrl = /<manifestUrl>([^<]+)<\/manifestUrl>/.exec(list)?.[1] ?? '';
    const manifest = (await get(new URL(manifestUrl).pathname, carl)).body;
    assert.match(manifest, /<filename>towns.csv<\/filename><hash>md5:[0-9a-f]{32}<\/hash>/);
    assert.match(manifest, /<filename>villages.csv<\/filename>/);

    // Each record as Briefcase stored it from bob's account (root attributes and all), with its files.
    for (const uuid of order) {
      const pulled = (await get(`/bob/view/downloadSubmission?formId=${encodeURIComponent(submissionKey(`uuid:${uuid}`))}`, bob)).body;
      const instance = /<data>([\s\S]*)<\/data>/.exec(pulled)?.[1] ?? '';
      const original = sent.get(uuid);
      assert.ok(original);
      const res = await upload(carl, '/carl/submission', [
        { name: 'xml_submission_file', fileName: 'submission.xml', content: instance, contentType: 'application/xml' },
        { name: original.name, fileName: original.name, content: original.photo, contentType: 'image/jpeg' },
      ]);
      assert.equal(res.statusCode, 201, res.body);
    }
    const { ids } = await pullIds(carl, 100, '/carl');
    assert.deepEqual(ids, order.map((u) => `uuid:${u}`));
    for (const uuid of order) {
      const res = await get(`/carl/view/downloadSubmission?formId=${encodeURIComponent(submissionKey(`uuid:${uuid}`))}`, carl);
      const original = sent.get(uuid);
      assert.ok(original);
      const data = /<data>([\s\S]*)<\/data>/.exec(res.body)?.[1] ?? '';
      const sentBody = original.xml.slice(original.xml.indexOf('>', original.xml.indexOf(`<${root}`)) + 1);
      assert.equal(data.slice(data.indexOf('>') + 1), sentBody, 'the record comes back byte for byte');
      const url = new URL((/<downloadUrl>([^<]*)<\/downloadUrl>/.exec(res.body)?.[1] ?? '').replace(/&amp;/g, '&'));
      const file = await get(url.pathname + url.search, carl);
      assert.ok(file.rawPayload.equals(original.photo));
    }
    // The form JSON read from the XForm types the answers: age is a number in the data API.
    const carlForm = (await get('/api/v1/forms', carl)).json<Array<{ formid: number; id_string: string }>>().find((f) => f.id_string === ID);
    assert.ok(carlForm);
    const records = (await get(`/api/v1/data/${carlForm.formid}`, carl)).json<Array<Record<string, unknown>>>();
    assert.equal(records.length, order.length);
    assert.ok(records.every((r) => typeof r['age'] === 'number' && Array.isArray(r['_attachments']) && (r['_attachments'] as unknown[]).length === 1));
  });

  test('formUpload refuses the anonymous, a stranger’s account, a duplicate form, a missing or broken XForm', async () => {
    // An account of its own, which has the form already: carl's push publishes it in the other test.
    const cleo = await createUser(server.app, 'cleo');
    const xform = (await get(`/bob/forms/${formId}/form.xml`, bob)).body;
    const formPart = { name: 'form_def_file', fileName: 'f.xml', content: xform, contentType: 'application/xml' };
    assert.equal((await upload(cleo, '/cleo/formUpload', [formPart])).statusCode, 201);
    const anonymous = await upload(undefined, '/cleo/formUpload', [formPart]);
    assert.equal(anonymous.statusCode, 401);
    assert.match(String(anonymous.headers['www-authenticate']), /^Digest /);
    const stranger = await upload(alice, '/cleo/formUpload', [formPart]);
    assert.equal(stranger.statusCode, 403);
    assert.match(stranger.body, /has no permission to add xforms to account cleo/);
    const duplicate = await upload(cleo, '/formUpload', [formPart]);
    assert.equal(duplicate.statusCode, 400);
    assert.match(duplicate.body, /already exists/);
    const missing = await upload(cleo, '/cleo/formUpload', [{ name: 'other', fileName: 'x.txt', content: 'x' }]);
    assert.equal(missing.statusCode, 400);
    assert.match(missing.body, /Missing xml file/);
    for (const broken of ['<h:html', '<!DOCTYPE x [<!ENTITY e "x">]><x/>', '<data id="x"/>']) {
      const res = await upload(cleo, '/cleo/formUpload', [{ ...formPart, content: broken }]);
      assert.equal(res.statusCode, 400, broken);
      assert.match(res.body, /<OpenRosaResponse/);
    }
    assert.equal((await upload(cleo, '/nobody/formUpload', [formPart])).statusCode, 404);
  });
});
