// `npm run bench -- web-forms [runs]`: the web forms in headless Chromium on localhost (the
// embedded database). For a 30-question form and for the largest corpus form ODK Web Forms
// accepts, it prints the time from navigation to an answerable first question and the bytes the
// load took from the network, on a first visit (nothing cached) and on a second one (the service
// worker's cache), as medians over `runs` fresh browsers (default 5).
// Targets (issue 19): first question answerable ≤ 1.5 s for the 30-question form; second load ≤ 0.5 s.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/browser/chromium.ts';
import { createAccount, printTable, repoRoot, startServer } from './_server.ts';
import { cpuSeconds, loadAverage } from './_proc.ts';

const CORPUS = join(repoRoot, '../shared/xlsform-corpus/forms');
/** Corpus forms by size, largest first: the first that the engine opens is "the largest it accepts". */
const LARGE_CANDIDATES = [
  'synthetic__big_form.xlsx',
  'pyxform__tests__bug_example_xls__UCL_Biomass_Plot_Form.xlsx',
  'pyxform__tests__example_xls__xlsform_spec_test.xlsx',
  'pyxform__tests__bug_example_xls__ict_survey_fails.xls',
  'pyxform__tests__example_xls__widgets.xls',
  'pyxform__tests__example_xls__tutorial.xls',
];

/** Thirty questions of the usual kinds, two selects sharing a choice list. */
function thirtyQuestions(): string {
  const kinds = ['text', 'integer', 'select_one yesno', 'decimal', 'date', 'select_multiple yesno'];
  const rows = Array.from({ length: 30 }, (_, i) => `,${kinds[i % kinds.length]},q${i + 1},Question ${i + 1}`);
  return ['survey,,,', ',type,name,label', ...rows, 'choices,,,', ',list_name,name,label', ',yesno,yes,Yes', ',yesno,no,No', 'settings,,,', ',form_id,form_title,', ',thirty,Thirty questions,', ''].join('\n');
}

async function publish(baseUrl: string, token: string, fileName: string, content: Buffer | string): Promise<number | undefined> {
  const form = new FormData();
  form.append('xls_file', new Blob([content]), fileName);
  const res = await fetch(`${baseUrl}/api/v1/forms`, { method: 'POST', headers: { authorization: `Token ${token}` }, body: form });
  if (res.status !== 201) return undefined;
  return ((await res.json()) as { formid: number }).formid;
}

interface Load {
  readonly ms: number;
  readonly bytes: number;
}

/** Bytes that came over the network while `work` ran: the page's own requests not answered by the service worker, and the worker's. */
async function measure(context: BrowserContext, work: () => Promise<void>): Promise<Load> {
  let bytes = 0;
  const pending: Array<Promise<void>> = [];
  const onFinished = (request: import('playwright-core').Request): void => {
    pending.push(
      (async () => {
        const response = await request.response();
        if (!response || (response.fromServiceWorker() && request.serviceWorker() === null)) return;
        const sizes = await request.sizes();
        bytes += sizes.responseBodySize + sizes.responseHeadersSize;
      })(),
    );
  };
  context.on('requestfinished', onFinished);
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  context.off('requestfinished', onFinished);
  await Promise.all(pending);
  return { ms, bytes };
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

/** First and second visits of a form's fill page in a fresh browser; undefined when the engine cannot open it. */
async function visits(browser: Browser, url: string): Promise<{ first: Load; second: Load } | undefined> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    // The first question that takes an answer: a text box, a number field or a choice.
    const answerable = page.locator('main').locator('input:not([type=hidden]):not([disabled]), textarea').first();
    let opened = true;
    const first = await measure(context, async () => {
      await page.goto(url);
      opened = await Promise.race([
        answerable.waitFor({ timeout: 60_000 }).then(() => true),
        page.getByText('An error occurred while loading this form').waitFor({ timeout: 60_000 }).then(() => false),
      ]);
    });
    if (!opened) return undefined;
    // The service worker keeps what the page loaded before it took control.
    // (Polled with evaluate: waitForFunction's polling evaluates text, which the page's CSP forbids.)
    for (let tries = 0; !(await page.evaluate('navigator.serviceWorker.controller !== null')); tries++) {
      if (tries > 150) throw new Error('the service worker never took control of the page');
      await page.waitForTimeout(200);
    }
    await page.waitForTimeout(1_000);
    const second = await measure(context, async () => {
      await page.goto(url);
      await answerable.waitFor({ timeout: 60_000 });
    });
    return { first, second };
  } finally {
    await context.close();
  }
}

export async function main(args: string[]): Promise<void> {
  const runs = Number(args.find((a) => /^\d+$/.test(a)) ?? 5);
  const server = await startServer('pglite', 19_195, { WORKERS: '0' });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const token = await createAccount(server.baseUrl, 'webforms');
    const thirty = await publish(server.baseUrl, token, 'thirty.csv', thirtyQuestions());
    if (thirty === undefined) throw new Error('the 30-question form did not publish');
    const forms: Array<{ name: string; url: string }> = [{ name: '30 questions', url: `${server.baseUrl}/forms/${thirty}/fill` }];
    for (const candidate of LARGE_CANDIDATES) {
      const id = await publish(server.baseUrl, token, candidate.replace(/^.*__/, ''), readFileSync(join(CORPUS, candidate)));
      if (id === undefined) continue;
      const url = `${server.baseUrl}/forms/${id}/fill`;
      if (await visits(browser, url)) {
        forms.push({ name: candidate.replace(/^.*__/, ''), url });
        break;
      }
      console.log(`web-forms: ${candidate} does not open in ODK Web Forms (or needs media files); trying the next`);
    }
    const rows: string[][] = [];
    for (const form of forms) {
      const results: Array<{ first: Load; second: Load }> = [];
      const cpuBefore = cpuSeconds(server.process.pid ?? 0);
      for (let i = 0; i < runs; i++) {
        const result = await visits(browser, form.url);
        if (result) results.push(result);
      }
      const cpuMs = ((cpuSeconds(server.process.pid ?? 0) - cpuBefore) * 1000) / Math.max(results.length, 1);
      const kb = (n: number): string => (n / 1024).toFixed(0);
      rows.push([
        form.name,
        median(results.map((r) => r.first.ms)).toFixed(0),
        kb(median(results.map((r) => r.first.bytes))),
        median(results.map((r) => r.second.ms)).toFixed(0),
        kb(median(results.map((r) => r.second.bytes))),
        cpuMs.toFixed(0),
      ]);
    }
    console.log(`web-forms: medians of ${runs} fresh browsers, localhost, PGlite; load average ${loadAverage()}`);
    printTable(['form', 'first: to answerable (ms)', 'first: network (kB)', 'second: to answerable (ms)', 'second: network (kB)', 'server CPU per two visits (ms)'], rows);
    console.log('targets: first question answerable ≤ 1,500 ms (30 questions); second load ≤ 500 ms');
  } finally {
    await browser.close();
    await server.stop();
  }
}
