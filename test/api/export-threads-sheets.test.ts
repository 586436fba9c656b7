// A big XLSX or savzip export on PostgreSQL is rendered a range of records at a time by helper
// threads as well as the main thread (src/modules/exports/sheet-ranges.ts): every part of the file
// must be byte for byte the one the main thread alone writes, by download and by job, with a query,
// across deleted records, with two repeats, and when the records' stored repeat counts mispredict
// where a range's `_index` counters start. On PGlite the same requests take the single-thread path.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestServer, TestUser } from '../helpers.ts';
import { threadedExportForm, type ThreadedExportForm } from './export-threads-fixture.ts';
import { unzip } from '../zip.ts';
import type { AppDeps } from '../../src/context.ts';
import { buildJobRegistry } from '../../src/compose.ts';
import { silentJobLog } from '../../src/jobs/log.ts';
import { runOneJob } from '../../src/jobs/worker.ts';
import { findFormDefinition } from '../../src/modules/forms/repository.ts';
import { parseExportOptions } from '../../src/modules/exports/options.ts';
import { renderExport, type ExportTarget } from '../../src/modules/exports/render.ts';

const RECORDS = 2600;
const FORM = [
  'survey,,,',
  ',type,name,label',
  ',text,name,Name',
  ',select_multiple pets,pets,Pets',
  ',date,seen,Seen',
  ',begin group,hh,Household',
  ',integer,size,Size',
  ',begin repeat,member,Members',
  ',text,m_name,Member name',
  ',decimal,m_height,Height',
  ',end repeat,,',
  ',end group,,',
  ',begin repeat,visit,Visits',
  ',text,v_note,Note',
  ',end repeat,,',
  'choices,,,',
  ',list_name,name,label',
  ',pets,cat,Cat',
  ',pets,dog,Dog',
  'settings,,,',
  ',form_id,form_title,',
  ',sheets,Sheets,',
  '',
].join('\n');

let server: TestServer;
let dataDir: string;
let bob: TestUser;
let formId: number;

function csvRows(): string {
  const header = ['name', 'pets', 'seen', 'hh/size', 'hh/member[1]/m_name', 'hh/member[1]/m_height', 'hh/member[2]/m_name', 'hh/member[2]/m_height', 'hh/member[3]/m_name', 'hh/member[3]/m_height', 'visit[1]/v_note', 'visit[2]/v_note'];
  const pets = ['cat', 'dog cat', '', 'dog'];
  const lines = Array.from({ length: RECORDS }, (_, i) => {
    const members = Array.from({ length: 3 }, (_, m) => (m < i % 4 ? [`member ${i}-${m + 1} <&> "q"`, String(1.5 + m)] : ['', ''])).flat();
    const visits = Array.from({ length: 2 }, (_, v) => (v < i % 3 ? `visit ${i}-${v + 1}` : ''));
    const cells = [`person ${i}`, pets[i % 4] ?? '', i % 7 === 0 ? '' : `2026-0${1 + (i % 9)}-1${i % 10}`, String(i % 9), ...members, ...visits];
    return cells.map((cell) => (/[",]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell)).join(',');
  });
  return `${header.join(',')}\n${lines.join('\n')}\n`;
}

let fixture: ThreadedExportForm;

before(async () => {
  fixture = await threadedExportForm('export-threads-sheets', FORM, csvRows(), RECORDS);
  ({ server, dataDir, bob, formId } = fixture);
});

after(async () => {
  await fixture.close();
});

/** The export's entries, written with the server's threads or (`threads` 0) the main thread alone, at a fixed time. */
async function rendered(format: 'xlsx' | 'savzip', query: Record<string, string>, threads?: number): Promise<Map<string, Buffer>> {
  const clock = { now: () => new Date('2026-11-29T06:30:00Z') };
  const deps: AppDeps = { ...server.deps, clock, config: { ...server.deps.config, exportThreads: threads ?? server.deps.config.exportThreads } };
  const definition = await findFormDefinition(deps.db, formId);
  const target: ExportTarget = { formId, idString: 'sheets', title: 'Sheets', formJson: definition.json };
  const file = await renderExport(deps, target, format, parseExportOptions(query, { includeReviews: false }), 'http://testserver');
  const chunks: Uint8Array[] = [];
  for await (const chunk of file.chunks) chunks.push(chunk);
  return unzip(Buffer.concat(chunks));
}

/** The same export written by the main thread alone, as its entries. */
function singleThreadXlsx(query: Record<string, string>): Promise<Map<string, Buffer>> {
  return rendered('xlsx', query, 0);
}

async function downloaded(query: Record<string, string>): Promise<Map<string, Buffer>> {
  const search = new URLSearchParams(query).toString();
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.xlsx${search ? `?${search}` : ''}`, headers: bob.auth });
  assert.equal(res.statusCode, 200, res.body);
  return unzip(res.rawPayload);
}

function assertSameEntries(actual: Map<string, Buffer>, expected: Map<string, Buffer>): void {
  assert.deepEqual([...actual.keys()], [...expected.keys()]);
  for (const [name, bytes] of expected) assert.ok(actual.get(name)?.equals(bytes), `${name} differs`);
}

const cases: Array<[string, Record<string, string>]> = [
  ['every record', {}],
  ['a query', { query: '{"hh/size": {"$gt": 3}}' }],
  ['labels and a dot delimiter', { include_labels: 'true', group_delimiter: '.' }],
];

for (const [name, query] of cases) {
  test(`a threaded XLSX download equals the single-thread file: ${name}`, async () => {
    const actual = await downloaded(query);
    assertSameEntries(actual, await singleThreadXlsx(query));
    if (name === 'every record') {
      const members = actual.get('xl/worksheets/sheet2.xml')?.toString('utf8') ?? '';
      assert.match(members, /member 3-1 &lt;&amp;&gt; "q"/);
      assert.equal(actual.get('xl/worksheets/sheet1.xml')?.toString('utf8').match(/<row /g)?.length, 1 + RECORDS - 5);
    }
  });
}

test('a threaded XLSX is the same when the stored repeat counts mispredict where ranges start', async () => {
  // Counts wrong for some records in the middle: the ranges after them start elsewhere than
  // predicted, and are written again on the main thread in turn.
  const ids = (await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?fields=${encodeURIComponent('["_id"]')}`, headers: bob.auth })).json<Array<{ _id: number }>>();
  const from = ids[900]?._id ?? 0;
  const through = ids[960]?._id ?? 0;
  const wrong = (counts: string | null) =>
    server.deps.db.updateTable('instances').set({ repeat_counts: counts }).where('form_id', '=', formId).where('id', '>=', from).where('id', '<=', through).execute();
  const saved = await server.deps.db.selectFrom('instances').select(['id', 'repeat_counts']).where('form_id', '=', formId).where('id', '>=', from).where('id', '<=', through).execute();
  await wrong('{}');
  try {
    assertSameEntries(await downloaded({}), await singleThreadXlsx({}));
  } finally {
    for (const row of saved) {
      await server.deps.db.updateTable('instances').set({ repeat_counts: row.repeat_counts === null ? null : JSON.stringify(row.repeat_counts) }).where('id', '=', row.id).execute();
    }
  }
});

