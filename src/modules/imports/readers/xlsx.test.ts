import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as XLSX from '@e965/xlsx';
import { countXlsxRows, readXlsxRows } from './xlsx.ts';

const FIXTURES = join(import.meta.dirname, '../../../../test/fixtures/imports');

async function readCount(path: string): Promise<number> {
  let rows = 0;
  for await (const row of readXlsxRows(path)) {
    void row;
    rows++;
  }
  return rows - 1;
}

test('counting an xlsx sheet\'s row tags gives the rows the reader yields, header aside', async () => {
  for (const name of ['good.xlsx', 'tutorial.xlsx', 'double_repeat.xlsx', 'form_with_multiple_select.xlsx']) {
    const path = join(FIXTURES, name);
    assert.equal(await countXlsxRows(path), await readCount(path), name);
  }
});

test('row tags are counted across the pieces the sheet is inflated in, and cells holding "<row>" text are not rows', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'xlsx-count-'));
  try {
    // Thousands of rows: the sheet inflates in several chunks, so tags fall on chunk edges.
    const data: string[][] = [['name', 'note']];
    for (let n = 0; n < 5000; n++) data.push([`person ${n}`, n % 7 === 0 ? '<row> and <x:row r="1">' : 'plain']);
    for (const bookSST of [false, true]) {
      const book = XLSX.utils.book_new();
      XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(data), 'sheet');
      const path = join(dir, `rows-${bookSST}.xlsx`);
      writeFileSync(path, XLSX.write(book, { type: 'buffer', bookType: 'xlsx', compression: true, bookSST }) as Buffer);
      assert.equal(await countXlsxRows(path), 5000);
      assert.equal(await readCount(path), 5000);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
