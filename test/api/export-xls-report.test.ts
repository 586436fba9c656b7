import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as XLSX from '@e965/xlsx';
import { createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { setFormRole } from '../../src/modules/forms/repository.ts';
import { runOneJob } from '../../src/jobs/worker.ts';
import { buildJobRegistry } from '../../src/compose.ts';

let server: TestServer;
let dataDir: string;
/** The paths the template server was asked for. */
const requested: string[] = [];
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
    requested.push(req.url ?? '');
    const file = FILES[req.url ?? ''];
    if (!file) {
      res.writeHead(404).end('missing');
      return;
    }
    res.writeHead(200, { 'content-type': file.type }).end(file.body);
  });
  await new Promise<void>((resolve) => templates.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(templates.address() as AddressInfo).port}`;
  dataDir = mkdtempSync(join(tmpdir(), 'gather-xls-report-'));
  server = await startTestServer({ ALLOW_PRIVATE_URLS: 'true', DATA_DIR: dataDir });
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
  rmSync(dataDir, { recursive: true, force: true });
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

/** What the table template (table.xlsx) makes of the two records, by direct download or by job. */
function tableReport(): Record<string, unknown[][]> {
  return {
    Report: [
      ['Report for tutorial_w_repeats', 'tutorial_w_repeats'],
      ['Name', 'Age', 'First child', 'Second child age', 'Browsers', 'Firefox', 'Latitude', 'ID'],
      ['Bob', 25, 'Tom', 5, 'n/a', 'n/a', -1.2625621, bobId],
      ['=HYPERLINK("http://evil")', 25, 'Tom', 'n/a', 'firefox chrome', 'True', -1.2625621, evilId],
      ['Total', 'see above'],
    ],
    About: [['Made from a template', 42]],
  };
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
    assert.deepEqual(sheets(res.rawPayload), tableReport());
    // Formula-like answers are text cells, never evaluated: written as answered (issue 21).
    const evil = XLSX.read(res.rawPayload, { type: 'buffer', cellFormula: true }).Sheets['Report']?.['A4'] as XLSX.CellObject | undefined;
    assert.deepEqual([evil?.t, evil?.v, evil?.f], ['s', '=HYPERLINK("http://evil")', undefined]);
  });

  test('meta: the template named by an external_export entry of the form; data_id picks one record', async () => {
    const meta = await addTemplateEntry('external_export', `Cards|${base}/card.xls`);
    const all = await report(`meta=${meta}`);
    assert.equal(all.statusCode, 200, all.body);
    assert.deepEqual(sheets(all.rawPayload)['Card'], [
      ['Name:', 'Bob'],
      ['Children:', 'Tom and Dick'],
      ['Name:', '=HYPERLINK("http://evil")'],
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

  test('.xlsx with a template is the same report (a legacy .xls file), as export_async and onadata read it', async () => {
    const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.xlsx?token=${encodeURIComponent(`${base}/table.xlsx`)}`, headers: bob.auth });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/vnd.ms-excel');
    assert.match(String(res.headers['content-disposition']), /filename\*=UTF-8''tutorial_w_repeats-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}\.xls$/);
    assert.equal(res.rawPayload.subarray(0, 4).toString('hex'), 'd0cf11e0');
    assert.deepEqual(sheets(res.rawPayload), tableReport());
    const plain = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.xlsx`, headers: bob.auth });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.rawPayload.subarray(0, 2).toString('latin1'), 'PK', 'without a template .xlsx stays the normal export');
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

const registry = buildJobRegistry();

async function runJobs(): Promise<void> {
  while (await runOneJob(server.deps, registry, { log: () => {} })) {
    // until the queue is empty
  }
}

function exportAsync(query: string, user: TestUser | null = bob) {
  return server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/export_async?${query}`, headers: user ? user.auth : {} });
}

/** Starts the job, checks it waits for a worker, runs it and answers the polled outcome. */
async function reportJob(query: string): Promise<{ jobUuid: string; outcome: Record<string, unknown> }> {
  const start = await exportAsync(query);
  assert.equal(start.statusCode, 202, start.body);
  assert.deepEqual(Object.keys(start.json()), ['job_uuid']);
  const jobUuid: string = start.json().job_uuid;
  assert.deepEqual((await exportAsync(`job_uuid=${jobUuid}`)).json(), { job_status: 'PENDING' });
  await runJobs();
  const polled = await exportAsync(`job_uuid=${jobUuid}`);
  assert.equal(polled.statusCode, 202);
  return { jobUuid, outcome: polled.json() };
}

const download = (url: string, user: TestUser | null = bob) =>
  server.app.inject({ method: 'GET', url: url.replace('http://testserver', ''), headers: user ? user.auth : {} });