test('a threaded XLSX export job writes the same file', async () => {
  const started = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/export_async?format=xlsx`, headers: bob.auth });
  assert.equal(started.statusCode, 202, started.body);
  const jobUuid = String(started.json().job_uuid);
  while (await runOneJob(server.deps, buildJobRegistry(), { log: silentJobLog })) {
    // until the queue is empty
  }
  const polled = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/export_async?job_uuid=${jobUuid}`, headers: bob.auth });
  assert.equal(polled.json().job_status, 'SUCCESS', polled.body);
  const exportId = String(polled.json().export_url).split('/').pop();
  assertSameEntries(await unzip(readFileSync(join(dataDir, 'exports', String(formId), `${exportId}.xlsx`))), await singleThreadXlsx({}));
});

for (const [name, query] of cases) {
  test(`a threaded savzip equals the single-thread file: ${name}`, async () => {
    const actual = await rendered('savzip', query);
    assertSameEntries(actual, await rendered('savzip', query, 0));
    assert.deepEqual([...actual.keys()], ['sheets.sav', 'hh_member.sav', 'visit.sav']);
  });
}

test('a threaded savzip is the same when the stored repeat counts mispredict where ranges start', async () => {
  const ids = (await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?fields=${encodeURIComponent('["_id"]')}`, headers: bob.auth })).json<Array<{ _id: number }>>();
  const from = ids[1300]?._id ?? 0;
  const through = ids[1310]?._id ?? 0;
  const saved = await server.deps.db.selectFrom('instances').select(['id', 'repeat_counts']).where('form_id', '=', formId).where('id', '>=', from).where('id', '<=', through).execute();
  await server.deps.db.updateTable('instances').set({ repeat_counts: '{"hh/member": 7}' }).where('form_id', '=', formId).where('id', '>=', from).where('id', '<=', through).execute();
  try {
    assertSameEntries(await rendered('savzip', {}), await rendered('savzip', {}, 0));
  } finally {
    for (const row of saved) {
      await server.deps.db.updateTable('instances').set({ repeat_counts: row.repeat_counts === null ? null : JSON.stringify(row.repeat_counts) }).where('id', '=', row.id).execute();
    }
  }
});
