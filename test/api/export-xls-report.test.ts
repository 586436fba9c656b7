import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as XLSX from '@e965/xlsx';
import { createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { setFormRole } from '../../src/modules/forms/repository.ts';

let server: TestServer;
let templates: Server;
let base: string;
let bob: TestUser;
let formId: number;
let bobId: number;
let evilId: number;

const fixture = (path: string) => readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8');
const TUTORIAL_XML = fixture('submissions/tutorial_w_repeats.xml');

function workbook(bookType: 'xlsx' | 'biff8', sheets: Record<string, unknown[][]>): Buffer {
  const wb = XLSX.utils.book_new();
  for (const [name, rows] of Object.entries(sheets)) XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(rows), name);
  return XLSX.write(wb, { type: 'buffer', bookType }) as Buffer;
}

const TABLE = {
  Report: [
    ['Report for {{@title}}', '{{@id_string}}'],
    ['Name', 'Age', 'First child', 'Second child age', 'Browsers', 'Firefox', 'Latitude', 'ID'],
    ['{{name}}', '{{age}}', '{{children[1]/childs_name}}', '{{children[2]/childs_age}}', '{{web_browsers}}', '{{web_browsers/firefox}}', '{{_gps_latitude}}', '{{_id}}'],
    ['Total', 'see above'],
  ],
  About: [['Made from a template', 42]],
};

const CARD = {
  Card: [
    ['{{#records}}'],
    ['Name:', '{{name}}'],
    ['Children:', '{{children[1]/childs_name}} and {{children[2]/childs_name}}'],
    ['{{/records}}'],
  ],
};

const FILES: Record<string, { type: string; body: Buffer }> = {
  '/table.xlsx': { type: 'application/octet-stream', body: workbook('xlsx', TABLE) },
  '/card.xls': { type: 'application/vnd.ms-excel', body: workbook('biff8', CARD) },
  '/page.html': { type: 'text/html', body: Buffer.from('<html><body>Not a workbook</body></html>') },
  '/broken.xlsx': { type: 'application/octet-stream', body: workbook('xlsx', { Bad: [['{{#records}}'], ['{{name}}']] }) },
  '/huge.xlsx': { type: 'application/octet-stream', body: Buffer.alloc(11 * 1024 * 1024) },
};

async function submit(xml: string): Promise<void> {
  const body = multipart({}, [{ name: 'xml_submission_file', fileName: 'submission.xml', content: xml, contentType: 'text/xml' }]);
  const res = await server.app.inject({ method: 'POST', url: `/${bob.username}/submission`, payload: body.payload, headers: { ...bob.auth, ...body.headers } });
  assert.equal(res.statusCode, 201, res.body);
}

before(async () => {
  templates = createServer((req, res) => {
    const file = FILES[req.url ?? ''];
    if (!file) {
      res.writeHead(404).end('missing');
      return;
    }
    res.writeHead(200, { 'content-type': file.type }).end(file.body);
  });
  await new Promise<void>((resolve) => templates.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(templates.address() as AddressInfo).port}`;
  server = await startTestServer({ ALLOW_PRIVATE_URLS: 'true' });
  bob = await createUser(server.app, 'bob');
  const form = multipart({}, [formFile(fixture('submissions/tutorial_w_repeats.csv'), 'tutorial_w_repeats.csv')]);
  const published = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: form.payload, headers: { ...bob.auth, ...form.headers } });
  assert.equal(published.statusCode, 201, published.body);
  formId = Number(published.json().formid);
  await submit(TUTORIAL_XML);
  await submit(
    TUTORIAL_XML.replace('b31c6ac2-b8ca-4180-914f-c844fa10ed3b', 'c31c6ac2-b8ca-4180-914f-c844fa10ed3c')
      .replace('<name>Bob</name>', '<name>=HYPERLINK("http://evil")</name>')
      .replace('<web_browsers />', '<web_browsers>firefox chrome</web_browsers>')
      .replace(/<children><childs_name>Dick.*?<\/children>/, ''),
  );
  const data = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}`, headers: bob.auth });
  [bobId, evilId] = data.json<Array<{ _id: number }>>().map((r) => r._id) as [number, number];
});

after(async () => {
  await server.close();
  await new Promise((resolve) => templates.close(resolve));
});