async function formExports(): Promise<Array<Record<string, unknown>>> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/export?xform=${formId}`, headers: bob.auth });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

describe('custom XLS reports through export_async', () => {
  const tableToken = () => `token=${encodeURIComponent(`${base}/table.xlsx`)}`;

  test('format=xlsx&token: a job renders the report; SUCCESS gives /api/v1/export/<id>.xls, the same .xls the direct download answers', async () => {
    const { jobUuid, outcome } = await reportJob(`format=xlsx&${tableToken()}`);
    assert.equal(outcome['job_status'], 'SUCCESS', JSON.stringify(outcome));
    const url = String(outcome['export_url']);
    assert.match(url, /^http:\/\/testserver\/api\/v1\/export\/\d+\.xls$/);
    const file = await download(url);
    assert.equal(file.statusCode, 200, file.body);
    assert.equal(file.headers['content-type'], 'application/vnd.ms-excel');
    assert.match(String(file.headers['content-disposition']), /^attachment; filename="tutorial_w_repeats-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}\.xls"/);
    assert.equal(file.rawPayload.subarray(0, 4).toString('hex'), 'd0cf11e0');
    const expected = tableReport();
    assert.deepEqual(sheets(file.rawPayload), expected);
    assert.deepEqual(sheets((await report(tableToken())).rawPayload), expected);
    const id = Number(/(\d+)\.xls$/.exec(url)?.[1]);
    assert.ok(existsSync(join(dataDir, 'exports', String(formId), `${id}.xls`)));
    // Without the suffix too, as other exports download.
    assert.equal((await download(`/api/v1/export/${id}`)).statusCode, 200);

    const listed = (await formExports()).find((e) => e['task_id'] === jobUuid);
    assert.equal(listed?.['type'], 'external');
    assert.equal(listed?.['job_status'], 'SUCCESS');
    assert.equal(listed?.['export_url'], url);
    assert.match(String(listed?.['filename']), /^tutorial_w_repeats-.*\.xls$/);
    assert.equal((listed?.['options'] as Record<string, unknown>)['token'], `${base}/table.xlsx`);
  });

  test('a report is never reused: each request is a new job and a new export file', async () => {
    const first = await reportJob(`format=xls&${tableToken()}`);
    const second = await reportJob(`format=xls&${tableToken()}`);
    assert.notEqual(second.jobUuid, first.jobUuid);
    assert.equal(first.outcome['job_status'], 'SUCCESS');
    assert.equal(second.outcome['job_status'], 'SUCCESS');
    assert.notEqual(second.outcome['export_url'], first.outcome['export_url']);
    // Two requests before any worker runs: two jobs, not one shared.
    const a = await exportAsync(`format=xls&${tableToken()}`);
    const b = await exportAsync(`format=xls&${tableToken()}`);
    assert.notEqual(a.json().job_uuid, b.json().job_uuid);
    await runJobs();
    // An ordinary xls export beside them keeps its own type and reuse.
    const plain = await reportJob('format=xls');
    assert.equal(plain.outcome['job_status'], 'SUCCESS');
    assert.match(String(plain.outcome['export_url']), /\/api\/v1\/export\/\d+$/);
    assert.equal((await exportAsync('format=xls')).json().export_url, plain.outcome['export_url']);
    const types = (await formExports()).map((e) => e['type']);
    assert.ok(types.includes('xls') && types.includes('external'), types.join());
  });

  test('meta names the template; data_id renders one record', async () => {
    const meta = await addTemplateEntry('external_export', `Cards|${base}/card.xls`);
    const { outcome } = await reportJob(`format=xlsx&meta=${meta}&data_id=${bobId}`);
    assert.equal(outcome['job_status'], 'SUCCESS', JSON.stringify(outcome));
    const file = await download(String(outcome['export_url']));
    assert.equal(file.statusCode, 200);
    assert.deepEqual(sheets(file.rawPayload)['Card'], [
      ['Name:', 'Bob'],
      ['Children:', 'Tom and Dick'],
    ]);
    const listed = (await formExports()).find((e) => e['export_url'] === outcome['export_url']);
    assert.deepEqual([listed?.['type'], (listed?.['options'] as Record<string, unknown>)['meta'], (listed?.['options'] as Record<string, unknown>)['data_id']], ['external', String(meta), String(bobId)]);
    const all = await reportJob(`format=xls&meta=${meta}`);
    assert.deepEqual(sheets((await download(String(all.outcome['export_url']))).rawPayload)['Card'], [
      ['Name:', 'Bob'],
      ['Children:', 'Tom and Dick'],
      ['Name:', '=HYPERLINK("http://evil")'],
      ['Children:', 'Tom and n/a'],
    ]);
  });

  test('a template that cannot be fetched or read, or an unknown record, ends the job in FAILURE saying why', async () => {
    const cases: Array<[string, RegExp]> = [
      [`token=${encodeURIComponent(`${base}/missing.xlsx`)}`, /^Could not download the report template .*answered 404/],
      [`token=${encodeURIComponent(`${base}/page.html`)}`, /not an \.xlsx or \.xls workbook/],
      [`token=${encodeURIComponent(`${base}/broken.xlsx`)}`, /Sheet "Bad" row 1: \{\{#records\}\} is never closed/],
      [`${tableToken()}&data_id=999999`, /^No record with _id 999999\.$/],
    ];
    for (const [query, message] of cases) {
      const { jobUuid, outcome } = await reportJob(`format=xls&${query}`);
      assert.equal(outcome['job_status'], 'FAILURE', query);
      assert.equal(outcome['job_uuid'], jobUuid);
      assert.match(String(outcome['error_message']), message);
      assert.equal(outcome['error'], outcome['error_message']);
      const listed = (await formExports()).find((e) => e['task_id'] === jobUuid);
      assert.equal(listed?.['type'], 'external');
      assert.equal(listed?.['job_status'], 'FAILURE');
      assert.equal(listed?.['export_url'], null);
    }
    // The template entry goes between the request and the job.
    const meta = await addTemplateEntry('external_export', `Gone|${base}/table.xlsx`);
    const start = await exportAsync(`format=xls&meta=${meta}`);
    assert.equal(start.statusCode, 202, start.body);
    await server.deps.db.updateTable('form_metadata').set({ deleted_at: new Date() }).where('id', '=', meta).execute();
    await runJobs();
    const polled = (await exportAsync(`job_uuid=${start.json().job_uuid}`)).json();
    assert.equal(polled.job_status, 'FAILURE');
    assert.equal(polled.error_message, `The form has no report template with metadata id ${meta}.`);
  });

  test('the template is fetched by the job, never while the request waits', async () => {
    const start = await exportAsync(`format=xls&token=${encodeURIComponent(`${base}/table.xlsx?slow`)}`);
    assert.equal(start.statusCode, 202, start.body);
    assert.ok(!requested.includes('/table.xlsx?slow'));
    await runJobs();
    assert.ok(requested.includes('/table.xlsx?slow'));
  });

  test('obviously bad parameters are refused at request time, with no job: 400 bad ids or URL, 404 unknown meta', async () => {
    const before = (await formExports()).length;
    const bad = await exportAsync('format=xls&meta=one');
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().detail, 'Invalid metadata pk');
    assert.equal((await exportAsync('format=xlsx&meta=999999')).statusCode, 404);
    const media = await addTemplateEntry('media', `x|${base}/table.xlsx`);
    assert.equal((await exportAsync(`format=xlsx&meta=${media}`)).statusCode, 404);
    const badId = await exportAsync(`format=xls&${tableToken()}&data_id=abc`);
    assert.equal(badId.statusCode, 400);
    assert.equal(badId.json().detail, 'Invalid data_id');
    assert.equal((await exportAsync('format=xls&token=')).statusCode, 400);
    assert.equal((await formExports()).length, before);
  });

  test('who may make and download reports is who may export: readonly yes, readonly-no-download 403, anonymous 401', async () => {
    const erin = await createUser(server.app, 'erin');
    await setFormRole(server.deps.db, formId, erin.id, 'readonly-no-download');
    const frank = await createUser(server.app, 'frank');
    await setFormRole(server.deps.db, formId, frank.id, 'readonly');
    assert.equal((await exportAsync(`format=xls&${tableToken()}`, erin)).statusCode, 403);
    assert.equal((await exportAsync(`format=xls&${tableToken()}`, null)).statusCode, 401);
    const started = await exportAsync(`format=xls&${tableToken()}`, frank);
    assert.equal(started.statusCode, 202, started.body);
    await runJobs();
    const polled = (await exportAsync(`job_uuid=${started.json().job_uuid}`, frank)).json();
    assert.equal(polled.job_status, 'SUCCESS', JSON.stringify(polled));
    assert.equal((await download(polled.export_url, frank)).statusCode, 200);
    assert.equal((await download(polled.export_url, erin)).statusCode, 403);
    assert.equal((await download(polled.export_url, null)).statusCode, 404);
  });

  test('meta and token belong to the Excel formats: format=csv with a token is the ordinary CSV export', async () => {
    const { outcome } = await reportJob(`format=csv&${tableToken()}&remove_group_name=true`);
    assert.equal(outcome['job_status'], 'SUCCESS');
    const file = await download(String(outcome['export_url']));
    assert.equal(file.headers['content-type'], 'application/csv');
    const listed = (await formExports()).find((e) => e['export_url'] === `${outcome['export_url']}.csv`);
    assert.equal(listed?.['type'], 'csv');
  });
});
