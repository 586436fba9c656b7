import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as XLSX from '@e965/xlsx';
import yauzl from 'yauzl';
import type { Cell } from './cell.ts';
import { xlsxChunks, xlsxOnePassChunks, type RowBatch, type XlsxOptions } from './xlsx-writer.ts';
import { memorySpool } from '../spool.ts';
import { SpreadsheetLimitError } from './sheet-parts.ts';
import type { SheetSource } from './cell.ts';

async function collect(sheets: SheetSource, options: XlsxOptions = {}): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of xlsxChunks(sheets, options)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function read(bytes: Buffer): XLSX.WorkBook {
  return XLSX.read(bytes, { type: 'buffer', cellDates: false, cellNF: true });
}

function grid(book: XLSX.WorkBook, name: string): unknown[][] {
  const sheet = book.Sheets[name];
  assert.ok(sheet, `sheet ${name} exists`);
  return XLSX.utils.sheet_to_json(sheet, { header: 1, raw: true, defval: null, blankrows: true });
}

async function zipEntries(bytes: Buffer): Promise<Map<string, string>> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (error, file) => (error ? reject(error) : resolve(file))),
  );
  const entries = new Map<string, string>();
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      zip.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        const parts: Buffer[] = [];
        stream.on('data', (b: Buffer) => parts.push(b));
        stream.on('end', () => {
          entries.set(entry.fileName, Buffer.concat(parts).toString('utf8'));
          zip.readEntry();
        });
      });
    });
    zip.on('end', resolve);
    zip.on('error', reject);
    zip.readEntry();
  });
  return entries;
}

test('strings, numbers, booleans, blanks and dates read back with their types', async () => {
  const rows: Cell[][] = [
    ['name', 'age', 'ok', 'born', 'seen'],
    ['Bob', 25, true, { kind: 'date', iso: '2013-02-18' }, { kind: 'datetime', iso: '2013-02-18T15:54:01+03:00' }],
    [null, 1.5, false, null, { kind: 'datetime', iso: '2013-02-18T15:54:01.500' }],
    ['', null, null, null, 'last'],
  ];
  const book = read(await collect([{ name: 'survey', rows }]));
  assert.deepEqual(book.SheetNames, ['survey']);
  const sheet = book.Sheets.survey;
  assert.ok(sheet);
  assert.equal(sheet.B2?.v, 25);
  assert.equal(sheet.C2?.t, 'b');
  assert.equal(sheet.C2?.v, true);
  assert.equal(sheet.D2?.t, 'n');
  assert.equal(sheet.D2?.v, 41323); // 2013-02-18
  assert.equal(sheet.D2?.z, 'yyyy-mm-dd');
  assert.ok(Math.abs(Number(sheet.E2?.v) - (41323 + (15 * 3600 + 54 * 60 + 1) / 86400)) < 1e-9);
  assert.equal(sheet.E2?.z, 'yyyy-mm-dd hh:mm:ss');
  assert.equal(sheet.A3, undefined);
  assert.equal(sheet.B3?.v, 1.5);
  assert.equal(sheet.C3?.v, false);
  assert.equal(sheet.E4?.v, 'last');
  assert.equal(sheet['!ref'], 'A1:E4');
});

test('unparseable or pre-1900-03 dates stay text', async () => {
  const rows: Cell[][] = [[{ kind: 'date', iso: 'not a date' }, { kind: 'date', iso: '1899-01-01' }, { kind: 'date', iso: '2023-02-31' }]];
  const sheet = read(await collect([{ name: 's', rows }])).Sheets.s;
  assert.equal(sheet?.A1?.v, 'not a date');
  assert.equal(sheet?.B1?.v, '1899-01-01');
  assert.equal(sheet?.C1?.v, '2023-02-31');
});

test('markup, control characters, CR, surrogates and _xHHHH_ survive the round trip', async () => {
  const tricky = ['a<b>&"c\'', 'tab\there\nline\rend', 'bell\u0007nul\u0000', ' padded ', 'literal _x0041_ text', 'emoji 😀 ok', 'lone \ud800 surrogate', 'nonchar \uffff'];
  const book = read(await collect([{ name: 's', rows: [tricky] }]));
  const values = grid(book, 's')[0];
  assert.deepEqual(values, [
    'a<b>&"c\'',
    'tab\there\nline\rend',
    'bell\u0007nul\u0000',
    ' padded ',
    'literal _x0041_ text',
    'emoji 😀 ok',
    'lone \ufffd surrogate',
    'nonchar \ufffd',
  ]);
});

