import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as XLSX from '@e965/xlsx';
import { memorySpool, xlsChunks } from '../xls/index.ts';
import type { Cell } from '../xlsx/cell.ts';
import { fillReport, type RecordPasses, type ReportFacts } from './fill.ts';
import { readTemplate } from './read-template.ts';
import { planReport, TemplateError, type TemplateCell, type TemplateWorkbook } from './template.ts';

const FACTS: ReportFacts = { title: 'Household', idString: 'household', formId: 7, date: new Date('2024-05-06T07:08:09Z') };

function records(rows: readonly Record<string, string>[]): RecordPasses {
  return async function* () {
    for (const row of rows) yield (field: string) => row[field] ?? '';
  };
}

function book(...sheets: [string, TemplateCell[][]][]): TemplateWorkbook {
  return { sheets: sheets.map(([name, rows]) => ({ name, rows })) };
}

async function filled(template: TemplateWorkbook, rows: readonly Record<string, string>[]): Promise<Record<string, Cell[][]>> {
  const out: Record<string, Cell[][]> = {};
  for (const sheet of fillReport(planReport(template), FACTS, records(rows))) {
    const cells: Cell[][] = [];
    for await (const row of sheet.rows) cells.push([...row]);
    out[sheet.name] = cells;
  }
  return out;
}

const PEOPLE = [
  { name: 'Ann', age: '31', _id: '1', 'kids[1]/kid': '=cmd' },
  { name: 'Ben', age: '007', _id: '2', 'kids[1]/kid': '' },
];

describe('report templates', () => {
  test('a row with a column placeholder is repeated per record; other rows are copied once', async () => {
    const out = await filled(book(['S', [['Report: {{@title}}', 3], ['Name', 'Age'], ['{{name}}', '{{age}}', 'id {{_id}}'], ['end']]]), PEOPLE);
    assert.deepEqual(out['S'], [
      ['Report: Household', 3],
      ['Name', 'Age'],
      ['Ann', 31, 'id 1'],
      ['Ben', '007', 'id 2'],
      ['end'],
    ]);
  });

  test('a {{#records}} block repeats its rows together and drops the marker rows', async () => {
    const template = book(['S', [['{{@form_id}}', '{{@date}}'], ['{{#records}}'], ['Name', '{{name}}'], ['Kid', '{{kids[1]/kid}}'], ['{{/records}}'], ['done']]]);
    assert.deepEqual((await filled(template, PEOPLE))['S'], [
      [7, { kind: 'datetime', iso: '2024-05-06T07:08:09' }],
      ['Name', 'Ann'],
      ['Kid', '=cmd'],
      ['Name', 'Ben'],
      ['Kid', null],
      ['done'],
    ]);
  });

  test('template mistakes name the sheet and cell', () => {
    const refused = (rows: TemplateCell[][], pattern: RegExp) => assert.throws(() => planReport(book(['Data', rows])), (e: unknown) => e instanceof TemplateError && pattern.test(e.message));
    refused([['{{#records}}'], ['{{a}}']], /never closed/);
    refused([['{{/records}}']], /without a \{\{#records\}\}/);
    refused([['{{#records}}'], ['{{/records}}'], [null, '{{a}}']], /cell B3: \{\{a\}\} is outside/);
    refused([['x {{@nope}}']], /cell A1: unknown placeholder \{\{@nope\}\}/);
    refused([['{{}}']], /empty placeholder/);
    refused([['a {{#records}}']], /alone in its cell/);
  });

  test('an xlsx template is read, filled and written as a legacy xls that SheetJS reads back', async () => {
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['Name', 'Age'], [], ['{{name}}', '{{age}}']]), 'People');
    XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['static', 1.5, true]]), 'Notes');
    const bytes = XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer;
    const plan = planReport(await readTemplate(bytes));
    const chunks: Uint8Array[] = [];
    for await (const chunk of xlsChunks(fillReport(plan, FACTS, records(PEOPLE)), { createSpool: async () => memorySpool() })) chunks.push(chunk);
    const back = XLSX.read(Buffer.concat(chunks), { type: 'buffer' });
    assert.deepEqual(back.SheetNames, ['People', 'Notes']);
    const rows = (name: string) => XLSX.utils.sheet_to_json(back.Sheets[name] as XLSX.WorkSheet, { header: 1, raw: true, defval: null });
    assert.deepEqual(rows('People'), [['Name', 'Age'], [null, null], ['Ann', 31], ['Ben', '007']]);
    assert.deepEqual(rows('Notes'), [['static', 1.5, true]]);
  });

  test('bytes that are not a workbook are refused', async () => {
    await assert.rejects(readTemplate(Buffer.from('<html>not found</html>')), TemplateError);
    await assert.rejects(readTemplate(Buffer.from('PK\x03\x04 broken zip')), TemplateError);
  });
});
