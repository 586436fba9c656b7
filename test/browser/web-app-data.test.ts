// A form's data in a real browser (headless Chromium, playwright-core): records sent like a device
// (with photos) show in the table, which sorts, filters and deletes; a record shows its photo and
// is approved with a note; the map shows the points with no tile server, and a click opens a
// record; the summary counts them. Screenshots at desktop and tablet width go to
// test-results/screenshots/ for a reviewer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { createUser, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';
import { ensureWebBuild } from '../web-build.ts';
import { browse, closeBrowser, skipWithoutChromium as skip } from './chromium.ts';

const SCREENSHOTS = fileURLToPath(new URL('../../test-results/screenshots/', import.meta.url));

let server: TestServer;
let gather: string;
let dana: TestUser;
let formId: number;
let projectId: number;

/** A small solid-colour PNG, so the record page has a real photo to show. */
function png(width: number, height: number, rgb: [number, number, number]): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer): number => {
    let c = 0xffffffff;
    for (const b of bytes) c = (crcTable[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer): Buffer => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([length, body, sum]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())]);
  const pixels = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(pixels)), chunk('IEND', Buffer.alloc(0))]);
}

before(async () => {
  if (skip) return;
  ensureWebBuild();
  server = await startTestServer();
  const port = (await server.app.listen({ port: 0, host: '127.0.0.1' })).split(':').pop();
  gather = `http://127.0.0.1:${port}`;
  dana = await createUser(server.app, 'dana');
  formId = await publishForm(server.app, dana, formFile(HOUSEHOLD_CSV, 'household.csv'));
  const form = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}`, headers: dana.auth });
  projectId = Number(/projects\/(\d+)/.exec(String(form.json<{ project: string }>().project))?.[1]);
  // Four households sent like ODK Collect sends them: the instance and its photo.
  const people: Array<[string, number]> = [['Ann', 30], ['Ben', 40], ['Cat', 10], ['Dan', 50]];
  for (const [index, [name, age]] of people.entries()) {
    const photo = `house-${index}.png`;
    const res = await postSubmission(server.app, '/dana/submission', householdXml({ uuid: randomUUID(), name, age, photo }), dana.auth, [
      { name: photo, content: png(48, 32, [200, 60 * index, 40]), type: 'image/png' },
    ]);
    assert.equal(res.statusCode, 201, res.body);
  }
});

after(async () => {
  if (skip) return;
  await closeBrowser();
  await server.close();
});

async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize({ width: 768, height: 1024 });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-tablet.png`), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function recordIds(page: Page): Promise<number[]> {
  const names = await page.getByRole('link', { name: /^Open record \d+$/ }).allTextContents();
  return names.map(Number);
}

/** Waits until the table's first row is record `id`. */
async function firstRow(page: Page, id: number | undefined): Promise<void> {
  await page.locator('tbody tr:first-child th a', { hasText: new RegExp(`^${id}$`) }).waitFor();
}

