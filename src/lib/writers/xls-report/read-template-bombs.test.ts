import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bombWorkbook } from '../../../../packages/xlsform/test/zip-bomb.ts';
import { TemplateError } from './template.ts';
import { readTemplate } from './read-template.ts';

const MB = 1024 * 1024;

test('a template that is a zip bomb is refused before SheetJS reads it', async () => {
  const bomb = await bombWorkbook({ padBytes: 500 * MB });
  await assert.rejects(readTemplate(bomb), (err: unknown) => {
    assert.ok(err instanceof TemplateError, String(err));
    assert.equal(err.message, 'the workbook is too large when uncompressed (more than 64 MB): the part xl/worksheets/sheet1.xml alone inflates to 500 MB');
    return true;
  });
});

test('a template part that lies about its size is refused as no spreadsheet', async () => {
  const bomb = await bombWorkbook({ padBytes: 200 * MB, declaredSize: 1000 });
  await assert.rejects(readTemplate(bomb), /the file is not an \.xlsx or \.xls workbook/);
});

test('the same workbook, small, is read through the stored copy', async () => {
  const book = await readTemplate(await bombWorkbook({ padBytes: 100 }));
  assert.deepEqual(book.sheets[0], { name: 'survey', rows: [['type', 'name', 'label'], ['text', 'q', 'Q']] });
});
