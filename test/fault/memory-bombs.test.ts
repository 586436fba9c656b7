// Fault suite, zip bombs: an .xlsx of about 2 MB whose survey sheet repeats one row until it
// inflates to 500 MB, with true sizes in its headers and with a lie (64 KB), published as a form and
// given to a record import; and one of records (the form's columns, one row repeated to 1.1 GB,
// past what an import may inflate to) given to a record import. Each is refused with a clear
// message, stores nothing, and raises the server process's peak resident memory by at most 128 MB. (test/api/zip-bombs.test.ts sends
// sheets padded with spaces, four at once.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServerStorage, type ServerProcess, type ServerStorage } from '../server-process.ts';
import { getJson, MB, megabytes, memoryRow, peakRise, postMultipart, publish, records, registerUser, runningServer, waitFor } from './harness.ts';
import { rowBomb, type RowBomb } from './row-bomb.ts';

const FIXTURES = join(import.meta.dirname, '../fixtures/imports');
const SHEET_BYTES = 500 * MB;
/** More than a record import may inflate to (1 GB): refused, not imported as millions of records. */
const DATA_SHEET_BYTES = 1100 * MB;
const BOMB_LIMIT = 128 * MB;

let storage: ServerStorage;
let server: ServerProcess | undefined;
let auth = '';
let formId = 0;
let bomb: RowBomb;
let dataBomb: RowBomb;
const rows: string[] = [];

before(async () => {
  bomb = await rowBomb(SHEET_BYTES, ['type', 'name', 'label'], ['text', 'q', 'Q']);
  dataBomb = await rowBomb(DATA_SHEET_BYTES, ['name', 'age', 'gender'], ['Bob', '10', 'male']);
  storage = await createServerStorage();
  server = await storage.start({ WORKERS: '1' });
  auth = await registerUser(server.baseUrl, 'bob');
  formId = await publish(server.baseUrl, auth, { name: 'xls_file', fileName: 'tutorial.xlsx', content: readFileSync(join(FIXTURES, 'tutorial.xlsx')) });
  // A real import first, so that what the routes load once is not counted against the bombs.
  const warm = await postMultipart(server.baseUrl, `/api/v1/forms/${formId}/import`, auth, [{ name: 'xls_file', fileName: 'good.xlsx', content: readFileSync(join(FIXTURES, 'good.xlsx')) }]);
  assert.equal(warm.status, 200, await warm.text());
});
after(async () => {
  await server?.kill();
  await storage?.remove();
  if (rows.length) console.log(rows.join('\n'));
});

const running = (): ServerProcess => runningServer(server).server;
const pid = (): number => runningServer(server).pid;

function record(input: string, answer: string, riseBytes: number): void {
  rows.push(memoryRow(BOMB_LIMIT, input, answer, riseBytes));
}

async function importBomb(source: RowBomb, variant: 'honest' | 'lying', label: string): Promise<void> {
  const content = source[variant];
  const before = (await records<{ _id: number }>(running().baseUrl, auth, formId, ['_id'])).length;
  const { result, riseBytes } = await peakRise(pid(), async () => {
    const res = await postMultipart(running().baseUrl, `/api/v1/forms/${formId}/import`, auth, [{ name: 'xls_file', fileName: 'bomb.xlsx', content }]);
    const text = await res.text();
    if (res.status !== 200) return { status: res.status, text };
    const answer = JSON.parse(text) as { task_id?: string };
    if (!answer.task_id) return { status: res.status, text };
    // A job: its outcome, polled until it ends, is the answer.
    const state = await waitFor(
      'the import job to end',
      async () => {
        // A failed job's state answers 400.
        const polled = await fetch(`${running().baseUrl}/api/v1/forms/${formId}/import?job_uuid=${answer.task_id}`, { headers: { authorization: auth } });
        const job = (await polled.json()) as { job_status?: string };
        return job.job_status === 'SUCCESS' || job.job_status === 'FAILURE' ? job : undefined;
      },
      240_000,
    );
    return { status: state.job_status === 'FAILURE' ? 400 : 200, text: JSON.stringify(state) };
  });
  record(`${label} (${variant} sizes), POST /api/v1/forms/{pk}/import`, `${result.status} ${result.text.slice(0, 160)}`, riseBytes);
  assert.equal(result.status, 400, result.text);
  assert.doesNotMatch(result.text, /Invalid string length/);
  assert.ok(riseBytes <= BOMB_LIMIT, `the peak rose by ${megabytes(riseBytes)}`);
  assert.equal((await records<{ _id: number }>(running().baseUrl, auth, formId, ['_id'])).length, before, 'no record was imported');
}

for (const variant of ['honest', 'lying'] as const) {
  test(`a ${variant} row bomb published as a form is refused within 128 MB`, { timeout: 300_000 }, async () => {
    const content = bomb[variant];
    assert.ok(content.length < 4 * MB, `the bomb is ${megabytes(content.length)}`);
    const { result, riseBytes } = await peakRise(pid(), async () => {
      const res = await postMultipart(running().baseUrl, '/api/v1/forms', auth, [{ name: 'xls_file', fileName: 'bomb.xlsx', content }]);
      return { status: res.status, text: await res.text() };
    });
    record(`${megabytes(content.length)} .xlsx (${variant} sizes) inflating to ${megabytes(bomb.inflatedBytes)}, POST /api/v1/forms`, `${result.status} ${result.text.slice(0, 160)}`, riseBytes);
    assert.equal(result.status, 400, result.text);
    assert.ok(riseBytes <= BOMB_LIMIT, `the peak rose by ${megabytes(riseBytes)}`);
    const forms = await getJson<unknown[]>(running().baseUrl, '/api/v1/forms', auth);
    assert.equal(forms.length, 1, 'no form was published');
  });

  test(`a ${variant} row bomb given to a record import is refused within 128 MB`, { timeout: 300_000 }, async () => {
    await importBomb(bomb, variant, 'the same');
  });

  test(`a ${variant} bomb of records given to a record import is refused within 128 MB`, { timeout: 300_000 }, async () => {
    await importBomb(dataBomb, variant, `${megabytes(dataBomb[variant].length)} .xlsx of records inflating to ${megabytes(dataBomb.inflatedBytes)}`);
  });
}
