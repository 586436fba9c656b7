// `npm run bench -- web-app [records] [--fresh]`: the web app in headless Chromium on localhost,
// against `records` (default 100,000) submissions of the bench form on PostgreSQL. It prints the
// time from clicking "Sign in" to a usable projects page, the time from navigation to the first
// rows of the data table (the first visit, whose ids the server must list, and warm ones), and the
// compressed JavaScript and CSS bytes of the first load (the sign-in page) and of the data page.
// Targets (issue 20): rows visible ≤ 1 s after navigation; first-load JavaScript ≤ 400 kB compressed.
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { chromium, type Page } from 'playwright-core';
import { fetch as undiciFetch, Pool } from 'undici';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/browser/chromium.ts';
import { POSTGRES_SERVER, postgresAvailable, printTable, startServer } from './_server.ts';
import { benchInstance, submissionBody, keptBenchForm } from './_instances.ts';
import { loadAverage } from './_proc.ts';

const DATABASE = 'gather_bench_webapp';
const USER = 'benchuser';
const PASSWORD = `Bench-${USER}-pw-42`;
const auth = { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` };

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_SERVER });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A copy of the briefcase bench's loaded database, when there is one: seeding 100,000 records takes minutes. */
async function copyLoadedDatabase(fresh: boolean): Promise<boolean> {
  return admin(async (client) => {
    if (fresh) await client.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
    if ((await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE])).rowCount) return false;
    if (!(await client.query("SELECT 1 FROM pg_database WHERE datname = 'gather_bench_briefcase'")).rowCount) return false;
    try {
      await client.query(`CREATE DATABASE ${DATABASE} TEMPLATE gather_bench_briefcase`);
      return true;
    } catch {
      // In use by a running bench: seed through /submission instead.
      return false;
    }
  });
}


async function seed(baseUrl: string, from: number, to: number): Promise<void> {
  const pool = new Pool(baseUrl, { connections: 16 });
  let next = from;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < to) {
        const { body, contentType } = submissionBody(benchInstance(next++));
        const res = await pool.request({ method: 'POST', path: `/${USER}/submission`, headers: { 'content-type': contentType, ...auth }, body });
        await res.body.dump();
        if (res.statusCode !== 201) throw new Error(`submission failed: ${res.statusCode}`);
      }
    }),
  );
  await pool.close();
}

interface Transfer {
  js: number;
  css: number;
}

/** Gzipped bytes of the scripts and styles a page load fetched (a fresh browser: nothing cached). */
function recordTransfers(page: Page): { done: () => Promise<Transfer> } {
  const pending: Array<Promise<void>> = [];
  const total: Transfer = { js: 0, css: 0 };
  page.on('requestfinished', (request) => {
    const url = request.url();
    const kind = url.endsWith('.js') ? 'js' : url.endsWith('.css') ? 'css' : undefined;
    if (!kind) return;
    // The server sends assets gzipped (src/http/web-app.ts); the bytes on the wire are the body gzipped.
    pending.push(request.response().then(async (response) => void (total[kind] += response ? gzipSync(await response.body()).length : 0)));
  });
  return { done: async () => (await Promise.all(pending), total) };
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

export async function main(args: string[]): Promise<void> {
  const records = Number(args.find((a) => /^\d+$/.test(a)) ?? 100_000);
  if (!(await postgresAvailable())) {
    console.log('web-app: PostgreSQL is not reachable; this benchmark needs it');
    return;
  }
  const copied = await copyLoadedDatabase(args.includes('--fresh'));
  // The copied database's tokens are sealed under the briefcase bench's key; only Basic is used here.
  const server = await startServer('postgres', 19_190, { WORKERS: '0', SECRET_KEY: 'gather-bench-gather_bench_briefcase' }, [], { keepDatabase: DATABASE });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const registered = await undiciFetch(`${server.baseUrl}/api/v1/profiles`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: USER, first_name: 'Bench', email: `${USER}@example.org`, password: PASSWORD }),
    });
    await registered.body?.cancel();
    const kept = await keptBenchForm(server.baseUrl, auth.authorization);
    const formId = kept.formId;
    const form = { num_of_submissions: kept.stored, project: kept.project };
    if (form.num_of_submissions < records) {
      const started = performance.now();
      await seed(server.baseUrl, form.num_of_submissions, records);
      console.log(`seeded ${(records - form.num_of_submissions).toLocaleString()} records through /submission in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    } else if (copied) {
      console.log('copied the briefcase bench database (its records are the same bench form)');
    }
    const total = Math.max(records, form.num_of_submissions);
    const projectId = Number(/projects\/(\d+)/.exec(form.project)?.[1]);
    const dataPath = `/projects/${projectId}/forms/${formId}/data`;

    // A fresh browser: the sign-in page's first load, then signing in to the projects page.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const firstLoad = recordTransfers(page);
    await page.goto(`${server.baseUrl}/login`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const signInBytes = await firstLoad.done();
    await page.getByRole('textbox', { name: 'Username or e-mail' }).fill(USER);
    await page.getByLabel('Password').fill(PASSWORD);
    const signInStart = performance.now();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('table', { name: 'My projects' }).getByRole('row').nth(1).waitFor();
    const signInMs = performance.now() - signInStart;

    // The data table: navigation to its first rows, the first time (the server lists the form's
    // ids) and then again with a fresh page load each time.
    const rowsMs: number[] = [];
    for (let i = 0; i < 6; i++) {
      const t0 = performance.now();
      await page.goto(`${server.baseUrl}${dataPath}`);
      await page.locator('tbody tr').first().waitFor();
      rowsMs.push(performance.now() - t0);
    }
    const shown = await page.getByRole('status').filter({ hasText: /Records \d/ }).textContent();
    // Next page and a sort by an answer (a new id list), measured from the click.
    let t0 = performance.now();
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByRole('status').filter({ hasText: /Records 101–/ }).waitFor();
    const nextMs = performance.now() - t0;
    t0 = performance.now();
    await page.locator('thead button.sort').nth(2).click();
    await page.locator('th[aria-sort="ascending"]').waitFor();
    await page.getByRole('status').filter({ hasText: /Records 1–/ }).waitFor();
    const sortMs = performance.now() - t0;
    await context.close();

    // The data page opened directly in a fresh browser: everything it loads.
    const direct = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const directPage = await direct.newPage();
    await directPage.goto(`${server.baseUrl}/login?next=${encodeURIComponent(dataPath)}`);
    await directPage.getByRole('textbox', { name: 'Username or e-mail' }).fill(USER);
    await directPage.getByLabel('Password').fill(PASSWORD);
    const dataLoad = recordTransfers(directPage);
    await directPage.getByRole('button', { name: 'Sign in' }).click();
    await directPage.locator('tbody tr').first().waitFor();
    const dataBytes = await dataLoad.done();
    await direct.close();

    const kb = (n: number): string => (n / 1024).toFixed(1);
    console.log(`web-app: ${total.toLocaleString()} records on PostgreSQL; ${shown?.trim()}; load average ${loadAverage()}`);
    printTable(
      ['measure', 'value'],
      [
        ['sign-in click → projects table (ms)', signInMs.toFixed(0)],
        ['data table: navigation → first rows, first visit (ms)', (rowsMs[0] ?? NaN).toFixed(0)],
        ['data table: navigation → first rows, median of next 5 (ms)', median(rowsMs.slice(1)).toFixed(0)],
        ['data table: next page click → rows (ms)', nextMs.toFixed(0)],
        ['data table: sort by an answer → rows (ms)', sortMs.toFixed(0)],
        ['first load (sign-in page) JS, compressed (kB)', kb(signInBytes.js)],
        ['first load (sign-in page) CSS, compressed (kB)', kb(signInBytes.css)],
        ['data page after sign-in, JS added (kB)', kb(dataBytes.js)],
        ['data page after sign-in, CSS added (kB)', kb(dataBytes.css)],
      ],
    );
  } finally {
    await browser.close();
    await server.stop();
  }
}
