// The web app's account, projects, organisations, exports and imports pages in headless Chromium,
// finding every element by role and accessible name: a person changes their profile and password
// (and stays signed in), shows and regenerates the API token (the old one stops working), registers
// an OAuth application, creates an organisation with a member, creates, renames, tags, stars and
// shares a project (the second account then sees it), imports a CSV of two rows and runs a CSV
// export with its progress bar, checking the downloaded file. Screenshots go to
// test-results/screenshots/ at desktop and tablet width.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { browse, closeBrowser, chromiumMissing, CHROMIUM, skipWithoutChromium as skip } from './chromium.ts';
import { createUser, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { csvForm } from '../fixtures/forms.ts';
import { ensureWebBuild } from '../web-build.ts';
import { buildJobRegistry } from '../../src/compose.ts';
import { silentJobLog } from '../../src/jobs/log.ts';
import { startWorkers, type Workers } from '../../src/jobs/worker.ts';

const SCREENSHOTS = fileURLToPath(new URL('../../test-results/screenshots/', import.meta.url));
const NEW_PASSWORD = 'Water-points-2026!';

let server: TestServer;
let gather: string;
let files: string;
// The export job runs in a worker, as `npm start` runs one beside the server.
let workers: Workers;

before(async () => {
  if (skip) return;
  ensureWebBuild();
  server = await startTestServer();
  workers = startWorkers(server.deps, buildJobRegistry(), { count: 1, log: silentJobLog });
  const port = (await server.app.listen({ port: 0, host: '127.0.0.1' })).split(':').pop();
  gather = `http://127.0.0.1:${port}`;
  files = mkdtempSync(join(tmpdir(), 'gather-web-account-'));
  writeFileSync(join(files, 'household_survey.csv'), csvForm({ id: 'household_survey', title: 'Household survey' }));
  writeFileSync(join(files, 'records.csv'), 'name,age\nAda,31\nBayo,42\n');
});

after(async () => {
  if (skip) return;
  rmSync(files, { recursive: true, force: true });
  await workers.stop();
  await closeBrowser();
  await server.close();
});

async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize({ width: 768, height: 1024 });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-tablet.png`), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.goto(`${gather}/login`);
  await page.getByLabel('Username or e-mail').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
}

async function until(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function apiStatus(path: string, token: string): Promise<number> {
  return (await server.app.inject({ method: 'GET', url: path, headers: { authorization: `Token ${token}` } })).statusCode;
}

test('account, organisation, project sharing, import and export in Chromium', { skip, timeout: 300_000 }, async () => {
  assert.ok(!chromiumMissing, `${CHROMIUM} is missing`);
  const amina: TestUser = await createUser(server.app, 'amina');
  const bola = await createUser(server.app, 'bola');
  const browsing = await browse(gather);
  const { page } = browsing;
  try {
    await signIn(page, amina.username, amina.password);
    const nav = page.getByRole('navigation', { name: 'Main' });

    // ---- account: profile
    await nav.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    const firstName = page.getByLabel('First name');
    // The profile arrives after the page: its fields fill in then.
    await until(async () => (await firstName.inputValue()) === 'Amina');
    await firstName.fill('Aminata');
    await page.getByLabel('City').fill('Kano');
    await page.getByLabel('Organisation', { exact: true }).fill('Water board');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByRole('status').filter({ hasText: 'Profile saved.' }).waitFor();
    const profile = (await server.app.inject({ method: 'GET', url: '/api/v1/profiles/amina', headers: amina.auth })).json<Record<string, string>>();
    assert.deepEqual([profile['first_name'], profile['city'], profile['organization']], ['Aminata', 'Kano', 'Water board']);

    // ---- the API token, shown on demand and regenerated: the old one stops working
    await page.getByRole('button', { name: 'Show API token' }).click();
    const token = page.getByTestId('api-token');
    assert.equal(await token.textContent(), amina.token);
    await page.getByRole('button', { name: 'Regenerate API token' }).click();
    await page.getByRole('status').filter({ hasText: 'the old one no longer works' }).waitFor();
    const fresh = (await token.textContent()) ?? '';
    assert.notEqual(fresh, amina.token);
    assert.equal(await apiStatus('/api/v1/user', amina.token), 401);
    assert.equal(await apiStatus('/api/v1/user', fresh), 200);

    // ---- OAuth applications: register one (its secret shown once), then delete it
    await page.getByLabel('Application name').fill('Field dashboard');
    await page.getByLabel('Redirect URIs').fill('https://dash.example.org/callback');
    await page.getByRole('button', { name: 'Register application' }).click();
    await page.getByRole('status').filter({ hasText: 'Client secret' }).waitFor();
    const apps = page.getByRole('table', { name: 'Your OAuth applications' });
    await apps.getByRole('row', { name: /Field dashboard/ }).waitFor();
    await screenshots(page, 'account');
    await page.getByRole('button', { name: 'Delete application Field dashboard' }).click();
    await page.getByText('You have registered no applications.').waitFor();

    // ---- the password: the change ends every session, and the app signs in again with the new one
    await page.getByLabel('Current password').fill(amina.password);
    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel('Repeat the new password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await page.getByText('Signed in as amina').first().waitFor();

    // ---- an organisation with a member
    await nav.getByRole('link', { name: 'Organisations' }).click();
    await page.getByRole('heading', { name: 'Organisations', level: 1 }).waitFor();
    await page.getByText('You belong to no organisation yet.').waitFor();
    await page.getByLabel('Organisation username').fill('wash_team');
    await page.getByLabel('Organisation name').fill('WASH team');
    await page.getByRole('button', { name: 'Create organisation' }).click();
    await page.getByRole('heading', { name: 'WASH team', level: 1 }).waitFor();
    await page.getByLabel('Member username').fill('bola');
    await page.getByLabel('Member role', { exact: true }).selectOption('editor');
    await page.getByRole('button', { name: 'Add member' }).click();
    const members = page.getByRole('table', { name: 'Members of WASH team' });
    await members.getByRole('row', { name: /bola/ }).waitFor();
    assert.equal(await members.getByLabel('Role of bola').inputValue(), 'editor');
    await screenshots(page, 'organisation');

    // ---- a project: create, publish a form, rename, describe, tag, star, share
    await nav.getByRole('link', { name: 'Projects' }).click();
    await page.getByLabel('Project name').fill('Water points');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('heading', { name: 'Water points', level: 1 }).waitFor();
    await page.getByLabel('XLSForm file').setInputFiles(join(files, 'household_survey.csv'));
    await page.getByRole('table', { name: 'Forms of Water points' }).getByRole('row', { name: /Household survey/ }).waitFor();

    await page.getByLabel('Project name').fill('Water points 2026');
    await page.getByLabel('Description').fill('Wells and boreholes of Kano state.');
    await page.getByRole('button', { name: 'Save details' }).click();
    await page.getByRole('heading', { name: 'Water points 2026', level: 1 }).waitFor();

    await page.getByLabel('New tags').fill('water, kano');
    await page.getByRole('button', { name: 'Add tags' }).click();
    await page.getByRole('list', { name: 'Project tags' }).getByRole('listitem').filter({ hasText: 'kano' }).waitFor();

    await page.getByRole('button', { name: 'Star' }).click();
    await page.locator('button[aria-pressed="true"]', { hasText: 'Starred' }).waitFor();

    const sharing = page.getByRole('table', { name: 'People and organisations the project is shared with' });
    await page.getByLabel('Username or organisation').fill('bola');
    await page.getByLabel('Role', { exact: true }).selectOption('editor');
    await page.getByRole('button', { name: 'Share', exact: true }).click();
    await sharing.getByRole('row', { name: /bola/ }).waitFor();
    await page.getByLabel('Username or organisation').fill('wash_team');
    await page.getByLabel('Role', { exact: true }).selectOption('readonly');
    await page.getByRole('button', { name: 'Share', exact: true }).click();
    await sharing.getByRole('row', { name: /wash_team/ }).waitFor();
    await screenshots(page, 'project-settings');

    // ---- import two records, then export them as CSV with the progress bar
    // (The form's own page links here; this test comes straight from the project.)
    const projectPage = new URL(page.url()).pathname;
    const forms = await page.evaluate(async (path) => (await fetch(`/api/v1${path}/forms`, { headers: { 'x-requested-with': 'XMLHttpRequest' } })).json() as Promise<Array<{ formid: number }>>, projectPage);
    await page.goto(`${gather}${projectPage}/forms/${forms[0]?.formid}/imports`);
    await page.getByRole('heading', { name: 'Import records into Household survey', level: 1 }).waitFor();
    await page.getByLabel('Records file').setInputFiles(join(files, 'records.csv'));
    await page.getByRole('button', { name: 'Import records' }).click();
    await page.getByRole('listitem').filter({ hasText: '2 added' }).waitFor();
    await screenshots(page, 'imports');

    await page.getByRole('link', { name: 'Export records' }).click();
    await page.getByRole('heading', { name: 'Exports of Household survey', level: 1 }).waitFor();
    await page.getByLabel('Format').selectOption('csv');
    await page.getByRole('button', { name: 'Start export' }).click();
    const bar = page.getByRole('progressbar', { name: 'Export progress' });
    await bar.waitFor();
    const download = page.getByRole('link', { name: 'Download the export' });
    await download.waitFor();
    assert.equal(await bar.getAttribute('value'), await bar.getAttribute('max'));
    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    const saved = await file.path();
    const lines = readFileSync(saved, 'utf8').trim().split('\n');
    assert.match(lines[0] ?? '', /^name,age,/);
    assert.equal(lines.length, 3);
    const past = page.getByRole('table', { name: 'Past exports of Household survey' });
    await past.getByRole('row', { name: /CSV/ }).first().waitFor();
    await screenshots(page, 'exports');
    const exportId = /Delete export (\d+)/.exec((await past.getByRole('button').first().getAttribute('aria-label')) ?? '')?.[1];
    await past.getByRole('button', { name: `Delete export ${exportId}` }).click();
    await page.getByText('No exports yet.').waitFor();

    // ---- the projects page's filters
    await nav.getByRole('link', { name: 'Projects' }).click();
    await page.getByRole('button', { name: 'Starred' }).click();
    await page.getByRole('table', { name: 'Starred projects' }).getByRole('link', { name: 'Water points 2026' }).waitFor();
    assert.match(page.url(), /\?show=starred$/);
    await screenshots(page, 'projects-starred');

    // ---- the second account sees the project under "Shared with me"
    const other = await browse(gather);
    try {
      await signIn(other.page, bola.username, bola.password);
      await other.page.getByRole('button', { name: 'Shared with me' }).click();
      await other.page.getByRole('table', { name: 'Projects shared with me' }).getByRole('link', { name: 'Water points 2026' }).waitFor();
      assert.equal(await other.page.getByRole('table', { name: 'My projects' }).count(), 0);
      assert.deepEqual(other.errors, []);
      assert.deepEqual(other.outside, []);
    } finally {
      await other.close();
    }

    // ---- signing out, then in with the new password
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await signIn(page, 'amina', NEW_PASSWORD);

    assert.deepEqual(browsing.errors, []);
    assert.deepEqual(browsing.outside, []);
  } finally {
    await browsing.close();
  }
});

