// Export job progress, observed over HTTP while the job runs: the job is claimed and run by the
// real worker code, and each time it reports progress the test polls export_async?job_uuid.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as XLSX from '@e965/xlsx';
import { createUser, multipart, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { csvForm, formFile } from '../fixtures/forms.ts';
import { JobRegistry, runOneJob } from '../../src/jobs/worker.ts';
import { silentJobLog } from '../../src/jobs/log.ts';
import { EXPORT_JOB, runExportJob } from '../../src/modules/exports/jobs.ts';

const RECORDS = 2_345;

let server: TestServer;
let dataDir: string;
let bob: TestUser;
let formId: number;
/** Serves a report template with two record blocks (two passes over the records). */
let templates: Server;
let templateUrl: string;

function reportTemplate(): Buffer {
  const book = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([['Name', 'Age'], ['{{name}}', '{{age}}']]), 'People');
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([['{{#records}}'], ['Record', '{{_id}}'], ['{{/records}}']]), 'Ids');
  return XLSX.write(book, { type: 'buffer', bookType: 'xlsx' }) as Buffer;
}

before(async () => {
  const template = reportTemplate();
  templates = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(template));
  await new Promise<void>((resolve) => templates.listen(0, '127.0.0.1', resolve));
  templateUrl = `http://127.0.0.1:${(templates.address() as AddressInfo).port}/report.xlsx`;
  dataDir = mkdtempSync(join(tmpdir(), 'gather-export-progress-'));
  server = await startTestServer({ DATA_DIR: dataDir, ALLOW_PRIVATE_URLS: 'true' });
  bob = await createUser(server.app, 'bob');
  formId = await publishForm(server.app, bob, formFile(csvForm({ id: 'progress' }), 'progress.csv'));
  const rows = Array.from({ length: RECORDS }, (_, i) => `Name ${i},${i % 90}`);
  const body = multipart({}, [{ name: 'csv_file', fileName: 'records.csv', content: `name,age\n${rows.join('\n')}\n`, contentType: 'text/csv' }]);
  const imported = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/csv_import`, payload: body.payload, headers: { ...bob.auth, ...body.headers } });
  assert.equal(imported.statusCode, 200, imported.body);
  assert.equal(imported.json().additions, RECORDS);
});
after(async () => {
  await server.close();
  await new Promise((resolve) => templates.close(resolve));
  rmSync(dataDir, { recursive: true, force: true });
});

/** Runs the queued export job, polling its status each time it reports progress. */
async function runObserved(jobUuid: string): Promise<unknown[]> {
  const seen: unknown[] = [];
  const registry = new JobRegistry();
  registry.register(EXPORT_JOB, (job, payload: Parameters<typeof runExportJob>[1]) =>
    runExportJob(
      {
        ...job,
        reportProgress: async (current, total) => {
          await job.reportProgress(current, total);
          const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/export_async?job_uuid=${jobUuid}`, headers: bob.auth });
          assert.equal(res.statusCode, 202, res.body);
          seen.push(res.json());
        },
      },
      payload,
    ),
  );
  assert.equal(await runOneJob(server.deps, registry, { log: silentJobLog }), true);
  return seen;
}

describe('export job progress', () => {
  for (const format of ['csv', 'xlsx'] as const) {
    test(`a ${format} export job reports the records written every 1,000 and the total; pollers see it while it runs`, async () => {
      const started = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/export_async?format=${format}`, headers: bob.auth });
      assert.equal(started.statusCode, 202, started.body);
      const jobUuid = String(started.json().job_uuid);
      const queued = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/export_async?job_uuid=${jobUuid}`, headers: bob.auth });
      assert.deepEqual(queued.json(), { job_status: 'PENDING' }, 'no progress before the job runs');

      const seen = await runObserved(jobUuid);
      // The first report is written at once; the next comes within the second and is held back
      // (progress is written at most once a second), so the poll after it may still read 1,000.
      assert.deepEqual(seen[0], { job_status: 'PENDING', progress: 1000, total: RECORDS });
      assert.equal(seen.length, 2);
      const second = seen[1] as { job_status: string; progress: number; total: number };
      assert.equal(second.job_status, 'PENDING');
      assert.ok(second.progress === 1000 || second.progress === 2000, JSON.stringify(second));
      assert.equal(second.total, RECORDS);

      const done = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/export_async?job_uuid=${jobUuid}`, headers: bob.auth });
      assert.equal(done.json().job_status, 'SUCCESS');
    });
  }

  test('a custom report job reports its records over all of its template\'s blocks (two blocks: two passes, one total)', async () => {
    const started = await server.app.inject({
      method: 'GET',
      url: `/api/v1/forms/${formId}/export_async?format=xls&token=${encodeURIComponent(templateUrl)}`,
      headers: bob.auth,
    });
    assert.equal(started.statusCode, 202, started.body);
    const jobUuid = String(started.json().job_uuid);
    const seen = (await runObserved(jobUuid)) as Array<{ job_status: string; progress: number; total: number }>;
    // 2 × 2,345 records read over two passes: the progress counts 2,345 records once.
    assert.deepEqual(seen[0], { job_status: 'PENDING', progress: 1000, total: RECORDS });
    assert.ok(seen.length >= 1 && seen.length <= 2, JSON.stringify(seen));
    for (const poll of seen) {
      assert.equal(poll.total, RECORDS);
      assert.ok(poll.progress <= RECORDS);
    }
    const done = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/export_async?job_uuid=${jobUuid}`, headers: bob.auth });
    assert.equal(done.json().job_status, 'SUCCESS', done.body);
  });
});
