// Formula-like answers in every export format (issue 21): CSV files, which spreadsheet programs
// open and evaluate, keep onadata's protection (a leading `'`, `|` as `\|`); XLSX and XLS text
// cells and SPSS strings are never evaluated, so they hold the answers exactly as answered.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as XLSX from '@e965/xlsx';
import Papa from 'papaparse';
import { createUser, multipart, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { unzip } from '../zip.ts';
import { psppUnavailableReason, readWithPspp } from '../../src/lib/writers/sav/testing/pspp.ts';

const ANSWERS = ['=1+2', '+254700000000 x', '-minus', '@home', '%pct', 'a|b'] as const;
/** onadata's sanitize_for_export of each answer, as CSV keeps it. */
const PROTECTED = ["'=1+2", "'+254700000000 x", "'-minus", "'@home", "'%pct", 'a\\|b'] as const;
/** The select_multiple's choice labels joined, protected as one text (sectioned CSV keeps that column). */
const PROTECTED_LABELS = "'=1+2 +254700000000 x -minus @home %pct a\\|b";
const NAMES = ['eq', 'plus', 'minus', 'at', 'pct', 'pipe'] as const;

const FORM = [
  'survey,,,',
  ',type,name,label',
  ...NAMES.map((name) => `,text,${name},${name}`),
  ',begin repeat,items,Items',
  ',text,said,Said',
  ',end repeat,,',
  ',select all that apply marks,marks,Marks',
  'choices,,,',
  ',list name,name,label',
  ...ANSWERS.map((label, i) => `,marks,m${i + 1},"${label}"`),
  'settings,,,',
  ',form_id,version,',
  ',cell_text,1,',
  '',
].join('\n');

const SUBMISSION =
  `<?xml version="1.0"?><cell_text id="cell_text" version="1">` +
  NAMES.map((name, i) => `<${name}>${ANSWERS[i]}</${name}>`).join('') +
  ANSWERS.map((answer) => `<items><said>${answer}</said></items>`).join('') +
  `<marks>${ANSWERS.map((_, i) => `m${i + 1}`).join(' ')}</marks>` +
  `<meta><instanceID>uuid:5a0c2a47-6a53-4b2c-9a43-0f5e1d8e7c11</instanceID></meta></cell_text>`;

/** Choice labels in the select_multiple's own column and its value columns (valueSelectMultiples). */
const OPTIONS = 'show_choice_labels=true&value_select_multiples=true';

let server: TestServer;
let bob: TestUser;
let formId: number;

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  const form = multipart({}, [formFile(FORM, 'cell_text.csv')]);
  const published = await server.app.inject({ method: 'POST', url: '/api/v1/forms', payload: form.payload, headers: { ...bob.auth, ...form.headers } });
  assert.equal(published.statusCode, 201, published.body);
  formId = Number(published.json().formid);
  const body = multipart({}, [{ name: 'xml_submission_file', fileName: 'submission.xml', content: SUBMISSION, contentType: 'text/xml' }]);
  const submitted = await server.app.inject({ method: 'POST', url: `/${bob.username}/submission`, payload: body.payload, headers: { ...bob.auth, ...body.headers } });
  assert.equal(submitted.statusCode, 201, submitted.body);
});
after(() => server.close());

async function download(path: string): Promise<Buffer> {
  const res = await server.app.inject({ method: 'GET', url: path, headers: bob.auth });
  assert.equal(res.statusCode, 200, res.body);
  return res.rawPayload;
}

function table(text: string): string[][] {
  return Papa.parse<string[]>(text.trim(), { skipEmptyLines: true }).data;
}

/** The values under the headers `names` in the first data row. */
function columns(rows: readonly (readonly unknown[])[], names: readonly string[]): unknown[] {
  const [header = [], row = []] = rows;
  return names.map((name) => {
    const at = header.indexOf(name);
    assert.ok(at >= 0, `column ${name} in ${header.join(',')}`);
    return row[at];
  });
}

