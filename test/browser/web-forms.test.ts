// The web forms in a real browser (ODK Web Forms in headless Chromium): a form is filled and sent
// anonymously on an account that does not require auth, with a photo; the same answers come back
// from the data API; a preview stores nothing; the owner edits a record (history keeps the first
// version); an account that requires auth sends an anonymous visitor to sign in.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { createUser, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { ensureWebBuild } from '../web-build.ts';
import { browse, chromiumMissing, CHROMIUM, skipWithoutChromium as skip } from './chromium.ts';

const SCREENSHOTS = fileURLToPath(new URL('../../test-results/screenshots/', import.meta.url));

const VISIT_FORM = [
  'survey,,,,',
  ',type,name,label,required',
  ',text,visitor,Visitor name,yes',
  ',integer,people,How many people,',
  ',select_one purpose,purpose,Purpose of the visit,',
  ',image,photo,Photo of the site,',
  'choices,,,,',
  ',list_name,name,label,',
  ',purpose,work,Work,',
  ',purpose,family,Family,',
  'settings,,,,',
  ',form_id,form_title,version,',
  ',site_visit,Site visit,2026112601,',
  '',
].join('\n');

// The smallest PNG: one transparent pixel.
const PIXEL = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082', 'hex');

let server: TestServer;
let gather: string;
let files: string;
let owner: TestUser;
let formId: number;

before(async () => {
  if (skip) return;
  ensureWebBuild();
  server = await startTestServer();
  const port = (await server.app.listen({ port: 0, host: '127.0.0.1' })).split(':').pop();
  gather = `http://127.0.0.1:${port}`;
  files = mkdtempSync(join(tmpdir(), 'gather-web-forms-'));
  writeFileSync(join(files, 'site.png'), PIXEL);
  owner = await createUser(server.app, 'wanjiru');
  formId = await publishForm(server.app, owner, formFile(VISIT_FORM, 'site_visit.csv'));
});

after(async () => {
  if (skip) return;
  rmSync(files, { recursive: true, force: true });
  await server.close();
});

interface Row {
  _id: number;
  visitor?: string;
  people?: number;
  purpose?: string;
  photo?: string;
  _attachments: { filename: string; mimetype: string }[];
}

async function records(): Promise<Row[]> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}`, headers: owner.auth });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<Row[]>();
}

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, name), fullPage: true });
}

async function fillVisit(page: Page, visitor: string, people: string): Promise<void> {
  await page.getByRole('textbox', { name: /Visitor name/ }).fill(visitor);
  // ODK Web Forms 0.22 leaves its number field without an accessible name (it is the only one
  // here), and its field reads keys as they are typed rather than a pasted value.
  await page.getByRole('spinbutton').pressSequentially(people);
  await page.getByRole('radio', { name: 'Family' }).check();
}

test('an anonymous visitor fills and sends a form with a photo; the data API has the same answers', { skip, timeout: 180_000 }, async () => {
  assert.ok(!chromiumMissing, `${CHROMIUM} is missing`);
  const browsing = await browse(gather);
  try {
    const { page } = browsing;
    await page.goto(`${gather}/forms/${formId}/fill`);
    await fillVisit(page, 'Amina Otieno', '3');
    await page.locator('input[type=file]').setInputFiles(join(files, 'site.png'));
    await screenshot(page, 'web-form-filled.png');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Record sent' }).waitFor();
    const [row] = await records();
    assert.ok(row);
    assert.equal(row.visitor, 'Amina Otieno');
    assert.equal(row.people, 3);
    assert.equal(row.purpose, 'family');
    assert.ok(row.photo, 'the photo question names its file');
    assert.equal(row._attachments.length, 1);
    assert.ok(row._attachments[0]?.filename.endsWith(row.photo ?? ''), 'the photo arrived under the name the record gives');
    // The form is blank again for the next record.
    assert.equal(await page.getByRole('textbox', { name: /Visitor name/ }).inputValue(), '');
    assert.deepEqual(browsing.errors, []);
    assert.deepEqual(browsing.outside, []);
  } finally {
    await browsing.close();
  }
});

test('a preview checks the answers and stores nothing', { skip, timeout: 180_000 }, async () => {
  const before = (await records()).length;
  const browsing = await browse(gather);
  try {
    const { page } = browsing;
    await page.goto(`${gather}/forms/${formId}/preview`);
    await page.getByRole('note').filter({ hasText: 'never stored' }).waitFor();
    // A required answer left out is refused by the form itself.
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText('1 question with error.').waitFor();
    await fillVisit(page, 'Preview only', '1');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'nothing was stored' }).waitFor();
    assert.equal((await records()).length, before);
    assert.deepEqual(browsing.errors, []);
  } finally {
    await browsing.close();
  }
});

/** Signs in on the app's sign-in page, which sends the browser back to `next`. */
async function signIn(page: Page, user: TestUser, next: string): Promise<void> {
  await page.goto(`${gather}/login?next=${encodeURIComponent(next)}`);
  await page.getByRole('textbox', { name: 'Username or e-mail' }).fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${gather}${next}`);
}

