// The web forms in a real browser (ODK Web Forms in headless Chromium): a form is filled and sent
// anonymously on an account that does not require auth, with a photo; the same answers come back
// from the data API; a preview stores nothing; a draft survives a reload; the page speaks French
// to a French browser; the owner edits a record a device sent (history keeps the first version);
// an account that requires auth sends an anonymous visitor to sign in.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { createUser, multipart, publishForm, startTestServer, type MultipartFile, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { ensureWebBuild } from '../web-build.ts';
import { browse, closeBrowser, chromiumMissing, CHROMIUM, skipWithoutChromium as skip } from './chromium.ts';

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
  await closeBrowser();
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
    const row = (await records()).find((r) => r.visitor === 'Amina Otieno');
    assert.ok(row, 'the record is listed');
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

/** How many drafts this browser keeps (page code as text: this file is compiled without the DOM's types). */
const COUNT_DRAFTS = `new Promise((resolve, reject) => {
  const opening = indexedDB.open('gather-web-forms');
  opening.onerror = () => reject(opening.error);
  opening.onsuccess = () => {
    const db = opening.result;
    if (!db.objectStoreNames.contains('drafts')) { db.close(); resolve(0); return; }
    const counting = db.transaction('drafts').objectStore('drafts').count();
    counting.onsuccess = () => { db.close(); resolve(counting.result); };
  };
})`;

/** The drafts on this device: their instance XML and how many files each keeps. */
const READ_DRAFTS = `new Promise((resolve, reject) => {
  const opening = indexedDB.open('gather-web-forms');
  opening.onerror = () => reject(opening.error);
  opening.onsuccess = () => {
    const db = opening.result;
    if (!db.objectStoreNames.contains('drafts')) { db.close(); resolve([]); return; }
    const reading = db.transaction('drafts').objectStore('drafts').getAll();
    reading.onsuccess = () => { db.close(); resolve(reading.result.map((d) => ({ xml: d.xml, files: d.attachments.length }))); };
  };
})`;

/**
 * Waits until the device's one draft holds what `done` looks for. A draft is saved a moment after
 * the last input, and the status line already shows the save of an earlier one.
 */
async function draftHolding(page: Page, done: (draft: { xml: string; files: number }) => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const drafts = (await page.evaluate(READ_DRAFTS)) as Array<{ xml: string; files: number }>;
    if (drafts.length === 1 && drafts[0] && done(drafts[0])) return;
    if (Date.now() > deadline) assert.fail(`the draft never held every answer: ${JSON.stringify(drafts)}`);
    await page.waitForTimeout(100);
  }
}

test('a draft survives a reload: resumed, it is sent once as a new record with its photo, then forgotten', { skip, timeout: 180_000 }, async () => {
  const before = await records();
  const browsing = await browse(gather);
  try {
    const { page } = browsing;
    await page.goto(`${gather}/forms/${formId}/fill`);
    await fillVisit(page, 'Draft resumed', '5');
    await page.locator('input[type=file]').setInputFiles(join(files, 'site.png'));
    await page.getByRole('status').filter({ hasText: 'Draft saved on this device' }).waitFor();
    await draftHolding(page, (draft) => draft.xml.includes('<purpose>family</purpose>') && draft.files === 1);
    assert.equal(await page.evaluate(COUNT_DRAFTS), 1);
    await page.reload();
    await page.getByRole('button', { name: 'Resume draft' }).click();
    const name = page.getByRole('textbox', { name: /Visitor name/ });
    await name.waitFor();
    assert.equal(await name.inputValue(), 'Draft resumed', 'the draft’s answers are back');
    assert.equal(await page.getByRole('spinbutton').inputValue(), '5');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Record sent' }).waitFor();
    const added = (await records()).filter((row) => !before.some((old) => old._id === row._id));
    assert.equal(added.length, 1, 'the resumed draft arrived once, as a new record');
    assert.equal(added[0]?.visitor, 'Draft resumed');
    assert.equal(added[0]?.people, 5);
    assert.equal(added[0]?.purpose, 'family');
    assert.equal(added[0]?._attachments.length, 1, 'the photo came back with the draft');
    assert.ok(added[0]?._attachments[0]?.filename.endsWith(added[0].photo ?? '-'));
    assert.equal(await page.evaluate(COUNT_DRAFTS), 0, 'the draft is gone once the record is sent');
    // A new visit offers no draft.
    await page.reload();
    await name.waitFor();
    assert.equal(await page.getByRole('button', { name: 'Resume draft' }).count(), 0);
    assert.deepEqual(browsing.errors, []);
  } finally {
    await browsing.close();
  }
});