function report(query: string, user: TestUser | null = bob) {
  return server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.xls?${query}`, headers: user ? user.auth : {} });
}

function sheets(body: Buffer): Record<string, unknown[][]> {
  const book = XLSX.read(body, { type: 'buffer' });
  const rows = (name: string) =>
    XLSX.utils.sheet_to_json<unknown[]>(book.Sheets[name] as XLSX.WorkSheet, { header: 1, raw: true, defval: null }).map((row) => {
      const cells = [...row];
      while (cells.length > 0 && cells[cells.length - 1] === null) cells.pop();
      return cells;
    });
  return Object.fromEntries(book.SheetNames.map((name) => [name, rows(name)]));
}

async function addTemplateEntry(dataType: string, value: string, form = formId): Promise<number> {
  const row = await server.deps.db
    .insertInto('form_metadata')
    .values({ form_id: form, data_type: dataType, data_value: value, extra_data: '{}', data_file: null, data_file_type: null, file_hash: null, date_created: new Date() })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

describe('custom XLS reports', () => {
  test('token: each record fills the placeholder row of the template, in a legacy XLS file', async () => {
    const res = await report(`token=${encodeURIComponent(`${base}/table.xlsx`)}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/vnd.ms-excel');
    assert.match(String(res.headers['content-disposition']), /filename\*=UTF-8''tutorial_w_repeats-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}\.xls$/);
    assert.equal(res.rawPayload.subarray(0, 4).toString('hex'), 'd0cf11e0');
    assert.deepEqual(sheets(res.rawPayload), {
      Report: [
        ['Report for tutorial_w_repeats', 'tutorial_w_repeats'],
        ['Name', 'Age', 'First child', 'Second child age', 'Browsers', 'Firefox', 'Latitude', 'ID'],
        ['Bob', 25, 'Tom', 5, 'n/a', 'n/a', -1.2625621, bobId],
        ["'=HYPERLINK(\"http://evil\")", 25, 'Tom', 'n/a', 'firefox chrome', 'True', -1.2625621, evilId],
        ['Total', 'see above'],
      ],
      About: [['Made from a template', 42]],
    });
  });

  test('meta: the template named by an external_export entry of the form; data_id picks one record', async () => {
    const meta = await addTemplateEntry('external_export', `Cards|${base}/card.xls`);
    const all = await report(`meta=${meta}`);
    assert.equal(all.statusCode, 200, all.body);
    assert.deepEqual(sheets(all.rawPayload)['Card'], [
      ['Name:', 'Bob'],
      ['Children:', 'Tom and Dick'],
      ['Name:', "'=HYPERLINK(\"http://evil\")"],
      ['Children:', 'Tom and n/a'],
    ]);
    const one = await report(`meta=${meta}&data_id=${bobId}`);
    assert.equal(one.statusCode, 200, one.body);
    assert.deepEqual(sheets(one.rawPayload)['Card'], [
      ['Name:', 'Bob'],
      ['Children:', 'Tom and Dick'],
    ]);
  });

  test('unknown record, metadata of another kind or form, and bad ids are refused', async () => {
    const token = `token=${encodeURIComponent(`${base}/table.xlsx`)}`;
    assert.equal((await report(`${token}&data_id=999999`)).statusCode, 404);
    assert.equal((await report(`${token}&data_id=abc`)).statusCode, 400);
    const perms = await addTemplateEntry('media', `x|${base}/table.xlsx`);
    assert.equal((await report(`meta=${perms}`)).statusCode, 404);
    assert.equal((await report('meta=999999')).statusCode, 404);
    const bad = await report('meta=one');
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().detail, 'Invalid metadata pk');
  });

  test('a template that cannot be fetched or read is a 400 saying why', async () => {
    const cases: Array<[string, RegExp]> = [
      ['/missing.xlsx', /Could not download the report template .*answered 404/],
      ['/page.html', /not an \.xlsx or \.xls workbook/],
      ['/huge.xlsx', /larger than 10485760 bytes/],
      ['/broken.xlsx', /Sheet "Bad" row 1: \{\{#records\}\} is never closed/],
    ];
    for (const [path, message] of cases) {
      const res = await report(`token=${encodeURIComponent(`${base}${path}`)}`);
      assert.equal(res.statusCode, 400, path);
      assert.match(res.json().detail, message);
    }
  });

  test('without meta or token the .xls download stays the normal export', async () => {
    const res = await report('');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(Object.keys(sheets(res.rawPayload)), ['tutorial_w_repeats', 'children']);
  });

  test('readonly-no-download gets 403 and anonymous 404 (a private form is not seen), as for exports', async () => {
    const carol = await createUser(server.app, 'carol');
    await setFormRole(server.deps.db, formId, carol.id, 'readonly-no-download');
    const token = `token=${encodeURIComponent(`${base}/table.xlsx`)}`;
    assert.equal((await report(token, carol)).statusCode, 403);
    assert.equal((await report(token, null)).statusCode, 404);
    const dave = await createUser(server.app, 'dave');
    await setFormRole(server.deps.db, formId, dave.id, 'readonly');
    assert.equal((await report(token, dave)).statusCode, 200);
  });
});
