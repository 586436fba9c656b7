// Questions named like the members every JavaScript object inherits (constructor, toString,
// valueOf, hasOwnProperty) are ordinary XLSForm names: a record that leaves them unanswered exports
// them as missing, in every format, and the data API queries, filters and projects them like any
// other field, instead of failing on (or matching) the inherited function.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as XLSX from '@e965/xlsx';
import { createUser, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';

const FORM = [
  'survey,,,',
  ',type,name,label',
  ',text,constructor,Constructor',
  ',text,toString,To string',
  ',integer,valueOf,Value',
  ',begin repeat,hasOwnProperty,Items',
  ',text,isPrototypeOf,Name',
  ',end repeat,,',
  'settings,,,',
  ',form_title,form_id,version',
  ',Inherited names,inherited_names,2026112501',
].join('\n');

let server: TestServer;
let dataDir: string;
let bob: TestUser;
let formId: number;

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gather-inherited-names-'));
  server = await startTestServer({ DATA_DIR: dataDir });
  bob = await createUser(server.app, 'bob');
  formId = await publishForm(server.app, bob, formFile(FORM, 'inherited_names.csv'));
  for (const submission of [{ toString: 'only this' }, { constructor: 'built', valueOf: 3, hasOwnProperty: [{ isPrototypeOf: 'first' }] }]) {
    const res = await server.app.inject({
      method: 'POST',
      url: '/api/v1/submissions',
      headers: { ...bob.auth, 'content-type': 'application/json' },
      payload: { id: 'inherited_names', submission },
    });
    assert.equal(res.statusCode, 201, res.body);
  }
});
after(async () => {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const download = (suffix: string) => server.app.inject({ method: 'GET', url: `/api/v1/forms/${formId}.${suffix}`, headers: bob.auth });

describe('questions named like inherited object members', () => {
  test('csv: an unanswered one reads n/a, an answered one its value', async () => {
    const res = await download('csv');
    assert.equal(res.statusCode, 200, res.body);
    const [header, first, second] = res.body.split('\n').map((line) => line.split(','));
    assert.deepEqual(header?.slice(0, 4), ['constructor', 'toString', 'valueOf', 'hasOwnProperty[1]/isPrototypeOf']);
    assert.deepEqual(first?.slice(0, 4), ['n/a', 'only this', 'n/a', 'n/a']);
    assert.deepEqual(second?.slice(0, 4), ['built', 'n/a', '3', 'first']);
  });

  test('xlsx: the survey sheet and the repeat sheet', async () => {
    const res = await download('xlsx');
    assert.equal(res.statusCode, 200, res.body);
    const book = XLSX.read(res.rawPayload, { type: 'buffer' });
    const rows = XLSX.utils.sheet_to_json<unknown[]>(book.Sheets[book.SheetNames[0] ?? ''] as XLSX.WorkSheet, { header: 1, defval: null });
    // Sheets leave a missing answer empty.
    assert.deepEqual(rows.slice(1).map((row) => row.slice(0, 3)), [
      [null, 'only this', null],
      ['built', null, 3],
    ]);
    assert.equal(book.SheetNames.length, 2);
  });

  test('xls, csvzip, savzip and kml are made too', async () => {
    for (const suffix of ['xls', 'csvzip', 'savzip', 'kml']) {
      const res = await download(suffix);
      assert.equal(res.statusCode, 200, `${suffix}: ${res.body.slice(0, 200)}`);
      assert.ok(res.rawPayload.byteLength > 100, suffix);
    }
  });

  test('the data API shows the records as submitted', async () => {
    const res = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}`, headers: bob.auth });
    assert.equal(res.statusCode, 200);
    const records = res.json<Array<Record<string, unknown>>>();
    assert.equal(records[0]?.['toString'], 'only this');
    assert.equal(Object.hasOwn(records[0] ?? {}, 'constructor'), false);
  });
});

describe('the data API with fields named like inherited object members', () => {
  const data = (query: string) => server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?${query}`, headers: bob.auth });
  /** Each record's own value of `field` (a plain `r[field]` would find the inherited member). */
  const values = (res: Awaited<ReturnType<typeof data>>, field: string) => res.json<Array<Record<string, unknown>>>().map((r) => (Object.hasOwn(r, field) ? r[field] : undefined));

  test('query matches their answers, as any field', async () => {
    for (const [query, expected] of [
      [{ constructor: 'built' }, ['built']],
      [{ toString: 'only this' }, [undefined]],
      [{ valueOf: { $gte: 2 } }, ['built']],
      [{ valueOf: null }, [undefined]],
    ] as const) {
      const res = await data(`query=${encodeURIComponent(JSON.stringify(query))}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(values(res, 'constructor'), expected, JSON.stringify(query));
    }
  });

  test('an operator or filter named like one is refused or ignored, never run', async () => {
    const operator = await data(`query=${encodeURIComponent(JSON.stringify({ valueOf: { constructor: 1 } }))}`);
    assert.equal(operator.statusCode, 400, operator.body);
    assert.match(operator.json().detail, /Unsupported query operator "constructor"/);
    const filter = await data('toString=x');
    assert.equal(filter.statusCode, 200, filter.body);
    assert.equal(filter.json<unknown[]>().length, 2);
  });

  test('fields projects them, null where unanswered', async () => {
    const res = await data(`fields=${encodeURIComponent(JSON.stringify(['constructor', 'toString']))}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), [
      { constructor: null, toString: 'only this' },
      { constructor: 'built', toString: null },
    ]);
  });
});