test('a tab of an older version holding the browser’s storage does not hold the form back', { skip, timeout: 120_000 }, async () => {
  const browsing = await browse(gather);
  try {
    const { page, context } = browsing;
    // Another tab keeps the storage open at its first version and never lets go.
    const older = await context.newPage();
    await older.goto(`${gather}/forms/sw-assets.json`);
    await older.evaluate(`new Promise((resolve, reject) => {
      const opening = indexedDB.open('gather-web-forms', 1);
      opening.onupgradeneeded = () => opening.result.createObjectStore('records', { keyPath: 'id', autoIncrement: true }).createIndex('formId', 'formId');
      opening.onsuccess = () => { window.held = opening.result; resolve(true); };
      opening.onerror = () => reject(opening.error);
    })`);
    await page.goto(`${gather}/forms/${formId}/fill`);
    await page.getByRole('textbox', { name: /Visitor name/ }).waitFor({ timeout: 15_000 });
    assert.equal(await page.getByRole('button', { name: 'Resume draft' }).count(), 0);
    assert.deepEqual(browsing.errors, []);
  } finally {
    await browsing.close();
  }
});

const DATED_FORM = [
  'survey,,,',
  ',type,name,label',
  ',text,observer,Observer',
  ',date,seen_on,Date seen',
  'settings,,,',
  ',form_id,form_title,',
  ',sighting,Sighting,',
  '',
].join('\n');

test('the page speaks the browser’s language (French here), and so does the date picker', { skip, timeout: 180_000 }, async () => {
  const dated = await publishForm(server.app, owner, formFile(DATED_FORM, 'sighting.csv'));
  const browsing = await browse(gather, { locale: 'fr-FR' });
  try {
    const { page } = browsing;
    await page.goto(`${gather}/forms/${dated}/fill`);
    await page.getByRole('textbox', { name: /Observer/ }).fill('Awino');
    assert.equal(await page.evaluate('document.documentElement.lang'), 'fr');
    // PrimeVue's date picker, under ODK Web Forms: French names, French words, day/month/year.
    const today = new Date();
    await page.locator('.p-datepicker-input').click();
    const month = page.getByRole('button', { name: 'Choisir le mois' });
    assert.equal(await month.textContent(), new Intl.DateTimeFormat('fr-FR', { month: 'long' }).format(today));
    // The week starts on Monday in France.
    assert.equal(await page.locator('.p-datepicker-weekday').first().textContent(), 'lu');
    await page.getByRole('button', { name: 'Aujourd’hui' }).click();
    const shown = new Intl.DateTimeFormat('fr-FR', { day: '2-digit', month: '2-digit', year: 'numeric' }).format(today);
    assert.equal(await page.locator('.p-datepicker-input').inputValue(), shown);
    await page.getByRole('status').filter({ hasText: 'Brouillon enregistré sur cet appareil' }).waitFor();
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Fiche envoyée.' }).waitFor();
    const [row] = await recordsOf(owner, dated);
    const iso = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, '0')}-${String(today.getDate()).padStart(2, '0')}`;
    assert.equal(row?.['seen_on'], iso);
    assert.equal(row?.['observer'], 'Awino');
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

/**
 * Sends a record of the visit form as ODK Collect does (OpenRosa, the photo beside the XML); its
 * id. The instance's root element is the one the published XForm names, unless `root` is given.
 */
async function sendFromDevice(visitor: string, people: number, root?: string): Promise<number> {
  if (root === undefined) {
    const form = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}/form.xml`, headers: owner.auth });
    assert.equal(form.statusCode, 200, form.body);
    root = /<instance>\s*<([\w.-]+)/.exec(form.body)?.[1];
    assert.ok(root, 'the XForm has a primary instance');
  }
  const xml = `<?xml version="1.0"?><${root} xmlns:jr="http://openrosa.org/javarosa" xmlns:orx="http://openrosa.org/xforms" id="site_visit" version="2026112601"><visitor>${visitor}</visitor><people>${people}</people><purpose>family</purpose><photo>site.png</photo><meta><instanceID>uuid:${randomUUID()}</instanceID></meta></${root}>`;
  const body = multipart({}, [
    { name: 'xml_submission_file', fileName: 'submission.xml', content: xml, contentType: 'text/xml' },
    { name: 'site.png', fileName: 'site.png', content: PIXEL, contentType: 'image/png' },
  ]);
  const sent = await server.app.inject({ method: 'POST', url: `/${owner.username}/submission`, payload: body.payload, headers: { ...body.headers, ...owner.auth, 'x-openrosa-version': '1.0' } });
  assert.equal(sent.statusCode, 201, sent.body);
  const row = (await records()).find((r) => r.visitor === visitor);
  assert.ok(row, 'the device record is listed');
  return row._id;
}

