// A big flat CSV export on PostgreSQL is rendered by helper threads as well as the main thread
// (src/modules/exports/csv-threads.ts): the file must be byte for byte the one the main thread
// alone writes, by direct download and by job, with a query, across deleted records and with a
// repeat, a group, a select_multiple and a geopoint. On PGlite the same requests take the
// single-thread path, and the test checks that path the same way.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestServer, TestUser } from '../helpers.ts';
import { threadedExportForm, type ThreadedExportForm } from './export-threads-fixture.ts';
import type { AppDeps } from '../../src/context.ts';
import { buildJobRegistry } from '../../src/compose.ts';
import { silentJobLog } from '../../src/jobs/log.ts';
import { runOneJob } from '../../src/jobs/worker.ts';
import { findFormDefinition } from '../../src/modules/forms/repository.ts';
import { parseExportOptions } from '../../src/modules/exports/options.ts';
import { renderExport, type ExportTarget } from '../../src/modules/exports/render.ts';
import { CsvHelper, csvHelperModule } from '../../src/modules/exports/csv-threads.ts';
import { openExportSource } from '../../src/modules/exports/source.ts';
import { planFlatLayout } from '../../src/lib/writers/layout/flat.ts';
import { flatCsvBytes } from '../../src/modules/exports/flat-csv.ts';
import { CsvEncoder, csvLine } from '../../src/lib/writers/csv/writer.ts';

const RECORDS = 2600;
const FORM = [
  'survey,,,',
  ',type,name,label',
  ',text,name,Name',
  ',select_multiple pets,pets,Pets',
  ',geopoint,gps,Location',
  ',begin group,hh,Household',
  ',integer,size,Size',
  ',begin repeat,member,Members',
  ',text,m_name,Member name',
  ',end repeat,,',
  ',end group,,',
  'choices,,,',
  ',list_name,name,label',
  ',pets,cat,Cat',
  ',pets,dog,Dog',
  ',pets,fish,Fish',
  'settings,,,',
  ',form_id,form_title,',
  ',threaded,Threaded,',
  '',
].join('\n');

let server: TestServer;
let dataDir: string;
let bob: TestUser;
let formId: number;

