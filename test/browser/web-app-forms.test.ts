// The form page in a real browser: a data manager opens a published corpus form (pull_data, which
// needs the media file fruits.csv) from its project, changes its settings (seen in the API), uploads
// the media file, reads the ODK Collect QR code (its payload inflated here, and the drawn code
// decoded), clones the form, downloads the XForm, is refused a replacement once a record exists,
// sees a broken XLSForm's errors by sheet, row and column, and deletes the form. Screenshots at
// desktop and tablet width go to test-results/screenshots/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateSync } from 'node:zlib';
import decodeQR from 'qr/decode.js';
import type { Page } from 'playwright-core';
import { createUser, postSubmission, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { csvForm } from '../fixtures/forms.ts';
import { ensureWebBuild } from '../web-build.ts';
import { browse, closeBrowser, chromiumMissing, CHROMIUM, skipWithoutChromium as skip } from './chromium.ts';

const SCREENSHOTS = fileURLToPath(new URL('../../test-results/screenshots/', import.meta.url));
const CORPUS_FORM = '/work/shared/xlsform-corpus/forms/pyxform__tests__example_xls__pull_data.xlsx';

let server: TestServer;
let gather: string;
let files: string;
let owner: TestUser;

before(async () => {
  if (skip) return;
  ensureWebBuild();
  server = await startTestServer();
  const port = (await server.app.listen({ port: 0, host: '127.0.0.1' })).split(':').pop();
  gather = `http://127.0.0.1:${port}`;
  files = mkdtempSync(join(tmpdir(), 'gather-web-app-forms-'));
  writeFileSync(join(files, 'pull_data.xlsx'), readFileSync(CORPUS_FORM));
  writeFileSync(join(files, 'fruits.csv'), 'name,label\nmango,Mango\norange,Orange\n');
  writeFileSync(join(files, 'broken.csv'), csvForm({ id: 'pull_data', extra: ',text,name,Your name again' }));
  owner = await createUser(server.app, 'fatuma');
});

after(async () => {
  if (skip) return;
  rmSync(files, { recursive: true, force: true });
  await closeBrowser();
  await server.close();
});

async function screenshot(page: Page, name: string, width: number, height: number): Promise<void> {
  await page.setViewportSize({ width, height });
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, name), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function apiForm(formId: number): Promise<Record<string, unknown>> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}`, headers: owner.auth });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

/** The drawn QR code's pixels, read back through a canvas in the page, decoded in Node. */
async function decodeDrawnQr(page: Page): Promise<string> {
  // A string, since the tests are typed without the DOM's names.
  const image = (await page.evaluate(`(async () => {
    const svg = document.querySelector('figure[data-collect-settings] svg');
    const url = URL.createObjectURL(new Blob([new XMLSerializer().serializeToString(svg)], { type: 'image/svg+xml' }));
    const img = new Image();
    img.src = url;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 600;
    const context = canvas.getContext('2d');
    context.imageSmoothingEnabled = false;
    context.drawImage(img, 0, 0, 600, 600);
    URL.revokeObjectURL(url);
    return { width: 600, height: 600, data: Array.from(context.getImageData(0, 0, 600, 600).data) };
  })()`)) as { width: number; height: number; data: number[] };
  return decodeQR({ width: image.width, height: image.height, data: Uint8Array.from(image.data) });
}

test('a data manager runs a form from its page in Chromium', { skip, timeout: 240_000 }, async () => {
  assert.ok(!chromiumMissing, `${CHROMIUM} is missing`);
  const project = await server.app.inject({ method: 'POST', url: '/api/v1/projects', headers: owner.auth, payload: { name: 'Market prices' } });
  const projectId = project.json<{ projectid: number }>().projectid;
  const other = await server.app.inject({ method: 'POST', url: '/api/v1/projects', headers: owner.auth, payload: { name: 'Archive' } });
  const otherId = other.json<{ projectid: number }>().projectid;

  const { page, errors, outside, close } = await browse(gather);
  try {
    await page.goto(`${gather}/login`);
    await page.getByLabel('Username or e-mail').fill(owner.username);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();

    // She publishes the corpus form into her project and opens it from the project's form list.
    await page.goto(`${gather}/projects/${projectId}`);
    // First a broken one: the converter's error by sheet, row and column.
    await page.getByLabel('XLSForm file').setInputFiles(join(files, 'broken.csv'));
    const notPublished = page.getByRole('alert').filter({ hasText: 'The form could not be published.' });
    await notPublished.waitFor();
    assert.deepEqual((await notPublished.getByRole('row').nth(1).getByRole('cell').allTextContents()).slice(0, 3), ['survey', '4', 'name']);
    await page.getByLabel('XLSForm file').setInputFiles(join(files, 'pull_data.xlsx'));
    await page.getByRole('status').filter({ hasText: 'Published “pull_data” (pull_data).' }).waitFor();
    await page.getByRole('table', { name: 'Forms of Market prices' }).getByRole('link', { name: 'pull_data' }).click();
    await page.getByRole('heading', { name: 'pull_data', level: 1 }).waitFor();
    const formId = Number(/\/forms\/(\d+)$/.exec(page.url())?.[1]);
    assert.ok(formId > 0, page.url());
    assert.equal(page.url(), `${gather}/projects/${projectId}/forms/${formId}`);
    await page.getByRole('link', { name: 'Market prices' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Fill in the form' }).getAttribute('href'), (await apiForm(formId))['enketo_url']);
    assert.equal(await page.getByRole('link', { name: 'View records' }).getAttribute('href'), `/projects/${projectId}/forms/${formId}/data`);
    assert.equal(await page.getByRole('link', { name: 'XForm (XML)' }).getAttribute('href'), `/api/v1/forms/${formId}/form.xml`);

    // Settings: the title, and each switch, saved and seen in the API.
    await page.getByLabel('Title').fill('Fruit prices');
    await page.getByLabel('Description').fill('Prices at <the> market & stalls');
    await page.getByRole('button', { name: 'Save title and description' }).click();
    await page.getByRole('status').filter({ hasText: 'Title and description saved.' }).waitFor();
    await page.getByRole('heading', { name: 'Fruit prices', level: 1 }).waitFor();
    await page.getByLabel('Public data').check();
    await page.getByRole('status').filter({ hasText: 'Public data: on. Saved.' }).waitFor();
    await page.getByLabel('Active (downloadable to devices)').uncheck();
    await page.getByRole('status').filter({ hasText: 'Active (downloadable to devices): off. Saved.' }).waitFor();
    await page.getByLabel('Require authentication (account fatuma)').check();
    await page.getByRole('status').filter({ hasText: 'Require authentication: on. Saved.' }).waitFor();
    const saved = await apiForm(formId);
    assert.equal(saved['title'], 'Fruit prices');
    assert.equal(saved['description'], 'Prices at &lt;the&gt; market &amp; stalls');
    assert.equal(saved['public_data'], true);
    assert.equal(saved['downloadable'], false);
    const profile = await server.app.inject({ method: 'GET', url: `/api/v1/profiles/${owner.username}`, headers: owner.auth });
    assert.equal(profile.json().require_auth, true);
    await page.getByLabel('Active (downloadable to devices)').check();
    await page.getByRole('status').filter({ hasText: 'Active (downloadable to devices): on. Saved.' }).waitFor();

    // The media file the form pulls its data from, uploaded and listed.
    await page.getByLabel('Add media files').setInputFiles(join(files, 'fruits.csv'));
    await page.getByRole('status').filter({ hasText: 'Uploaded fruits.csv.' }).waitFor();
    await page.getByRole('table', { name: 'Media files' }).getByRole('link', { name: 'fruits.csv' }).waitFor();
    const media = (await apiForm(formId))['metadata'] as Array<{ data_type: string; data_value: string }>;
    assert.ok(media.some((m) => m.data_type === 'media' && m.data_value === 'fruits.csv'));

    // ODK Collect: the server URL, and the QR code's payload (zlib, base64) holding it.
    assert.equal(await page.getByLabel('Server URL').inputValue(), `${gather}/fatuma`);
    const qr = page.locator('figure[data-collect-settings]');
    const payload = (await qr.getAttribute('data-collect-settings')) ?? '';
    assert.deepEqual(JSON.parse(inflateSync(Buffer.from(payload, 'base64')).toString('utf8')), { general: { server_url: `${gather}/fatuma` }, admin: {} });
    await page.getByLabel('Include my username (fatuma) in the code').check();
    await page.locator(`figure[data-collect-settings]:not([data-collect-settings="${payload}"])`).waitFor();
    const withUser = (await qr.getAttribute('data-collect-settings')) ?? '';
    const settings = JSON.parse(inflateSync(Buffer.from(withUser, 'base64')).toString('utf8')) as { general: Record<string, string> };
    assert.deepEqual(settings.general, { server_url: `${gather}/fatuma`, username: 'fatuma' });
    assert.equal(await decodeDrawnQr(page), withUser);
    await screenshot(page, 'form-desktop.png', 1280, 800);
    await screenshot(page, 'form-tablet.png', 768, 1024);

    // The XForm downloads as a file.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'XForm (XML)' }).click()]);
    assert.equal(download.suggestedFilename(), 'pull_data.xml');
    const xform = readFileSync(await download.path(), 'utf8');
    assert.match(xform, /jr:\/\/file-csv\/fruits\.csv/);

    // A broken replacement: the converter's error by sheet, row and column.
    await page.getByLabel('Replacement XLSForm').setInputFiles(join(files, 'broken.csv'));
    const refusal = page.getByRole('alert').filter({ hasText: 'The XLSForm was not replaced.' });
    await refusal.waitFor();
    const cells = await refusal.getByRole('row').nth(1).getByRole('cell').allTextContents();
    assert.deepEqual(cells.slice(0, 3), ['survey', '4', 'name']);
    await screenshot(page, 'form-replace-error-tablet.png', 768, 1024);

    // Clone into her own account: a link to the copy.
    await page.getByRole('button', { name: 'Clone form' }).click();
    const clone = page.getByRole('status').filter({ hasText: 'Cloned as' });
    await clone.waitFor();
    assert.match((await clone.textContent()) ?? '', /pull_data_cloned/);

    // Once a record exists, a replacement is refused with the reason.
    const sent = await postSubmission(server.app, `/${owner.username}/submission`,
      `<data id="pull_data"><fruit>mango</fruit><note_fruite/><meta><instanceID>uuid:3b2c6a4e-1f0d-4c9a-9d55-7a1c2b3d4e5f</instanceID></meta></data>`, owner.auth);
    assert.equal(sent.statusCode, 201, sent.body);
    await page.reload();
    await page.getByRole('heading', { name: 'Fruit prices', level: 1 }).waitFor();
    await page.getByText('This form has 1 record, so the server will refuse a replacement').waitFor();
    await page.getByLabel('Replacement XLSForm').setInputFiles(join(files, 'pull_data.xlsx'));
    await page.getByRole('alert').filter({ hasText: /has submissions: it cannot be replaced/ }).waitFor();

    // Moved to another project: the page follows it.
    await page.getByLabel('Project', { exact: true }).selectOption({ label: 'Archive' });
    await page.getByRole('button', { name: 'Move form' }).click();
    await page.waitForURL(`${gather}/projects/${otherId}/forms/${formId}`);
    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Archive' }).waitFor();
    assert.match(String((await apiForm(formId))['project']), new RegExp(`/projects/${otherId}$`));

    // Deleting asks first, then goes back to the project.
    await page.getByRole('button', { name: 'Delete this form…' }).click();
    await page.getByText('Delete “Fruit prices” and its 1 record?').waitFor();
    await page.getByRole('button', { name: 'Yes, delete the form' }).click();
    await page.getByRole('heading', { name: 'Archive', level: 1 }).waitFor();
    const gone = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}`, headers: owner.auth });
    assert.equal(gone.statusCode, 404);

    assert.deepEqual(outside, []);
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
});