test('the owner edits a record sent from a device in the browser: the new answers replace it and history keeps the old', { skip, timeout: 180_000 }, async () => {
  const recordId = await sendFromDevice('Baraka Mwangi', 3);
  const link = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}/${recordId}/enketo?return_url=${encodeURIComponent('/projects')}`, headers: owner.auth });
  assert.equal(link.statusCode, 200, link.body);
  const editPath = new URL(link.json<{ url: string }>().url).pathname;
  assert.equal(editPath, `/forms/${formId}/records/${recordId}/edit`);
  const browsing = await browse(gather);
  try {
    const { page } = browsing;
    await signIn(page, owner, editPath);
    const name = page.getByRole('textbox', { name: /Visitor name/ });
    await name.waitFor();
    assert.equal(await name.inputValue(), 'Baraka Mwangi', 'the record’s answers are loaded');
    await name.fill('Baraka Mwangi-Wekesa');
    // The edit survives a reload as a draft, and stays an edit of this record.
    await page.getByRole('status').filter({ hasText: 'Draft saved on this device' }).waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Resume draft' }).click();
    assert.equal(await name.inputValue(), 'Baraka Mwangi-Wekesa');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'changes to the record were saved' }).waitFor();
    assert.equal(await page.evaluate(COUNT_DRAFTS), 0);
    const edited = (await records()).find((row) => row._id === recordId);
    assert.equal(edited?.visitor, 'Baraka Mwangi-Wekesa');
    assert.equal(edited?.people, 3, 'answers not changed are kept');
    assert.equal(edited?._attachments.length, 1, 'the photo stays with the record');
    const history = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}/${recordId}/history`, headers: owner.auth });
    assert.equal(history.statusCode, 200, history.body);
    const versions = history.json<{ visitor?: string }[]>();
    assert.equal(versions.length, 1);
    assert.equal(versions[0]?.visitor, 'Baraka Mwangi');
    assert.deepEqual(browsing.errors, []);
  } finally {
    await browsing.close();
  }
});