async function idsByName(): Promise<Map<string, number>> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?fields=["_id","name"]`, headers: dana.auth });
  return new Map(res.json<Array<{ _id: number; name: string }>>().map((r) => [r.name, r._id]));
}

test('a data manager sorts, filters, reviews and deletes records, and finds them on the map', { skip, timeout: 240_000 }, async () => {
  const ids = await idsByName();
  const dataPath = `/projects/${projectId}/forms/${formId}/data`;
  const browsing = await browse(gather);
  const { page } = browsing;
  try {
    await page.goto(`${gather}/login?next=${encodeURIComponent(dataPath)}`);
    await page.getByRole('textbox', { name: 'Username or e-mail' }).fill(dana.username);
    await page.getByLabel('Password').fill(dana.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${gather}${dataPath}`);

    // The table: newest first, with the form's labels as column names.
    await page.getByRole('heading', { name: 'Household: records', level: 1 }).waitFor();
    await page.getByRole('link', { name: `Open record ${ids.get('Dan')}` }).waitFor();
    assert.deepEqual(await recordIds(page), ['Dan', 'Cat', 'Ben', 'Ann'].map((n) => ids.get(n)));
    await page.getByRole('status').filter({ hasText: 'Records 1–4 of 4' }).waitFor();
    await screenshots(page, 'data-table');

    // Sorted by age, youngest first, then oldest first.
    await page.getByRole('button', { name: 'Age', exact: true }).click();
    await page.getByRole('columnheader', { name: 'Age' }).and(page.locator('[aria-sort="ascending"]')).waitFor();
    await firstRow(page, ids.get('Cat'));
    assert.deepEqual(await recordIds(page), ['Cat', 'Ann', 'Ben', 'Dan'].map((n) => ids.get(n)));
    await page.getByRole('button', { name: 'Age', exact: true }).click();
    await firstRow(page, ids.get('Dan'));

    // Filtered on an answer: age more than 35.
    await page.getByRole('button', { name: 'Add answer filter' }).click();
    await page.getByRole('combobox', { name: 'Question of filter 1' }).selectOption({ label: 'Age' });
    await page.getByRole('combobox', { name: 'Comparison of filter 1' }).selectOption({ label: 'more than' });
    await page.getByRole('textbox', { name: 'Value of filter 1' }).fill('35');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('status').filter({ hasText: 'Records 1–2' }).waitFor();
    assert.deepEqual(await recordIds(page), ['Dan', 'Ben'].map((n) => ids.get(n)));
    // And searched: only Ben's record says "Ben".
    await page.getByRole('searchbox', { name: 'Search' }).fill('Ben');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('status').filter({ hasText: 'Records 1–1' }).waitFor();
    assert.deepEqual(await recordIds(page), [ids.get('Ben')]);

    // Ben's record: answers by group and repeat, the photo shown, approved with a note.
    await page.getByRole('link', { name: `Open record ${ids.get('Ben')}` }).click();
    await page.getByRole('heading', { name: `Record ${ids.get('Ben')}`, level: 1 }).waitFor();
    await page.getByRole('region', { name: 'Address' }).getByText('Kisumu').waitFor();
    await page.getByRole('region', { name: 'Children 2' }).getByText('Dick').waitFor();
    await page.getByText('Firefox, Chrome').waitFor();
    const photo = page.getByRole('img', { name: /^Photo: house-1\.png$/ });
    await photo.waitFor();
    // Polled from here: waitForFunction evals its predicate in the page, which the app's CSP refuses.
    const loaded = (): Promise<boolean> =>
      photo.evaluate((element) => {
        const img = element as unknown as { complete: boolean; naturalWidth: number };
        return img.complete && img.naturalWidth === 48;
      });
    for (let tries = 0; !(await loaded()); tries++) {
      assert.ok(tries < 200, 'the photo loads at its natural width of 48 px');
      await page.waitForTimeout(100);
    }
    await page.getByRole('radio', { name: 'Approved' }).check();
    await page.getByRole('textbox', { name: 'Note' }).fill('Checked against the paper form.');
    await page.getByRole('button', { name: 'Save review' }).click();
    await page.getByRole('status').filter({ hasText: 'Marked approved.' }).waitFor();
    await page.getByRole('list', { name: 'Earlier reviews' }).getByText('Checked against the paper form.').waitFor();
    const reviewed = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}/${ids.get('Ben')}`, headers: dana.auth });
    assert.equal(reviewed.json<{ _review_status: string }>()._review_status, '1');
    assert.equal(reviewed.json<{ _review_comment: string }>()._review_comment, 'Checked against the paper form.');
    // Tagged.
    await page.getByRole('textbox', { name: 'New tags' }).fill('verified');
    await page.getByRole('button', { name: 'Add tags' }).click();
    await page.getByRole('button', { name: 'Remove tag verified' }).waitFor();
    await screenshots(page, 'data-record');

    // Back in the table, the review shows and a filter on it finds the record; Cat's record is deleted.
    await page.getByRole('link', { name: 'Back to the records' }).click();
    await page.getByRole('heading', { name: 'Household: records', level: 1 }).waitFor();
    await page.getByRole('combobox', { name: 'Review' }).selectOption({ label: 'Approved' });
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('status').filter({ hasText: 'Records 1–1' }).waitFor();
    assert.deepEqual(await recordIds(page), [ids.get('Ben')]);
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByRole('status').filter({ hasText: 'Records 1–4 of 4' }).waitFor();
    await page.getByRole('checkbox', { name: `Select record ${ids.get('Cat')}` }).check();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete selected (1)' }).click();
    await page.getByRole('status').filter({ hasText: '1 record was deleted' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Records 1–3 of 3' }).waitFor();
    const gone = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}/${ids.get('Cat')}`, headers: dana.auth });
    assert.equal(gone.statusCode, 404);

    // The map: no tile server is set, so the points show on a plain background; a click on the
    // cluster at the centre lists its records, and one opens.
    await page.getByRole('link', { name: 'Map', exact: true }).click();
    await page.getByRole('heading', { name: 'Household: map', level: 1 }).waitFor();
    await page.getByRole('status').filter({ hasText: '3 records with a location' }).waitFor();
    const map = page.getByRole('region', { name: 'Map of the records' });
    await map.locator('canvas').first().waitFor();
    await page.waitForTimeout(500);
    await screenshots(page, 'data-map');
    await map.click();
    await page.getByRole('heading', { name: '3 records here' }).waitFor();
    await page.getByRole('link', { name: `Record ${ids.get('Dan')}` }).click();
    await page.getByRole('heading', { name: `Record ${ids.get('Dan')}`, level: 1 }).waitFor();

    // The summary: per day, per enumerator, per choice.
    await page.getByRole('link', { name: 'Summary', exact: true }).click();
    await page.getByRole('heading', { name: 'Household: summary', level: 1 }).waitFor();
    const enumerators = page.getByRole('table', { name: 'Submissions per enumerator' });
    await enumerators.getByRole('row', { name: /dana 3/ }).waitFor();
    await page.getByRole('table', { name: 'Answers to Browsers' }).getByRole('row', { name: /Firefox 3 100%/ }).waitFor();
    await screenshots(page, 'data-summary');

    assert.deepEqual(browsing.errors, []);
    assert.deepEqual(browsing.outside, []);
  } finally {
    await browsing.close();
  }
});
