// Google Sheets exports against a local stand-in for Google's OAuth and Sheets endpoints (this
// machine cannot reach Google): the authorization step, the stored credential, its refresh, and
// the spreadsheet the job writes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { basic, createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';
import { runOneJob } from '../../src/jobs/worker.ts';
import { buildJobRegistry } from '../../src/compose.ts';

interface Received {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

/** Google's token endpoint and Sheets API, as far as the exports use them. */
class GoogleStandIn {
  readonly received: Received[] = [];
  private server: Server | undefined;
  base = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        this.received.push({ method: request.method ?? '', url: request.url ?? '', authorization: request.headers.authorization, body });
        const reply = (status: number, json: unknown): void => {
          response.writeHead(status, { 'content-type': 'application/json' });
          response.end(JSON.stringify(json));
        };
        if (request.url === '/token') {
          const form = new URLSearchParams(body);
          if (form.get('grant_type') === 'authorization_code' && form.get('code') === 'good-code') return reply(200, { access_token: 'access-1', refresh_token: 'refresh-1', expires_in: 3600, token_type: 'Bearer' });
          if (form.get('grant_type') === 'refresh_token' && form.get('refresh_token') === 'refresh-1') return reply(200, { access_token: 'access-2', expires_in: 3600, token_type: 'Bearer' });
          return reply(400, { error: 'invalid_grant' });
        }
        if (request.url === '/v4/spreadsheets') return reply(200, { spreadsheetId: 'sheet-1', spreadsheetUrl: 'https://docs.example.org/spreadsheets/d/sheet-1/edit' });
        if (request.url?.startsWith('/v4/spreadsheets/sheet-1/values/')) return reply(200, { spreadsheetId: 'sheet-1', updates: {} });
        return reply(404, { error: 'not found' });
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }

  take(): Received[] {
    return this.received.splice(0);
  }
}

const registry = buildJobRegistry();
const google = new GoogleStandIn();
let server: TestServer;
let dataDir: string;

async function submit(user: TestUser, name: string): Promise<void> {
  const body = multipart({}, [{ name: 'xml_submission_file', fileName: 's.xml', content: householdXml({ uuid: randomUUID(), name }), contentType: 'text/xml' }]);
  const res = await server.app.inject({ method: 'POST', url: `/${user.username}/submission`, payload: body.payload, headers: { authorization: basic(user.username, user.password), ...body.headers } });
  assert.equal(res.statusCode, 201, res.body);
}

const get = (url: string, user: TestUser) => server.app.inject({ method: 'GET', url, headers: user.auth });

/**
 * An account of its own to each test, since the Google authorization is stored per account (and
 * one test lets its token expire), with the household form and the records of Bob and Jane.
 */
async function accountWithForm(username: string): Promise<{ user: TestUser; formId: number }> {
  const user = await createUser(server.app, username);
  const body = multipart({}, [formFile(HOUSEHOLD_CSV, 'household.csv')]);
  const res = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: body.payload, headers: { ...user.auth, ...body.headers } });
  assert.equal(res.statusCode, 201, res.body);
  await submit(user, 'Bob');
  await submit(user, 'Jane');
  return { user, formId: Number(res.json().formid) };
}

/** Stores the user's Google authorization (access-1, refresh-1), leaving no request behind in the stand-in. */
async function authorize(user: TestUser): Promise<void> {
  const res = await get('/api/v1/export/google_auth?code=good-code', user);
  assert.equal(res.statusCode, 201, res.body);
  google.take();
}

async function runJobs(): Promise<void> {
  while (await runOneJob(server.deps, registry, { log: () => {} })) {
    // until the queue is empty
  }
}