test('a record whose root element has another name than the form’s opens for editing and is saved', { skip, timeout: 180_000 }, async () => {
  // The server files a record by its root's id attribute, so a record sent under another root name
  // (an earlier version's `name` setting, say) is the form's record and must be editable.
  const recordId = await sendFromDevice('Chebet Root', 2, 'site_visit_v1');
  const browsing = await browse(gather);
  try {
    const { page } = browsing;
    await signIn(page, owner, `/forms/${formId}/records/${recordId}/edit`);
    const name = page.getByRole('textbox', { name: /Visitor name/ });
    await name.waitFor();
    assert.equal(await name.inputValue(), 'Chebet Root', 'the record’s answers are loaded');
    await name.fill('Chebet Renamed');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'changes to the record were saved' }).waitFor();
    const edited = (await records()).find((row) => row._id === recordId);
    assert.equal(edited?.visitor, 'Chebet Renamed');
    assert.equal(edited?.people, 2);
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

const CORPUS = fileURLToPath(new URL('../../../shared/xlsform-corpus/forms/', import.meta.url));

/** A corpus XLSForm as an upload, named without the corpus's prefix (the name gives the form id). */
function corpusForm(name: string): MultipartFile {
  return { name: 'xls_file', fileName: name.replace(/^.*__/, ''), content: readFileSync(join(CORPUS, name)), contentType: 'application/octet-stream' };
}

async function uploadMedia(user: TestUser, form: number, name: string, content: string | Buffer, contentType: string): Promise<void> {
  const body = multipart({ xform: String(form), data_type: 'media', data_value: name }, [{ name: 'data_file', fileName: name, content, contentType }]);
  const res = await server.app.inject({ method: 'POST', url: '/api/v1/metadata', payload: body.payload, headers: { ...user.auth, ...body.headers } });
  assert.equal(res.statusCode, 201, res.body);
}

async function recordsOf(user: TestUser, form: number): Promise<Record<string, unknown>[]> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/data/${form}`, headers: user.auth });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<Record<string, unknown>[]>();
}

// Translations, an image in a choice's label and choices from a CSV file (select_one_from_file).
const MARKET_FORM = [
  'survey,,,,,',
  ',type,name,label::English (en),label::Français (fr),media::image::English (en)',
  ',select_one_from_file markets.csv,market,Which market?,Quel marché ?,',
  ',select_one fruit,fruit,Which fruit?,Quel fruit ?,',
  'choices,,,,,',
  ',list_name,name,label::English (en),label::Français (fr),media::image::English (en)',
  ',fruit,mango,Mango,Mangue,mango.png',
  ',fruit,banana,Banana,Banane,',
  'settings,,,,,',
  ',form_id,form_title,default_language,,',
  ',market_day,Market day,English (en),,',
  '',
].join('\n');

test('real forms: repeats, cascading selects, translations with media, pulldata from a CSV', { skip, timeout: 240_000 }, async () => {
  const enumerator = await createUser(server.app, 'chebet');
  const tutorial = await publishForm(server.app, enumerator, corpusForm('pyxform__tests__example_xls__tutorial.xls'));
  const cascading = await publishForm(server.app, enumerator, corpusForm('pyxform__tests__example_xls__cascading_select_test_equivalent.xls'));
  const pulldata = await publishForm(server.app, enumerator, corpusForm('pyxform__tests__example_xls__pull_data.xlsx'));
  await uploadMedia(enumerator, pulldata, 'fruits.csv', 'name,label\nmango,Mango\norange,Orange\n', 'text/csv');
  const market = await publishForm(server.app, enumerator, formFile(MARKET_FORM, 'market_day.csv'));
  await uploadMedia(enumerator, market, 'markets.csv', 'name,label\nkibuye,Kibuye market\ntoi,Toi market\n', 'text/csv');
  await uploadMedia(enumerator, market, 'mango.png', PIXEL, 'image/png');
  const browsing = await browse(gather);
  try {
    const { page } = browsing;
    const send = async (): Promise<void> => {
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'Record sent' }).waitFor();
    };

    // A repeat: two household members.
    await page.goto(`${gather}/forms/${tutorial}/fill`);
    await page.getByRole('textbox', { name: /household member's name/ }).fill('Wanjiku');
    await page.getByRole('button', { name: 'Add Household Member or Visitor' }).click();
    await page.getByRole('textbox', { name: /household member's name/ }).nth(1).fill('Kiprono');
    await screenshot(page, 'web-form-repeat.png');
    await send();
    const [household] = await recordsOf(enumerator, tutorial);
    const members = Object.entries(household ?? {}).find(([key, value]) => !key.startsWith('_') && Array.isArray(value))?.[1] as Record<string, unknown>[] | undefined;
    assert.deepEqual(members?.map((member) => Object.entries(member).find(([key]) => key.endsWith('/name'))?.[1]), ['Wanjiku', 'Kiprono']);

    // Cascading selects: the states offered follow the zone, the LGAs follow the state.
    await page.goto(`${gather}/forms/${cascading}/fill`);
    assert.equal(await page.getByRole('radio', { name: 'State 1' }).count(), 0, 'no state is offered before a zone is chosen');
    await page.getByRole('radio', { name: 'Zone 1' }).check();
    await page.getByRole('radio', { name: 'State 1' }).check();
    await page.getByRole('radio', { name: 'LGA 1' }).first().check();
    await send();
    const [place] = await recordsOf(enumerator, cascading);
    assert.equal(place?.['mylga_zone'], 'zone_1');

    // Translations switch the labels; a choice shows its image; choices come from markets.csv.
    await page.goto(`${gather}/forms/${market}/fill`);
    await page.getByRole('combobox', { name: 'change language' }).click();
    await page.getByRole('option', { name: 'Français (fr)' }).click();
    await page.getByText('Quel fruit ?').waitFor();
    await page.getByRole('combobox', { name: 'change language' }).click();
    await page.getByRole('option', { name: 'English (en)' }).click();
    const image = page.getByRole('img', { name: 'Mango' });
    await image.waitFor();
    assert.ok(await image.evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth > 0), 'the choice image loaded');
    await page.getByRole('radio', { name: 'Toi market' }).check();
    await page.getByRole('radio', { name: 'Banana' }).check();
    await screenshot(page, 'web-form-media.png');
    await send();
    const [sale] = await recordsOf(enumerator, market);
    assert.equal(sale?.['market'], 'toi');
    assert.equal(sale?.['fruit'], 'banana');

    // pulldata() reads the form's media CSV.
    await page.goto(`${gather}/forms/${pulldata}/fill`);
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    await send();
    const [pulled] = await recordsOf(enumerator, pulldata);
    assert.equal(pulled?.['fruit'], 'mango');
    assert.deepEqual(browsing.errors, []);
    assert.deepEqual(browsing.outside, []);
  } finally {
    await browsing.close();
  }
});

test('a signed-in person without a data-entry role is told so; a draft preview opens from survey_preview', { skip, timeout: 180_000 }, async () => {
  const reader = await createUser(server.app, 'otieno');
  const shared = await server.app.inject({ method: 'POST', url: `/api/v1/forms/${formId}/share`, payload: { username: reader.username, role: 'readonly' }, headers: owner.auth });
  assert.equal(shared.statusCode, 204, shared.body);
  const draft = await server.app.inject({ method: 'POST', url: '/api/v1/forms/survey_preview', headers: owner.auth, payload: { body: VISIT_FORM } });
  assert.equal(draft.statusCode, 200, draft.body);
  const previewUrl = new URL(draft.json<{ enketo_preview_url: string }>().enketo_preview_url);
  const browsing = await browse(gather);
  try {
    const { page } = browsing;
    await signIn(page, reader, `/forms/${formId}/fill`);
    await page.getByRole('alert').filter({ hasText: 'not have a role that submits' }).waitFor();
    await page.goto(`${gather}${previewUrl.pathname}${previewUrl.search}`);
    await fillVisit(page, 'Draft visitor', '4');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'nothing was stored' }).waitFor();
    assert.deepEqual(browsing.errors, []);
  } finally {
    await browsing.close();
  }
});