/** The survey's answers, its joined choice labels and its value columns: what each format writes. */
function expectSurvey(rows: readonly (readonly unknown[])[], values: readonly string[], joined: string): void {
  assert.deepEqual(columns(rows, NAMES), values, 'text answers');
  assert.deepEqual(columns(rows, ['marks']), [joined], 'choice labels of the select_multiple');
  assert.deepEqual(columns(rows, ANSWERS.map((label) => `marks/${label}`)), values, 'value columns of the select_multiple');
}

function sheetRows(book: XLSX.WorkBook, name: string): unknown[][] {
  const sheet = book.Sheets[name];
  assert.ok(sheet, `sheet ${name} of ${book.SheetNames.join(', ')}`);
  return XLSX.utils.sheet_to_json(sheet, { header: 1, raw: true, defval: null });
}

function expectWorkbook(bytes: Buffer): void {
  const book = XLSX.read(bytes, { type: 'buffer' });
  expectSurvey(sheetRows(book, 'cell_text'), ANSWERS, ANSWERS.join(' '));
  const items = sheetRows(book, 'items');
  assert.deepEqual(items.slice(1).map((row) => row[0]), [...ANSWERS], 'repeat sheet');
}

describe('formula-like answers in exports', () => {
  test('xlsx: text cells hold the answers as answered (survey, repeat and value columns)', async () => {
    expectWorkbook(await download(`/api/v1/forms/${formId}.xlsx?${OPTIONS}`));
  });

  test('xls: text cells hold the answers as answered', async () => {
    expectWorkbook(await download(`/api/v1/forms/${formId}.xls?${OPTIONS}`));
  });

  test('savzip: SPSS strings hold the answers as answered', { skip: !process.env['CI'] && psppUnavailableReason() }, async () => {
    const files = await unzip(await download(`/api/v1/forms/${formId}.savzip?${OPTIONS}`));
    const main = readWithPspp([files.get('cell_text.sav') ?? new Uint8Array()]);
    const [, row = []] = main.data;
    // SPSS names are made valid by the writer: read by position (6 answers, marks, its 6 value columns).
    const cells = row.map((cell) => cell.trim());
    assert.deepEqual(cells.slice(0, 6), [...ANSWERS], 'text answers');
    assert.equal(cells[6], ANSWERS.join(' '), 'choice labels of the select_multiple');
    assert.deepEqual(cells.slice(7, 13), [...ANSWERS], 'value columns of the select_multiple');
    const items = readWithPspp([files.get('items.sav') ?? new Uint8Array()]);
    assert.deepEqual(items.data.slice(1).map((r) => r[0]?.trim()), [...ANSWERS], 'repeat file');
  });

  test('csv: still protected exactly as onadata protects it, with and without options', async () => {
    const flat = table((await download(`/api/v1/forms/${formId}.csv`)).toString('utf8'));
    assert.deepEqual(columns(flat, NAMES), [...PROTECTED]);
    assert.deepEqual(columns(flat, ANSWERS.map((_, i) => `items[${i + 1}]/said`)), [...PROTECTED]);
    const labelled = table((await download(`/api/v1/forms/${formId}.csv?${OPTIONS}`)).toString('utf8'));
    assert.deepEqual(columns(labelled, NAMES), [...PROTECTED]);
    assert.deepEqual(columns(labelled, ANSWERS.map((label) => `marks/${label}`)), [...PROTECTED]);
  });

  test('csvzip: still protected exactly as onadata protects it', async () => {
    const files = await unzip(await download(`/api/v1/forms/${formId}.csvzip?${OPTIONS}`));
    const main = table(files.get('cell_text.csv')?.toString('utf8') ?? '');
    expectSurvey(main, PROTECTED, PROTECTED_LABELS);
    const items = table(files.get('items.csv')?.toString('utf8') ?? '');
    assert.deepEqual(items.slice(1).map((row) => row[0]), [...PROTECTED]);
  });
});
