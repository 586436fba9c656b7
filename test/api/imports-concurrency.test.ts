// On PGlite (one session) an import's rows are published a batch per transaction, with a turn of
// the event loop between batches: other requests are answered while it runs, instead of waiting
// for one transaction that applied the whole file. The import still ends with every row stored.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUser, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { findFormDefinition, findLiveForm } from '../../src/modules/forms/repository.ts';
import { readRows, stageImport, type ImportTarget } from '../../src/modules/imports/pipeline.ts';
import { beginPublish, finishPublish } from '../../src/modules/imports/publish.ts';

const FIXTURES = join(import.meta.dirname, '../fixtures/imports');
const ROWS = 3000;
const onPostgres = process.env['DATABASE_URL'] !== undefined;

let server: TestServer;
let bob: TestUser;
let dir: string;
before(async () => {
  // No cached token look-ups: every request below needs the database.
  server = await startTestServer({ AUTH_CACHE_MS: '0' });
  bob = await createUser(server.app, 'bob');
  dir = mkdtempSync(join(tmpdir(), 'gather-import-test-'));
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

test('requests are answered while an import is being published, and the import ends whole', { skip: onPostgres && 'PGlite publishes in batches' }, async () => {
  const formId = await publishForm(server.app, bob, { name: 'xls_file', fileName: 'tutorial.xlsx', content: readFileSync(join(FIXTURES, 'tutorial.xlsx')) });
  const [header = '', ...lines] = readFileSync(join(FIXTURES, 'good.csv'), 'utf8').trim().split('\n');
  const columns = header.split(',');
  const blank = new Set([columns.indexOf('_uuid'), columns.indexOf('meta/instanceID')]);
  const body = Array.from({ length: ROWS }, (_, i) => (lines[i % lines.length] ?? '').split(',').map((v, c) => (blank.has(c) ? '' : v)).join(','));
  const path = join(dir, 'big.csv');
  writeFileSync(path, `${header}\n${body.join('\n')}\n`);

  const { db } = server.deps;
  const form = await findLiveForm(db, formId);
  assert.ok(form);
  const target: ImportTarget = {
    importId: 'concurrency-test',
    form: { id: form.id, id_string: form.id_string, version: form.version, uuid: form.uuid },
    formJson: (await findFormDefinition(db, form.id)).json,
    actorId: bob.id,
    overwrite: false,
    maxInstanceBytes: 10_000_000,
  };
  const staged = await stageImport(db, target, readRows('csv', path));
  await beginPublish(db, target, staged, new Date());

  let publishing = true;
  let answeredDuring = 0;
  const publish = finishPublish(db, target.importId).finally(() => {
    publishing = false;
  });
  while (publishing) {
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/user', headers: bob.auth });
    assert.equal(res.statusCode, 200);
    if (publishing) answeredDuring++;
    // A client polling, not a loop of microtasks that would leave no turn to anything else.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const summary = await publish;
  assert.equal(summary?.additions, ROWS);
  assert.ok(answeredDuring > 0, 'a request was answered while the import was being published');
  const count = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?fields=${encodeURIComponent('["_id"]')}`, headers: bob.auth });
  assert.equal(count.json<unknown[]>().length, ROWS);
});
