// Flat exports size their repeat columns from the item counts stored with each record
// (repeat_counts, src/lib/writers/layout/repeat-counts.ts). Every way a record is written keeps
// them (an XML submission, an edit, a CSV import); the SQL that counts records stored before the
// column existed gives the same counts; and the columns follow the data as it is now (an edit
// that drops items shrinks them).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createUser, multipart, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { enqueueJob, findJobByUuid } from '../../src/jobs/queue.ts';
import { buildJobRegistry } from '../../src/compose.ts';
import { silentJobLog } from '../../src/jobs/log.ts';
import { runOneJob } from '../../src/jobs/worker.ts';
import { COUNT_STORED_REPEATS_JOB } from '../../src/modules/submissions/repeat-counts-job.ts';

// pyxform's CSV layout: a repeat of kids, each with a group and a repeat of shots inside.
const FORM = [
  'survey,,,',
  ',type,name,label',
  ',text,village,Village',
  ',begin repeat,kids,Kids',
  ',text,kid_name,Name',
  ',begin group,health,Health',
  ',begin repeat,shots,Shots',
  ',text,shot,Shot',
  ',end repeat,,',
  ',end group,,',
  ',end repeat,,',
  '',
].join('\n');

let server: TestServer;
let bob: TestUser;
let formId: number;

/** A submission to the form `id`: one kid per entry of `kids`, each with that many shots. */
function instance(uuid: string, kids: number[], deprecated?: string, id = 'counts'): string {
  const items = kids
    .map((shots, k) => {
      const shotXml = Array.from({ length: shots }, (_, s) => `<shots><shot>k${k + 1}s${s + 1}</shot></shots>`).join('');
      return `<kids><kid_name>kid ${k + 1}</kid_name><health>${shotXml}</health></kids>`;
    })
    .join('');
  const meta = `<meta><instanceID>uuid:${uuid}</instanceID>${deprecated ? `<deprecatedID>uuid:${deprecated}</deprecatedID>` : ''}</meta>`;
  return `<counts id="${id}"><village>V</village>${items}${meta}</counts>`;
}

async function submit(xml: string): Promise<void> {
  const res = await postSubmission(server.app, `/${bob.username}/submission`, xml, bob.auth);
  assert.ok(res.statusCode === 201, res.body);
}

async function csv(form = formId): Promise<string> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${form}.csv`, headers: bob.auth });
  assert.equal(res.statusCode, 200, res.body);
  return res.body;
}

/** How many blocks each repeat got: `kids` and `kids[n]/health/shots` by n. */
function blocks(header: string): Record<string, number> {
  const found: Record<string, number> = {};
  for (const name of header.split(',')) {
    const kid = /^kids\[(\d+)\]\/kid_name$/.exec(name);
    if (kid) found['kids'] = Math.max(found['kids'] ?? 0, Number(kid[1]));
    const shot = /^kids\[(\d+)\]\/health\/shots\[(\d+)\]\/shot$/.exec(name);
    if (shot) found[`shots of kid ${shot[1]}`] = Math.max(found[`shots of kid ${shot[1]}`] ?? 0, Number(shot[2]));
  }
  return found;
}

/** The form published as `id` (its file's name), with three submissions and an imported record. */
async function publishWithRecords(id: string): Promise<number> {
  const form = await publishForm(server.app, bob, formFile(FORM, `${id}.csv`));
  await submit(instance('00000000-0000-4000-8000-000000000001', [1, 3], undefined, id));
  await submit(instance('00000000-0000-4000-8000-000000000002', [], undefined, id));
  await submit(instance('00000000-0000-4000-8000-000000000003', [2, 0, 1], undefined, id));
  // A CSV import writes its records through its own builder (src/lib/import-rows/row-builder.ts).
  const rows = 'village,kids[1]/kid_name,kids[1]/health/shots[1]/shot,kids[1]/health/shots[2]/shot,kids[2]/kid_name\nW,a,x,y,b\n';
  const file = multipart({}, [{ name: 'csv_file', fileName: 'rows.csv', content: rows, contentType: 'text/csv' }]);
  const imported = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${form}/csv_import`, payload: file.payload, headers: { ...bob.auth, ...file.headers } });
  assert.equal(imported.statusCode, 200, imported.body);
  assert.equal(imported.json().additions, 1);
  return form;
}

before(async () => {
  server = await startTestServer({ IMPORT_ASYNC_THRESHOLD: '100000000' });
  bob = await createUser(server.app, 'bob');
  formId = await publishWithRecords('counts');
});

after(async () => {
  await server.close();
});

test('every record keeps its repeat counts, equal to what the SQL for older records counts', async () => {
  const rows = await sql<{ kept: unknown; counted: unknown }>`SELECT repeat_counts AS kept, gather_repeat_counts(json) AS counted
    FROM instances WHERE form_id = ${formId} ORDER BY id`.execute(server.deps.db);
  assert.deepEqual(rows.rows.map((r) => r.kept), [
    { kids: 2, 'kids/health/shots 1': 1, 'kids/health/shots 2': 3 },
    {},
    { kids: 3, 'kids/health/shots 1': 2, 'kids/health/shots 3': 1 },
    { kids: 2, 'kids/health/shots 1': 2 },
  ]);
  for (const row of rows.rows) assert.deepEqual(row.counted, row.kept);
});

test('the CSV has as many blocks as the most items at each position', async () => {
  const body = await csv();
  assert.deepEqual(blocks(body.split('\n')[0] ?? ''), { kids: 3, 'shots of kid 1': 2, 'shots of kid 2': 3, 'shots of kid 3': 1 });
});

test('records stored before the counts were kept export the same file', async () => {
  const before = await csv();
  await sql`UPDATE instances SET repeat_counts = NULL WHERE form_id = ${formId}`.execute(server.deps.db);
  try {
    assert.equal(await csv(), before);
  } finally {
    await sql`UPDATE instances SET repeat_counts = gather_repeat_counts(json) WHERE form_id = ${formId}`.execute(server.deps.db);
  }
});

test('the background job stores the counts of records stored without them, as the server would have', async () => {
  const kept = async () => (await sql<{ c: unknown }>`SELECT repeat_counts AS c FROM instances WHERE form_id = ${formId} ORDER BY id`.execute(server.deps.db)).rows.map((r) => r.c);
  const expected = await kept();
  await sql`UPDATE instances SET repeat_counts = NULL WHERE form_id = ${formId}`.execute(server.deps.db);
  const job = await enqueueJob(server.deps.db, { type: COUNT_STORED_REPEATS_JOB, payload: null });
  assert.equal(await runOneJob(server.deps, buildJobRegistry(), { log: silentJobLog }), true);
  const done = await findJobByUuid(server.deps.db, job.uuid);
  assert.equal(done?.status, 'SUCCESS');
  assert.deepEqual(done?.result, { counted: expected.length });
  assert.deepEqual(await kept(), expected);
});

test('an edit that drops items shrinks the columns to the data as it is now', async () => {
  // A copy of the records of its own: the edit would change what the other tests count.
  const edited = await publishWithRecords('counts_edited');
  await submit(instance('00000000-0000-4000-8000-000000000012', [1, 1], '00000000-0000-4000-8000-000000000001', 'counts_edited'));
  const body = await csv(edited);
  assert.deepEqual(blocks(body.split('\n')[0] ?? ''), { kids: 3, 'shots of kid 1': 2, 'shots of kid 2': 1, 'shots of kid 3': 1 });
});