test('the owner edits a record in the browser: the new answers replace it and history keeps the old', { skip, timeout: 180_000 }, async () => {
  const [first] = await records();
  assert.ok(first, 'the first test stored a record');
  const link = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}/${first._id}/enketo?return_url=${encodeURIComponent('/projects')}`, headers: owner.auth });
  assert.equal(link.statusCode, 200, link.body);
  const editPath = new URL(link.json<{ url: string }>().url).pathname;
  assert.equal(editPath, `/forms/${formId}/records/${first._id}/edit`);
  const browsing = await browse(gather);
  try {
    const { page } = browsing;
    await signIn(page, owner, editPath);
    const name = page.getByRole('textbox', { name: /Visitor name/ });
    await name.waitFor();
    assert.equal(await name.inputValue(), 'Amina Otieno', 'the record’s answers are loaded');
    await name.fill('Amina Otieno-Wekesa');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'changes to the record were saved' }).waitFor();
    const edited = (await records()).find((row) => row._id === first._id);
    assert.equal(edited?.visitor, 'Amina Otieno-Wekesa');
    assert.equal(edited?.people, 3, 'answers not changed are kept');
    assert.equal(edited?._attachments.length, 1, 'the photo stays with the record');
    const history = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}/${first._id}/history`, headers: owner.auth });
    assert.equal(history.statusCode, 200, history.body);
    const versions = history.json<{ visitor?: string }[]>();
    assert.equal(versions.length, 1);
    assert.equal(versions[0]?.visitor, 'Amina Otieno');
    assert.deepEqual(browsing.errors, []);
  } finally {
    await browsing.close();
  }
});

test('an account that requires auth sends an anonymous visitor to sign in, then the form opens', { skip, timeout: 180_000 }, async () => {
  const guarded = await createUser(server.app, 'baraka');
  const guardedForm = await publishForm(server.app, guarded, formFile(VISIT_FORM.replace('site_visit', 'guarded_visit'), 'guarded_visit.csv'));
  const set = await server.app.inject({ method: 'PATCH', url: `/api/v1/profiles/${guarded.username}`, headers: guarded.auth, payload: { require_auth: true } });
  assert.equal(set.statusCode, 200, set.body);
  const browsing = await browse(gather);
  try {
    const { page } = browsing;
    await page.goto(`${gather}/forms/${guardedForm}/fill`);
    await page.getByRole('alert').filter({ hasText: 'sign in to continue' }).waitFor();
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByRole('textbox', { name: 'Username or e-mail' }).fill(guarded.username);
    await page.getByLabel('Password').fill(guarded.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${gather}/forms/${guardedForm}/fill`);
    await fillVisit(page, 'Signed in visitor', '2');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Record sent' }).waitFor();
    const stored = await server.app.inject({ method: 'GET', url: `/api/v1/data/${guardedForm}`, headers: guarded.auth });
    const rows = stored.json<{ visitor: string; _submitted_by: string | null }[]>();
    assert.deepEqual(rows.map((r) => [r.visitor, r._submitted_by]), [['Signed in visitor', guarded.username]]);
    assert.deepEqual(browsing.errors, []);
  } finally {
    await browsing.close();
  }
});

test('offline: a page opened once opens again, records wait on the device and are sent once when back online', { skip, timeout: 240_000 }, async () => {
  const before = (await records()).length;
  const browsing = await browse(gather);
  try {
    const { page, context } = browsing;
    await page.goto(`${gather}/forms/${formId}/fill`);
    await page.getByRole('textbox', { name: /Visitor name/ }).waitFor();
    // The service worker controls the page and has kept the page and its scripts.
    // (Page code as text: this file is compiled without the DOM's types.)
    const keptEverything = `(async () => {
      if (!navigator.serviceWorker.controller) return false;
      const paths = (await (await caches.open('gather-web-forms-1')).keys()).map((r) => new URL(r.url).pathname);
      return [location.pathname, '/api/v1/session', '/forms/${formId}/formList'].every((path) => paths.includes(path)) && paths.some((path) => path.startsWith('/assets/webform-'));
    })()`;
    for (let tries = 0; !(await page.evaluate(keptEverything)); tries++) {
      assert.ok(tries < 100, 'the service worker kept the page, its scripts, the session and the form');
      await page.waitForTimeout(200);
    }
    await context.setOffline(true);
    for (const [visitor, waiting] of [['Offline one', '1 record waiting'], ['Offline two', '2 records waiting']] as const) {
      await fillVisit(page, visitor, '1');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await page.getByRole('status').filter({ hasText: `${waiting} on this device` }).waitFor();
      await page.getByRole('status').filter({ hasText: 'saved on this device' }).waitFor();
    }
    assert.equal((await records()).length, before, 'nothing reached the server while offline');
    // The page opens again with no network, and still knows what waits.
    await page.reload();
    await page.getByRole('textbox', { name: /Visitor name/ }).waitFor();
    await page.getByRole('status').filter({ hasText: '2 records waiting on this device' }).waitFor();
    await context.setOffline(false);
    await page.evaluate("window.dispatchEvent(new Event('online'))");
    await page.getByRole('status').filter({ hasText: '2 records kept on this device were sent' }).waitFor();
    const after = await records();
    assert.equal(after.length, before + 2);
    assert.deepEqual(after.map((row) => row.visitor).filter((name) => name?.startsWith('Offline')).sort(), ['Offline one', 'Offline two']);
    assert.equal(await page.getByRole('status').filter({ hasText: 'waiting on this device' }).count(), 0);
    assert.deepEqual(browsing.errors.filter((error) => !error.includes('ERR_INTERNET_DISCONNECTED')), []);
  } finally {
    await browsing.close();
  }
});