test('cells longer than 32,767 characters are cut, without splitting a surrogate pair', async () => {
  const long = 'x'.repeat(32_766) + '😀' + 'tail';
  const book = read(await collect([{ name: 's', rows: [['y'.repeat(40_000), long]] }]));
  const [a, b] = grid(book, 's')[0] ?? [];
  assert.equal(a, 'y'.repeat(32_767));
  assert.equal(b, 'x'.repeat(32_766));
});

test('sheet names are made valid and unique; an empty workbook still has one sheet', async () => {
  const book = read(
    await collect([
      { name: 'a/b:c?', rows: [] },
      { name: 'A_B_C_', rows: [] },
      { name: 'x'.repeat(40), rows: [] },
      { name: 'History', rows: [] },
    ]),
  );
  assert.deepEqual(book.SheetNames, ['a_b_c_', 'A_B_C__2', 'x'.repeat(31), 'History_2']);
  assert.deepEqual(read(await collect([])).SheetNames, ['Sheet1']);
});

test('a sheet past the row limit continues on further sheets, each with the header rows', async () => {
  function* rows(): Generator<Cell[]> {
    yield ['n', 'double'];
    for (let i = 1; i <= 10; i += 1) yield [i, i * 2];
  }
  const book = read(
    await collect(
      [
        { name: 'member', rows: rows(), repeatRows: 1 },
        { name: 'other', rows: [['only']] },
      ],
      { maxRows: 4 },
    ),
  );
  assert.deepEqual(book.SheetNames, ['member', 'member (2)', 'member (3)', 'member (4)', 'other']);
  assert.deepEqual(grid(book, 'member'), [['n', 'double'], [1, 2], [2, 4], [3, 6]]);
  assert.deepEqual(grid(book, 'member (2)'), [['n', 'double'], [4, 8], [5, 10], [6, 12]]);
  assert.deepEqual(grid(book, 'member (4)'), [['n', 'double'], [10, 20]]);
  assert.deepEqual(grid(book, 'other'), [['only']]);
});

test('a sheet of exactly the row limit does not get an empty continuation', async () => {
  const book = read(await collect([{ name: 's', rows: [[1], [2], [3]] }], { maxRows: 3 }));
  assert.deepEqual(book.SheetNames, ['s']);
});

test('sheets are pulled one after another, the next only once the previous is written', async () => {
  const log: string[] = [];
  async function* rows(name: string): AsyncGenerator<Cell[]> {
    log.push(`start ${name}`);
    yield [name];
    log.push(`end ${name}`);
  }
  await collect([
    { name: 'one', rows: rows('one') },
    { name: 'two', rows: rows('two') },
  ]);
  assert.deepEqual(log, ['start one', 'end one', 'start two', 'end two']);
});

test('a row wider than 16,384 used columns is refused; trailing blanks past it are fine', async () => {
  const wide: Cell[] = Array.from({ length: 16_385 }, (_, i) => i);
  await assert.rejects(collect([{ name: 's', rows: [wide] }]), SpreadsheetLimitError);
  const padded: Cell[] = [...Array.from({ length: 16_384 }, () => 1), null, ''];
  const book = read(await collect([{ name: 's', rows: [padded] }]));
  assert.equal(book.Sheets.s?.['!ref'], 'A1:XFD1');
});