before(async () => {
  await google.start();
  dataDir = mkdtempSync(join(tmpdir(), 'gather-export-gsheets-'));
  server = await startTestServer({
    DATA_DIR: dataDir,
    GOOGLE_CLIENT_ID: 'client-1.apps.example',
    GOOGLE_CLIENT_SECRET: 'secret-1',
    GOOGLE_AUTHORIZE_URL: `${google.base}/auth`,
    GOOGLE_TOKEN_URL: `${google.base}/token`,
    GOOGLE_SHEETS_API_URL: google.base,
  });
});
after(async () => {
  await server.close();
  await google.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('Google Sheets exports', () => {
  test('without a stored authorization: 403 with the consent address and details', async () => {
    const { user, formId } = await accountWithForm('nina');
    const res = await get(`/api/v1/forms/${formId}/export_async?format=gsheets&redirect_uri=${encodeURIComponent('https://client.example.org/done')}`, user);
    assert.equal(res.statusCode, 403);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['url', 'details']);
    assert.equal(body.details, 'Google authorization needed');
    const url = new URL(body.url);
    assert.equal(`${url.origin}${url.pathname}`, `${google.base}/auth`);
    assert.equal(url.searchParams.get('client_id'), 'client-1.apps.example');
    assert.equal(url.searchParams.get('redirect_uri'), 'https://client.example.org/done');
    assert.equal(url.searchParams.get('response_type'), 'code');
    assert.equal(url.searchParams.get('access_type'), 'offline');
    assert.match(url.searchParams.get('scope') ?? '', /spreadsheets/);
    assert.deepEqual(google.take(), []);
  });

  test('google_auth: a refused code is a 400; a good one is exchanged and stored (201)', async () => {
    const gail = await createUser(server.app, 'gail');
    assert.equal((await get('/api/v1/export/google_auth', gail)).statusCode, 400);
    const bad = await get('/api/v1/export/google_auth?code=bad-code', gail);
    assert.equal(bad.statusCode, 400);
    const good = await get('/api/v1/export/google_auth?code=good-code', gail);
    assert.equal(good.statusCode, 201, good.body);
    const [, exchange] = google.take();
    assert.equal(exchange?.url, '/token');
    assert.deepEqual(Object.fromEntries(new URLSearchParams(exchange?.body)), {
      client_id: 'client-1.apps.example',
      client_secret: 'secret-1',
      grant_type: 'authorization_code',
      code: 'good-code',
      redirect_uri: 'http://testserver/api/v1/export/google_auth',
    });
    const stored = await server.deps.db.selectFrom('spreadsheet_credentials').select('sealed').where('user_id', '=', gail.id).executeTakeFirstOrThrow();
    assert.doesNotMatch(stored.sealed, /access-1|refresh-1/);
  });

  test('the job creates a spreadsheet with a sheet per section and appends header and rows', async () => {
    const { user, formId } = await accountWithForm('hugo');
    await authorize(user);
    const start = await get(`/api/v1/forms/${formId}/export_async?format=gsheets`, user);
    assert.equal(start.statusCode, 202, start.body);
    await runJobs();
    const done = await get(`/api/v1/forms/${formId}/export_async?job_uuid=${start.json().job_uuid}`, user);
    assert.deepEqual(done.json(), { job_status: 'SUCCESS', export_url: 'https://docs.example.org/spreadsheets/d/sheet-1/edit' });

    const [create, ...appends] = google.take();
    assert.equal(create?.url, '/v4/spreadsheets');
    assert.equal(create?.authorization, 'Bearer access-1');
    const spreadsheet = JSON.parse(create?.body ?? '{}');
    assert.equal(spreadsheet.properties.title, 'Household');
    assert.deepEqual(
      spreadsheet.sheets.map((s: { properties: { title: string } }) => s.properties.title),
      ['household', 'children'],
    );
    assert.equal(appends.length, 2);
    const [main, children] = appends;
    assert.equal(main?.url, `/v4/spreadsheets/sheet-1/values/${encodeURIComponent("'household'!A1")}:append?valueInputOption=RAW&insertDataOption=INSERT_ROWS`);
    const mainRows: unknown[][] = JSON.parse(main?.body ?? '{}').values;
    assert.deepEqual(mainRows[0]?.slice(0, 3), ['name', 'age', 'address/village']);
    assert.equal(mainRows.length, 3);
    assert.deepEqual([mainRows[1]?.[0], mainRows[1]?.[1], mainRows[2]?.[0]], ['Bob', 25, 'Jane']);
    assert.equal(spreadsheet.sheets[0].properties.gridProperties.columnCount, mainRows[0]?.length);
    const childRows: unknown[][] = JSON.parse(children?.body ?? '{}').values;
    assert.deepEqual(childRows[0]?.slice(0, 2), ['children/childs_name', 'children/childs_age']);
    assert.deepEqual(childRows.slice(1).map((r) => r.slice(0, 2)), [['Tom', 12], ['Dick', 5], ['Tom', 12], ['Dick', 5]]);

    const listed = (await get(`/api/v1/export?xform=${formId}`, user)).json() as Array<Record<string, unknown>>;
    const record = listed.find((e) => e['type'] === 'gsheets');
    assert.equal(record?.['export_url'], 'https://docs.example.org/spreadsheets/d/sheet-1/edit');
    const download = await get(`/api/v1/export/${String(record?.['id'])}`, user);
    assert.equal(download.statusCode, 302);
    assert.equal(download.headers.location, 'https://docs.example.org/spreadsheets/d/sheet-1/edit');
  });

  test('an expired access token is refreshed with the stored refresh token', async () => {
    const { user, formId } = await accountWithForm('ivy');
    await authorize(user);
    server.clock.advance(2 * 3600);
    await submit(user, 'Later');
    const start = await get(`/api/v1/forms/${formId}/export_async?format=gsheets`, user);
    assert.equal(start.statusCode, 202, start.body);
    await runJobs();
    assert.equal((await get(`/api/v1/forms/${formId}/export_async?job_uuid=${start.json().job_uuid}`, user)).json().job_status, 'SUCCESS');
    const [refresh, create] = google.take();
    assert.equal(refresh?.url, '/token');
    assert.equal(new URLSearchParams(refresh?.body).get('grant_type'), 'refresh_token');
    assert.equal(new URLSearchParams(refresh?.body).get('refresh_token'), 'refresh-1');
    assert.equal(create?.authorization, 'Bearer access-2');
  });
});

describe('Google Sheets not configured', () => {
  test('gsheets is then an unsupported format', async () => {
    const plain = await startTestServer({ DATA_DIR: dataDir });
    try {
      const user = await createUser(plain.app, 'carol');
      const body = multipart({}, [formFile(HOUSEHOLD_CSV, 'household.csv')]);
      const published = await plain.app.inject({ method: 'POST', url: '/api/v1/forms', payload: body.payload, headers: { ...user.auth, ...body.headers } });
      const res = await plain.app.inject({ method: 'GET', url: `/api/v1/forms/${published.json().formid}/export_async?format=gsheets`, headers: user.auth });
      assert.equal(res.statusCode, 403);
      assert.deepEqual(res.json(), { details: 'Export format not supported' });
    } finally {
      await plain.close();
    }
  });
});
