import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as XLSX from '@e965/xlsx';
import { readBiff8 } from '../../../../packages/xlsform/src/workbook/biff8.ts';
import type { Cell, SheetSource } from '../xlsx/cell.ts';
import { SpreadsheetLimitError } from '../xlsx/sheet-parts.ts';
import { memorySpool, type Spool } from './spool.ts';
import { xlsChunks, xlsOnePassChunks, type XlsOptions } from './xls-writer.ts';

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

test('one pass over records fills every sheet: rows arriving interleaved make the same sheets, continuations and header repeats, as a sheet at a time', async () => {
  const long = 'x'.repeat(300);
  const survey: Cell[][] = [['name', 'n'], ...Array.from({ length: 9 }, (_, i): Cell[] => [`person ${i}`, i])];
  const children: Cell[][] = [['child', 'parent'], ...Array.from({ length: 14 }, (_, i): Cell[] => [i % 4 === 0 ? `${long}${i}` : `kid ${i}`, i % 9])];
  const sheets = [
    { name: 'survey', repeatRows: 1 },
    { name: 'children', repeatRows: 1 },
    { name: 'empty', repeatRows: 0 },
  ];
  // Header rows first, then a record's rows in each sheet at a time: a survey row and 0-3 children.
  const steps: Cell[][][][] = [[[survey[0] as Cell[]], [children[0] as Cell[]], []]];
  let child = 1;
  for (let i = 1; i < survey.length; i++) {
    const kids = children.slice(child, child + (i % 4));
    child += kids.length;
    steps.push([[survey[i] as Cell[]], kids, []]);
  }
  steps.push([[], children.slice(child), []]);
  async function* batches(): AsyncGenerator<Iterable<Cell[][][]>> {
    yield steps.slice(0, 4);
    yield steps.slice(4);
  }
  const chunks: Uint8Array[] = [];
  for await (const chunk of xlsOnePassChunks(sheets, batches(), { createSpool: () => Promise.resolve(memorySpool()), maxRows: 4 })) chunks.push(chunk);
  const onePass = read(Buffer.concat(chunks));
  const sequential = read(await collect([
    { name: 'survey', repeatRows: 1, rows: survey },
    { name: 'children', repeatRows: 1, rows: children },
    { name: 'empty', repeatRows: 0, rows: [] },
  ], { maxRows: 4 }));
  assert.deepEqual(onePass.SheetNames, sequential.SheetNames);
  assert.deepEqual(onePass.SheetNames.slice(0, 4), ['survey', 'survey (2)', 'survey (3)', 'children']);
  for (const name of sequential.SheetNames) assert.deepEqual(grid(onePass, name), grid(sequential, name), name);
  assert.deepEqual(grid(onePass, 'children (2)')[0], ['child', 'parent'], 'a continuation starts with the header row');
  assert.equal(grid(onePass, 'children')[1]?.[0], `${long}0`, 'long texts go through the shared strings');
});
