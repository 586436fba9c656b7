import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as XLSX from '@e965/xlsx';
import { readBiff8 } from '../../../packages/xlsform/src/workbook/biff8.ts';
import type { Cell, SheetSource } from '../xlsx/cell.ts';
import { SpreadsheetLimitError } from '../xlsx/sheet-parts.ts';
import { memorySpool, type Spool } from './spool.ts';
import { xlsChunks, type XlsOptions } from './xls-writer.ts';

async function collect(sheets: SheetSource, options: Partial<XlsOptions> = {}): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of xlsChunks(sheets, { createSpool: () => Promise.resolve(memorySpool()), ...options })) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function read(bytes: Buffer): XLSX.WorkBook {
  return XLSX.read(bytes, { type: 'buffer', cellNF: true });
}

function grid(book: XLSX.WorkBook, name: string): unknown[][] {
  const sheet = book.Sheets[name];
  assert.ok(sheet, `sheet ${name} exists`);
  return XLSX.utils.sheet_to_json(sheet, { header: 1, raw: true, defval: null, blankrows: true });
}

test('values keep their types: text, numbers, booleans, dates, blanks', async () => {
  const rows: Cell[][] = [
    ['name', 'age', 'ok', 'born', 'seen'],
    ['Bob', 25, true, { kind: 'date', iso: '2013-02-18' }, { kind: 'datetime', iso: '2013-02-18T15:54:01' }],
    [null, 1.5, false, null, 'été ✓ 😀'],
  ];
  const bytes = await collect([{ name: 'survey', rows }]);
  const book = read(bytes);
  assert.deepEqual(book.SheetNames, ['survey']);
  const sheet = book.Sheets.survey;
  assert.equal(sheet?.A2?.v, 'Bob');
  assert.equal(sheet?.B2?.v, 25);
  assert.equal(sheet?.C2?.v, true);
  assert.equal(sheet?.D2?.v, 41323);
  assert.equal(sheet?.D2?.z, 'yyyy-mm-dd');
  assert.equal(sheet?.E2?.z, 'yyyy-mm-dd hh:mm:ss');
  assert.equal(sheet?.A3, undefined);
  assert.equal(sheet?.E3?.v, 'été ✓ 😀');
  assert.equal(sheet?.['!ref'], 'A1:E3');

  // Our own BIFF8 reader (packages/xlsform) agrees.
  const ours = readBiff8(bytes);
  assert.deepEqual(ours.sheets.map((s) => s.name), ['survey']);
  const g = ours.sheets[0]?.grid();
  assert.equal(g?.[1]?.[0], 'Bob');
  assert.equal(g?.[1]?.[1], 25);
  assert.deepEqual(g?.[1]?.[3], { date: 41323 });
});

test('strings longer than 255 characters go through the shared-string table, across CONTINUE records', async () => {
  const long = Array.from({ length: 12 }, (_, i) => `${i}:` + (i % 2 === 0 ? 'a'.repeat(3000 + i) : 'ü✓'.repeat(1500 + i)));
  const huge = 'z'.repeat(40_000);
  const rows: Cell[][] = [long, [huge, 'short']];
  const bytes = await collect([{ name: 's', rows }]);
  const values = grid(read(bytes), 's');
  // Compared as booleans: a failure would otherwise print megabytes.
  assert.ok(long.every((text, i) => values[0]?.[i] === text), 'long strings read back by SheetJS');
  assert.equal(values[1]?.[0], 'z'.repeat(32_767), 'cut at 32,767 characters');
  assert.equal(values[1]?.[1], 'short');
  const ours = readBiff8(bytes).sheets[0]?.grid();
  assert.ok(long.every((text, i) => ours?.[0]?.[i] === text), 'long strings read back by our reader');
});

test('sheets past 65,536 rows continue on further sheets with the header repeated', async () => {
  function* rows(): Generator<Cell[]> {
    yield ['n'];
    for (let i = 1; i <= 7; i += 1) yield [i];
  }
  const book = read(await collect([{ name: 'member', rows: rows(), repeatRows: 1 }, { name: 'x', rows: [] }], { maxRows: 3 }));
  assert.deepEqual(book.SheetNames, ['member', 'member (2)', 'member (3)', 'member (4)', 'x']);
  assert.deepEqual(grid(book, 'member (2)'), [['n'], [3], [4]]);
  assert.deepEqual(grid(book, 'member (4)'), [['n'], [7]]);
});

test('a full sheet of 65,536 rows reads back exactly; a FAT past 109 sectors continues in DIFAT sectors', async () => {
  const filler = 'x'.repeat(80);
  function* rows(): Generator<Cell[]> {
    for (let r = 0; r < 65_536; r += 1) yield [r, `${r}${filler}`, -r / 4];
  }
  const bytes = await collect([{ name: 'big', rows: rows() }]);
  assert.ok(bytes.length > 109 * 128 * 512, `file of ${bytes.length} bytes uses DIFAT sectors`);
  const ours = readBiff8(bytes).sheets[0]?.grid();
  assert.equal(ours?.length, 65_536);
  assert.deepEqual(ours?.[65_535], [65_535, `65535${filler}`, -65_535 / 4]);
  const book = XLSX.read(bytes, { type: 'buffer' });
  assert.equal(book.Sheets.big?.['!ref'], 'A1:C65536');
  assert.equal(book.Sheets.big?.B40000?.v, `39999${filler}`);
});

test('rows wider than 256 columns are refused before the first byte, and the spools are released', async () => {
  const disposed: string[] = [];
  const tracked = (name: string): Promise<Spool> => {
    const spool = memorySpool();
    return Promise.resolve({ ...spool, dispose: () => (disposed.push(name), spool.dispose()) });
  };
  let n = 0;
  const chunks: Uint8Array[] = [];
  await assert.rejects(
    (async () => {
      for await (const chunk of xlsChunks([{ name: 's', rows: [[1], Array.from({ length: 257 }, () => 1)] }], { createSpool: () => tracked(`spool${(n += 1)}`) })) chunks.push(chunk);
    })(),
    SpreadsheetLimitError,
  );
  assert.equal(chunks.length, 0);
  assert.deepEqual(disposed, ['spool1', 'spool2']);
});

test('an empty workbook has one empty sheet and is still a valid compound file', async () => {
  const bytes = await collect([]);
  assert.equal(bytes.length % 512, 0);
  assert.deepEqual(read(bytes).SheetNames, ['Sheet1']);
  assert.deepEqual(readBiff8(bytes).sheets.map((s) => s.name), ['Sheet1']);
});