function csvRows(): string {
  const header = ['name', 'pets', 'gps', 'hh/size', 'hh/member[1]/m_name', 'hh/member[2]/m_name', 'hh/member[3]/m_name'];
  const pets = ['cat', 'dog fish', '', 'cat dog fish'];
  const lines = Array.from({ length: RECORDS }, (_, i) => {
    const members = Array.from({ length: 3 }, (_, m) => (m < i % 4 ? `member ${i}-${m + 1}, "quoted"` : ''));
    const cells = [`person ${i}`, pets[i % 4] ?? '', i % 5 === 0 ? '' : `-1.${i} 36.${i} 1650 5`, String(i % 9), ...members];
    return cells.map((cell) => (/[",]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell)).join(',');
  });
  return `${header.join(',')}\n${lines.join('\n')}\n`;
}

let fixture: ThreadedExportForm;

before(async () => {
  fixture = await threadedExportForm('export-threads', FORM, csvRows(), RECORDS);
  ({ server, dataDir, bob, formId } = fixture);
});

after(async () => {
  await fixture.close();
});

/** The same export written by the main thread alone. */
async function singleThreadCsv(query: Record<string, string>): Promise<string> {
  const deps: AppDeps = { ...server.deps, config: { ...server.deps.config, exportThreads: 0 } };
  const definition = await findFormDefinition(deps.db, formId);
  const target: ExportTarget = { formId, idString: 'threaded', title: 'Threaded', formJson: definition.json };
  const file = await renderExport(deps, target, 'csv', parseExportOptions(query, { includeReviews: false }), 'http://testserver');
  const chunks: Uint8Array[] = [];
  for await (const chunk of file.chunks) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

const cases: Array<[string, Record<string, string>]> = [
  ['every record', {}],
  ['a query', { query: '{"hh/size": {"$gt": 3}}' }],
  ['labels, a dot delimiter and unsplit select_multiple', { include_labels: 'true', group_delimiter: '.', do_not_split_select_multiples: 'true' }],
];

for (const [name, query] of cases) {
  test(`a threaded CSV download equals the single-thread file: ${name}`, async () => {
    const search = new URLSearchParams(query).toString();
    const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.csv${search ? `?${search}` : ''}`, headers: bob.auth });
    assert.equal(res.statusCode, 200, res.body);
    const expected = await singleThreadCsv(query);
    assert.equal(res.body, expected);
    const lines = res.body.split('\n').filter((line) => line !== '');
    if (name === 'every record') {
      assert.equal(lines.length, 1 + RECORDS - 5);
      assert.match(res.body, /member 3-1, ""quoted""/);
    }
  });
}

test('a threaded CSV export job writes the same file and reports its progress to the end', async () => {
  const started = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/export_async?format=csv`, headers: bob.auth });
  assert.equal(started.statusCode, 202, started.body);
  const jobUuid = String(started.json().job_uuid);
  while (await runOneJob(server.deps, buildJobRegistry(), { log: silentJobLog })) {
    // until the queue is empty
  }
  const polled = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/export_async?job_uuid=${jobUuid}`, headers: bob.auth });
  assert.equal(polled.json().job_status, 'SUCCESS', polled.body);
  const exportId = String(polled.json().export_url).split('/').pop();
  const file = readFileSync(join(dataDir, 'exports', String(formId), `${exportId}.csv`), 'utf8');
  assert.equal(file, await singleThreadCsv({}));
});

test('a helper thread renders a range as the main thread does, and its failures reach the caller with their message', { skip: process.env['DATABASE_URL'] ? false : 'helper threads run on PostgreSQL only' }, async () => {
  const module = csvHelperModule();
  assert.ok(module, 'the helper module is found beside csv-threads.ts');
  const databaseUrl = server.deps.config.databaseUrl ?? '';
  const definition = await findFormDefinition(server.deps.db, formId);
  const target: ExportTarget = { formId, idString: 'threaded', title: 'Threaded', formJson: definition.json };
  const options = parseExportOptions({}, { includeReviews: false });
  const source = await openExportSource(server.deps, target, options, 'http://testserver');
  const split = await source.splitPass();
  assert.ok(split && split.ranges.length >= 3, 'the pass splits into ranges');
  const shape = await source.repeatShape();
  const osmTagKeys = await source.osmTagKeys();
  const layout = planFlatLayout(source.form, options, shape, { baseUrl: source.baseUrl }, osmTagKeys);
  const helper = new CsvHelper(module, { databaseUrl, formJson: definition.json, options, baseUrl: source.baseUrl, repeatCounts: shape.keyedCounts(), osmTagKeys, facts: split.facts });
  try {
    const range = split.ranges[1] ?? { after: 0, through: 0 };
    const rendered = await helper.render(0, range);
    const page = await split.readRange(range);
    assert.equal(rendered.records, page.count);
    assert.equal(Buffer.concat(rendered.take()).toString('utf8'), Buffer.concat(flatCsvBytes({ write: (record) => csvLine(layout.row(record)), raw: undefined }, page, new CsvEncoder())).toString('utf8'));
  } finally {
    await helper.close();
  }
  const missing = new URL(databaseUrl);
  missing.pathname = '/gather_no_such_database';
  const broken = new CsvHelper(module, { databaseUrl: missing.toString(), formJson: definition.json, options, baseUrl: source.baseUrl, repeatCounts: [], osmTagKeys, facts: split.facts });
  try {
    await assert.rejects(broken.render(0, { after: 0, through: 10 }), /CSV helper thread: .*gather_no_such_database/);
  } finally {
    await broken.close();
  }
});

test('ranges a helper finishes out of order (one waits for a user lookup the next ones do not need) are each taken with their own bytes', { skip: process.env['DATABASE_URL'] ? false : 'helper threads run on PostgreSQL only' }, async () => {
  const module = csvHelperModule();
  assert.ok(module);
  const definition = await findFormDefinition(server.deps.db, formId);
  const target: ExportTarget = { formId, idString: 'threaded', title: 'Threaded', formJson: definition.json };
  const options = parseExportOptions({}, { includeReviews: false });
  const source = await openExportSource(server.deps, target, options, 'http://testserver');
  const split = await source.splitPass();
  const [first, second, third] = split?.ranges ?? [];
  assert.ok(split && first && second && third, 'the pass splits into three ranges or more');
  // Records without a submitter (anonymous submissions) need no user lookup: the helper's first
  // range waits for one, the next two do not, so their bytes reach the channel first.
  const anonymous = (submittedBy: number | null) =>
    server.deps.db.updateTable('instances').set({ submitted_by: submittedBy }).where('form_id', '=', formId).where('id', '>', first.through).where('id', '<=', third.through).execute();
  await anonymous(null);
  const helper = new CsvHelper(module, {
    databaseUrl: server.deps.config.databaseUrl ?? '', formJson: definition.json, options, baseUrl: source.baseUrl,
    repeatCounts: (await source.repeatShape()).keyedCounts(), osmTagKeys: [], facts: split.facts,
  });
  try {
    const layout = planFlatLayout(source.form, options, await source.repeatShape(), { baseUrl: source.baseUrl }, []);
    const finished: number[] = [];
    const rendered = [first, second, third].map((range, seq) => helper.render(seq, range).then((r) => (finished.push(seq), r)));
    const results = await Promise.all(rendered);
    assert.deepEqual(finished, [1, 2, 0], 'the first range is ready last');
    for (const [seq, range] of [first, second, third].entries()) {
      const expected = Buffer.concat(flatCsvBytes({ write: (record) => csvLine(layout.row(record)), raw: undefined }, await split.readRange(range), new CsvEncoder())).toString('utf8');
      assert.equal(Buffer.concat(results[seq]?.take() ?? []).toString('utf8'), expected, `range ${seq}`);
    }
  } finally {
    await helper.close();
    await anonymous(bob.id);
  }
});
