// Helper threads of big exports on PostgreSQL are kept between exports (src/modules/exports/
// csv-threads.ts): an export after an aborted one, after one whose helper failed, and after the
// idle helpers have ended, is still byte for byte the file the main thread alone writes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import type { AppDeps } from '../../src/context.ts';
import { findFormDefinition } from '../../src/modules/forms/repository.ts';
import { parseExportOptions } from '../../src/modules/exports/options.ts';
import { renderExport, type ExportTarget } from '../../src/modules/exports/render.ts';
import { borrowHelpers, csvHelperModule, idleHelperThreads, returnHelpers } from '../../src/modules/exports/csv-threads.ts';
import { openExportSource } from '../../src/modules/exports/source.ts';

const RECORDS = 1500;
const THREADS = 2;
const FORM = ['survey,,,', ',type,name,label', ',text,name,Name', ',integer,size,Size', 'settings,,,', ',form_id,form_title,', ',pooled,Pooled,', ''].join('\n');
const postgres = process.env['DATABASE_URL'] ? false : 'helper threads run on PostgreSQL only';

let server: TestServer;
let dataDir: string;
let bob: TestUser;
let formId: number;

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gather-export-pool-'));
  server = await startTestServer({ DATA_DIR: dataDir, IMPORT_ASYNC_THRESHOLD: '100000000', EXPORT_THREADS: String(THREADS), EXPORT_THREAD_MIN_RECORDS: '500' });
  bob = await createUser(server.app, 'bob');
  const form = multipart({}, [formFile(FORM, 'pooled.csv')]);
  const published = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: form.payload, headers: { ...bob.auth, ...form.headers } });
  assert.equal(published.statusCode, 201, published.body);
  formId = Number(published.json().formid);
  const rows = Array.from({ length: RECORDS }, (_, i) => `person ${i},${i % 7}`).join('\n');
  const csv = multipart({}, [{ name: 'csv_file', fileName: 'rows.csv', content: `name,size\n${rows}\n`, contentType: 'text/csv' }]);
  const imported = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/csv_import`, payload: csv.payload, headers: { ...bob.auth, ...csv.headers } });
  assert.equal(imported.statusCode, 200, imported.body);
});

after(async () => {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function target(): Promise<ExportTarget> {
  const definition = await findFormDefinition(server.deps.db, formId);
  return { formId, idString: 'pooled', title: 'Pooled', formJson: definition.json };
}

/** The CSV export, written with `threads` helper threads. */
async function csv(threads: number): Promise<string> {
  const deps: AppDeps = { ...server.deps, config: { ...server.deps.config, exportThreads: threads } };
  const file = await renderExport(deps, await target(), 'csv', parseExportOptions({}, { includeReviews: false }), 'http://testserver');
  const chunks: Uint8Array[] = [];
  for await (const chunk of file.chunks) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

test('an export after another takes the helpers the first left idle, and they end once idle a while', { skip: postgres }, async () => {
  const single = await csv(0);
  assert.equal(single.split('\n').length, RECORDS + 2);
  assert.equal(await csv(THREADS), single);
  assert.equal(idleHelperThreads(), THREADS);
  assert.equal(await csv(THREADS), single);
  assert.equal(idleHelperThreads(), THREADS);
  await sleep(2_500);
  assert.equal(idleHelperThreads(), 0);
  assert.equal(await csv(THREADS), single);
});

test('an export aborted while its helpers render does not spoil the next', { skip: postgres }, async () => {
  const single = await csv(0);
  for (let round = 0; round < 3; round++) {
    const deps: AppDeps = { ...server.deps, config: { ...server.deps.config, exportThreads: THREADS } };
    const file = await renderExport(deps, await target(), 'csv', parseExportOptions({}, { includeReviews: false }), 'http://testserver');
    const chunks = file.chunks[Symbol.asyncIterator]();
    for (let taken = 0; taken < 2 + round; taken++) assert.equal((await chunks.next()).done, false);
    await chunks.return?.();
    assert.ok(idleHelperThreads() <= THREADS);
    assert.equal(await csv(THREADS), single, `after abort ${round}`);
  }
});

test('a helper whose range failed is not kept for the next export', { skip: postgres }, async () => {
  const module = csvHelperModule();
  assert.ok(module);
  const single = await csv(0);
  assert.equal(await csv(1), single);
  const kept = idleHelperThreads();
  assert.ok(kept >= 1);
  const options = parseExportOptions({}, { includeReviews: false });
  const source = await openExportSource(server.deps, await target(), options, 'http://testserver');
  const split = await source.splitPass();
  assert.ok(split);
  const missing = new URL(server.deps.config.databaseUrl ?? '');
  missing.pathname = '/gather_no_such_database';
  const setup = { databaseUrl: missing.toString(), formJson: (await target()).formJson, options, baseUrl: source.baseUrl, repeatCounts: [], osmTagKeys: [], facts: split.facts };
  const [broken] = borrowHelpers(module, setup, 1);
  assert.ok(broken);
  assert.equal(idleHelperThreads(), kept - 1, 'an idle helper was taken');
  await assert.rejects(broken.render(0, { after: 0, through: 10 }), /gather_no_such_database/);
  await returnHelpers(module, [broken]);
  assert.equal(idleHelperThreads(), kept - 1, 'the failed helper was stopped, not kept');
  assert.equal(await csv(THREADS), single);
});
