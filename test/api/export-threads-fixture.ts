// The setup both export-threads test files share: a server whose exports of 1,000 records or more
// take two helper threads (on PostgreSQL), and a form holding rows imported from a CSV, five of
// them deleted, so that ranges meet deleted records at their start, middle and end.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';

export interface ThreadedExportForm {
  server: TestServer;
  dataDir: string;
  bob: TestUser;
  formId: number;
  close(): Promise<void>;
}

/** Indexes of the imported rows deleted before the tests. */
const DELETED = [0, 700, 1499, 1500, 2599];

export async function threadedExportForm(name: string, form: string, rowsCsv: string, records: number): Promise<ThreadedExportForm> {
  const dataDir = mkdtempSync(join(tmpdir(), `gather-${name}-`));
  const server = await startTestServer({ DATA_DIR: dataDir, IMPORT_ASYNC_THRESHOLD: '100000000', EXPORT_THREADS: '2', EXPORT_THREAD_MIN_RECORDS: '1000' });
  const bob = await createUser(server.app, 'bob');
  const upload = multipart({}, [formFile(form, `${name}.csv`)]);
  const published = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: upload.payload, headers: { ...bob.auth, ...upload.headers } });
  assert.equal(published.statusCode, 201, published.body);
  const formId = Number(published.json().formid);
  const csv = multipart({}, [{ name: 'csv_file', fileName: 'rows.csv', content: rowsCsv, contentType: 'text/csv' }]);
  const imported = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/csv_import`, payload: csv.payload, headers: { ...bob.auth, ...csv.headers } });
  assert.equal(imported.statusCode, 200, imported.body);
  assert.equal(imported.json().additions, records);
  const ids = (await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?fields=${encodeURIComponent('["_id"]')}`, headers: bob.auth })).json<Array<{ _id: number }>>();
  for (const index of DELETED) {
    const res = await server.app.inject({ method: 'DELETE', url: `/api/v1/data/${formId}/${ids[index]?._id}`, headers: bob.auth });
    assert.equal(res.statusCode, 204, res.body);
  }
  return {
    server,
    dataDir,
    bob,
    formId,
    close: async () => {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
