// The web app in a real browser: headless Chromium (Debian's `chromium`) driven by playwright-core,
// finding every element by its role and accessible name. A person signs in (first with a wrong
// password), registers, creates a project, publishes a form and a broken one, sees projects of
// their own and shared with them, and signs out. Screenshots (the projects page at desktop and
// tablet width, a project, the two errors) go to test-results/screenshots/ for a reviewer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { createUser, startTestServer, type TestServer } from '../helpers.ts';
import { csvForm } from '../fixtures/forms.ts';
import { ensureWebBuild } from '../web-build.ts';
import { CHROMIUM, CHROMIUM_ARGS, chromiumMissing, skipWithoutChromium as skip } from './chromium.ts';

const SCREENSHOTS = fileURLToPath(new URL('../../test-results/screenshots/', import.meta.url));

const missing = chromiumMissing;

let server: TestServer;
let gather: string;
let files: string;

before(async () => {
  if (skip) return;
  ensureWebBuild();
  server = await startTestServer();
  const port = (await server.app.listen({ port: 0, host: '127.0.0.1' })).split(':').pop();
  gather = `http://127.0.0.1:${port}`;
  files = mkdtempSync(join(tmpdir(), 'gather-web-forms-'));
  writeFileSync(join(files, 'household_survey.csv'), csvForm({ id: 'household_survey', title: 'Household survey' }));
  writeFileSync(join(files, 'broken_form.csv'), csvForm({ id: 'broken_form', title: 'Broken form', extra: ',selekt_one colours,colour,Colour' }));
});

after(async () => {
  if (skip) return;
  rmSync(files, { recursive: true, force: true });
  await server.close();
});

async function screenshot(page: Page, name: string, width: number, height: number): Promise<void> {
  await page.setViewportSize({ width, height });
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, name), fullPage: true });
}

test('a person signs in, registers, creates a project, publishes forms and signs out in Chromium', { skip, timeout: 180_000 }, async () => {
  assert.ok(!missing, `${CHROMIUM} is missing: .ci/run installs the Debian packages chromium and chromium-driver`);
  const amina = await createUser(server.app, 'amina');
  const profile = mkdtempSync(join(tmpdir(), 'gather-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 800 } });
  const failedRequests: string[] = [];
  // Script errors and Content-Security-Policy refusals; answers the API gave (a 400 for a wrong
  // password) are logged as "Failed to load resource" and are expected.
  const consoleErrors: string[] = [];
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (error) => consoleErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) consoleErrors.push(message.text());
    });
    page.on('requestfailed', (request) => failedRequests.push(request.url()));
    page.on('response', (response) => {
      if (!response.url().startsWith(gather)) failedRequests.push(`outside: ${response.url()}`);
    });

    // Signed out, the app opens on its sign-in page; a wrong password is said so.
    await page.goto(`${gather}/`);
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    assert.match(page.url(), /\/login\?next=/);
    await page.getByLabel('Username or e-mail').fill(amina.username);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const wrong = page.getByRole('alert');
    await wrong.waitFor();
    assert.equal((await wrong.textContent())?.trim(), 'Invalid username/password.');
    assert.equal(await page.getByLabel('Username or e-mail').getAttribute('aria-invalid'), 'true');
    await screenshot(page, 'sign-in-error-tablet.png', 768, 1024);
    await page.setViewportSize({ width: 1280, height: 800 });

    // A new person registers and lands on their (empty) projects page, signed in.
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();
    await page.getByLabel('Full name').fill('Zainab Okafor');
    await page.getByLabel('Username').fill('zainab');
    await page.getByLabel('E-mail').fill('zainab@example.org');
    await page.getByLabel('Password', { exact: true }).fill('Field-work-2026!');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    await page.getByText('Signed in as zainab').waitFor();
    await page.getByText('You have no projects yet').waitFor();

    // A project shared with her by someone else shows apart from her own.
    const shared = await server.app.inject({ method: 'POST', url: '/api/v1/projects', headers: amina.auth, payload: { name: 'Clinic visits' } });
    const sharedId = shared.json<{ projectid: number }>().projectid;
    const share = await server.app.inject({ method: 'PUT', url: `/api/v1/projects/${sharedId}/share`, headers: amina.auth, payload: { username: 'zainab', role: 'editor' } });
    assert.equal(share.statusCode, 204, share.body);

    // She creates a project and publishes a form into it.
    await page.getByLabel('Project name').fill('Household survey 2026');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('heading', { name: 'Household survey 2026', level: 1 }).waitFor();
    await page.getByText('No forms yet').waitFor();
    await page.getByLabel('XLSForm file').setInputFiles(join(files, 'household_survey.csv'));
    await page.getByRole('status').filter({ hasText: 'Published “Household survey” (household_survey).' }).waitFor();
    const forms = page.getByRole('table', { name: 'Forms of Household survey 2026' });
    const row = forms.getByRole('row', { name: /Household survey/ });
    await row.waitFor();
    assert.deepEqual(await row.getByRole('cell').allTextContents(), ['household_survey', '0', '—', await row.getByRole('cell').nth(3).textContent()]);

    // A broken XLSForm: the converter's message is shown, and nothing is added.
    await page.getByLabel('XLSForm file').setInputFiles(join(files, 'broken_form.csv'));
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    assert.match((await refusal.textContent()) ?? '', /could not be published[\s\S]*Unknown question type 'selekt_one colours'/);
    assert.equal(await forms.getByRole('row').count(), 2);
    await screenshot(page, 'project-publish-error-tablet.png', 768, 1024);
    await page.setViewportSize({ width: 1280, height: 800 });

    // Her projects, and the one shared with her, at desktop and tablet width.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Projects' }).click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    const mine = page.getByRole('table', { name: 'My projects' });
    await mine.getByRole('link', { name: 'Household survey 2026' }).waitFor();
    assert.equal(await mine.getByRole('row', { name: /Household survey 2026/ }).getByRole('cell').first().textContent(), '1');
    await page.getByRole('table', { name: 'Projects shared with me' }).getByRole('link', { name: 'Clinic visits' }).waitFor();
    await screenshot(page, 'projects-desktop.png', 1280, 800);
    await screenshot(page, 'projects-tablet.png', 768, 1024);
    await mine.getByRole('link', { name: 'Household survey 2026' }).click();
    await page.getByRole('heading', { name: 'Household survey 2026', level: 1 }).waitFor();
    await screenshot(page, 'project-tablet.png', 768, 1024);

    // Signing out ends the session: the app's pages ask to sign in again.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await page.goto(`${gather}/projects`);
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    // As the app asks: a 401 challenge with Basic or Digest would open the browser's password
    // dialog (a fetch without this header waits on it for ever in headless Chromium).
    const me = await page.evaluate(async () => (await fetch('/api/v1/user', { headers: { 'x-requested-with': 'XMLHttpRequest' } })).status);
    assert.equal(me, 401);

    // Signing in with the keyboard alone.
    await page.getByLabel('Username or e-mail').focus();
    await page.keyboard.type('zainab');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Field-work-2026!');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    assert.match(page.url(), /\/projects$/);

    assert.deepEqual(failedRequests, []);
    assert.deepEqual(consoleErrors, []);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