test('an error from the rows surfaces to the reader, and the rows are released when the reader stops', async () => {
  async function* failing(): AsyncGenerator<Cell[]> {
    yield ['ok'];
    throw new Error('database went away');
  }
  await assert.rejects(collect([{ name: 's', rows: failing() }]), /database went away/);

  let released = false;
  async function* endless(): AsyncGenerator<Cell[]> {
    try {
      for (let i = 0; ; i += 1) yield [i, 'some text to fill the chunks quickly'];
    } finally {
      released = true;
    }
  }
  let received = 0;
  for await (const chunk of xlsxChunks([{ name: 's', rows: endless() }])) {
    received += chunk.length;
    if (received > 100_000) break;
  }
  for (let i = 0; i < 50 && !released; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(released, true);
});

test('the package holds the parts Excel expects, worksheets first', async () => {
  const entries = await zipEntries(await collect([{ name: 'a & b', rows: [['x']] }], { date: new Date(Date.UTC(2024, 0, 1)) }));
  assert.deepEqual([...entries.keys()], [
    'xl/worksheets/sheet1.xml',
    'xl/workbook.xml',
    'xl/_rels/workbook.xml.rels',
    'xl/styles.xml',
    '_rels/.rels',
    '[Content_Types].xml',
  ]);
  assert.match(entries.get('xl/workbook.xml') ?? '', /<sheet name="a &amp; b" sheetId="1" r:id="rId1"\/>/);
  assert.match(entries.get('xl/worksheets/sheet1.xml') ?? '', /<row r="1"><c t="inlineStr"><is><t>x<\/t><\/is><\/c><\/row>/);
});

test('CR is written as Excel writes it, so that XML parsers do not turn it into LF', async () => {
  const entries = await zipEntries(await collect([{ name: 's', rows: [['line\r\nend']] }]));
  assert.match(entries.get('xl/worksheets/sheet1.xml') ?? '', /<t>line_x000D_\nend<\/t>/);
});

test('one pass over every sheet writes the workbook the sheet-by-sheet writer writes, continuations included', async () => {
  const member = (i: number): Cell[] => [i, `member ${i}`];
  const visit = (i: number, k: number): Cell[] => [i, k, i % 2 === 0];
  const sequential = read(
    await collect(
      [
        { name: 'household', rows: [['id'], ...Array.from({ length: 7 }, (_, i) => [i])], repeatRows: 1 },
        { name: 'household', rows: [['n', 'name'], ...Array.from({ length: 7 }, (_, i) => member(i))], repeatRows: 1 },
        { name: 'visits', rows: [['n', 'k', 'even'], ...Array.from({ length: 7 }, (_, i) => [visit(i, 1), visit(i, 2)]).flat()], repeatRows: 1 },
      ],
      { maxRows: 4 },
    ),
  );
  let disposed = 0;
  async function* batches(): AsyncGenerator<Iterable<RowBatch>> {
    yield [[[['id']], [['n', 'name']], [['n', 'k', 'even']]]];
    // Steps in groups of two, the last group of one.
    for (let i = 0; i < 7; i += 2) {
      const steps: RowBatch[] = [[[[i]], [member(i)], [visit(i, 1), visit(i, 2)]]];
      if (i + 1 < 7) steps.push([[[i + 1]], [member(i + 1)], [visit(i + 1, 1), visit(i + 1, 2)]]);
      yield steps;
    }
  }
  const chunks: Uint8Array[] = [];
  const sheets = [{ name: 'household', repeatRows: 1 }, { name: 'household', repeatRows: 1 }, { name: 'visits', repeatRows: 1 }];
  const createSpool = async () => {
    const spool = memorySpool();
    return { ...spool, dispose: async () => { disposed += 1; await spool.dispose(); } };
  };
  for await (const chunk of xlsxOnePassChunks(sheets, batches(), { maxRows: 4, createSpool })) chunks.push(chunk);
  const onePass = read(Buffer.concat(chunks));
  assert.deepEqual(onePass.SheetNames, sequential.SheetNames);
  assert.deepEqual(onePass.SheetNames.slice(0, 4), ['household', 'household (2)', 'household (3)', 'household_2']);
  for (const name of sequential.SheetNames) assert.deepEqual(grid(onePass, name), grid(sequential, name), name);
  // The repeats' parts were spooled: 3 of the second sheet and 5 of the third.
  assert.equal(disposed, 8);
  const entries = await zipEntries(Buffer.concat(chunks));
  assert.deepEqual([...entries.keys()].slice(0, 11), Array.from({ length: 11 }, (_, i) => `xl/worksheets/sheet${i + 1}.xml`));
});
