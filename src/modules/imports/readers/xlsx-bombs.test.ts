// Zip bombs and other amplifying workbooks given to the record import's .xlsx reader: each is
// refused with a clear ImportFileError, read in bounded memory (the sheet is streamed).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bombWorkbook, SHEET_END, SHEET_START, type BombBookOptions } from '../../../../packages/xlsform/test/zip-bomb.ts';
import { ImportFileError } from './errors.ts';
import { countXlsxRows, NOT_A_WORKBOOK, readXlsxRows } from './xlsx.ts';

const MB = 1024 * 1024;
let dir: string;
let n = 0;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'xlsx-bombs-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function bombFile(options: BombBookOptions): Promise<string> {
  const path = join(dir, `bomb-${n++}.xlsx`);
  writeFileSync(path, await bombWorkbook(options));
  return path;
}

async function readAll(path: string): Promise<string[][]> {
  const rows: string[][] = [];
  for await (const row of readXlsxRows(path)) rows.push(row);
  return rows;
}

function refusedWith(pattern: RegExp): (err: unknown) => boolean {
  return (err) => {
    assert.ok(err instanceof ImportFileError, String(err));
    assert.match(err.message, pattern);
    return true;
  };
}

const cell = (ref: string, text: string): string => `<c r="${ref}" t="inlineStr"><is><t>${text}</t></is></c>`;

describe('the import reader refuses zip bombs', () => {
  test('three sheets of 500 MB each: too large in all, before anything is inflated', async () => {
    const path = await bombFile({ padBytes: 500 * MB, sheets: 3 });
    const tooLarge = /^The workbook is too large when uncompressed \(more than 1024 MB\): its parts inflate to more than 1\d\d\d MB\.$/;
    await assert.rejects(readAll(path), refusedWith(tooLarge));
    await assert.rejects(countXlsxRows(path), refusedWith(tooLarge));
  });

  test('one sheet of 500 MB of spaces: refused after a few megabytes, not "Invalid string length"', async () => {
    const path = await bombFile({ padBytes: 500 * MB });
    const noMarkup = /^The workbook is not one Excel could open: xl\/worksheets\/sheet1.xml holds more than 4 MB with no markup/;
    await assert.rejects(readAll(path), refusedWith(noMarkup));
    await assert.rejects(countXlsxRows(path), refusedWith(noMarkup));
  });

  test('a CDATA section of angle brackets is no way around it', async () => {
    const path = await bombFile({
      padBytes: 50 * MB,
      padByte: 0x3c,
      sheetHead: `${SHEET_START}<row r="1">${cell('A1', 'name')}</row><row r="2"><c r="A2" t="inlineStr"><is><t><![CDATA[`,
      sheetTail: `]]></t></is></c></row>${SHEET_END}`,
    });
    await assert.rejects(readAll(path), refusedWith(/holds more than 4 MB with no markup/));
  });

  test('a sheet that lies about its size stops where the size it declared ends', async () => {
    const path = await bombFile({ padBytes: 200 * MB, declaredSize: 10_000 });
    await assert.rejects(readAll(path), refusedWith(new RegExp(`^${NOT_A_WORKBOOK.replace('.', '\\.')}$`)));
    await assert.rejects(countXlsxRows(path), refusedWith(/not an Excel workbook/));
  });

  test('a shared-strings part over 64 MB is refused before it is read', async () => {
    const path = await bombFile({
      padBytes: 0,
      parts: [{ name: 'xl/sharedStrings.xml', head: '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>', padBytes: 100 * MB, tail: '</t></si></sst>' }],
    });
    await assert.rejects(readAll(path), refusedWith(/^The workbook is too large when uncompressed \(more than 64 MB in one part\): xl\/sharedStrings.xml inflates to 100 MB\.$/));
  });

  test('one shared string named by every cell of a row cannot make the row huge', async () => {
    const big = 'x'.repeat(30_000);
    const cells = Array.from({ length: 200 }, (_, i) => `<c r="${String.fromCharCode(65 + (i % 26))}${String.fromCharCode(65 + Math.floor(i / 26))}2" t="s"><v>0</v></c>`).join('');
    const path = await bombFile({
      padBytes: 0,
      sheetHead: `${SHEET_START}<row r="1">${cell('A1', 'name')}</row><row r="2">${cells}</row>${SHEET_END}`,
      sheetTail: '',
      parts: [{ name: 'xl/sharedStrings.xml', head: `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>${big}</t></si></sst>` }],
    });
    await assert.rejects(readAll(path), refusedWith(/a row of xl\/worksheets\/sheet1.xml holds more than 4,000,000 characters/));
  });

  test('a cell beyond column XFD is refused (the row is not padded out to it)', async () => {
    const path = await bombFile({ padBytes: 0, sheetHead: `${SHEET_START}<row r="1">${cell('A1', 'name')}${cell('ZZZZZ1', 'far')}</row>${SHEET_END}`, sheetTail: '' });
    await assert.rejects(readAll(path), refusedWith(/lies beyond column XFD/));
  });

  test('a small workbook of the same shape reads', async () => {
    const path = await bombFile({ padBytes: 1000 });
    assert.deepEqual(await readAll(path), [
      ['type', 'name', 'label'],
      ['text', 'q', 'Q'],
    ]);
    assert.equal(await countXlsxRows(path), 1);
  });
});
