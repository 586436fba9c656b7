import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as XLSX from '@e965/xlsx';
import { convert } from '../src/index.ts';
import { assertXml } from './helpers.ts';
import { xlsxWithSurvey, zip } from './zip-writer.ts';

const SURVEY = [
  ['type', 'name', 'label', 'relevant'],
  ['integer', 'age', 'How old are you?', ''],
  ['text', 'name', 'Name', '${age} > 18'],
];
const CHOICES = [['list_name', 'name', 'label']];
const SETTINGS = [['form_title', 'form_id'], ['People', 'people']];

function book(bookType: 'xlsx' | 'xls'): Uint8Array {
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(SURVEY), 'survey');
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(CHOICES), 'choices');
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(SETTINGS), 'settings');
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['anything'], ['ignored']]), 'notes');
  return new Uint8Array(XLSX.write(wb, { type: 'array', bookType }) as ArrayBuffer);
}

const EXPECTED = [
  '<h:title>People</h:title>',
  '<data id="people">',
  '<bind nodeset="/data/age" type="int"/>',
  '<bind nodeset="/data/name" type="string" relevant=" /data/age  &gt; 18"/>',
];

describe('readers', () => {
  it('reads .xlsx', () => {
    const result = convert(book('xlsx'), { fileName: 'people.xlsx' });
    assert.ok(result.ok, JSON.stringify(result));
    assertXml(result.xform, ...EXPECTED);
  });

  it('reads long shared-string tables in .xls (strings continued across records)', () => {
    const long = Array.from({ length: 400 }, (_, i) => ['note', `n${i}`, `Note number ${i} ${'é'.repeat(i % 7)} ${'x'.repeat(60)}`]);
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['type', 'name', 'label'], ...long]), 'survey');
    const bytes = new Uint8Array(XLSX.write(wb, { type: 'array', bookType: 'xls' }) as ArrayBuffer);
    const result = convert(bytes, { fileName: 'long.xls' });
    assert.ok(result.ok, JSON.stringify(result));
    assertXml(result.xform, `<label>Note number 398 ${'é'.repeat(398 % 7)} ${'x'.repeat(60)}</label>`, '<input ref="/data/n0">');
  });

  it('reads legacy .xls (BIFF8)', () => {
    const result = convert(book('xls'), { fileName: 'people.xls' });
    assert.ok(result.ok, JSON.stringify(result));
    assertXml(result.xform, ...EXPECTED);
  });

  it('sniffs the format from the bytes when the name has no known extension', () => {
    const result = convert(book('xlsx'), { fileName: 'upload.bin' });
    assert.ok(result.ok);
    assertXml(result.xform, '<data id="people">');
  });

  it("reads pyxform's CSV layout (sheet names in the first column)", () => {
    const csv = ['survey,,,', ',type,name,label', ',integer,age,How old are you?', 'settings,,,', ',form_id,,', ',people_csv,,'].join('\n');
    const result = convert(csv, { fileName: 'people.csv' });
    assert.ok(result.ok, JSON.stringify(result));
    assertXml(result.xform, '<data id="people_csv">', '<bind nodeset="/data/age" type="int"/>');
  });

  it('reads CSV with quoted fields holding commas, quotes and line breaks', () => {
    const csv = 'survey,,,\n,type,name,label\n,note,n1,"Hello, ""you""\nsecond line"\n';
    const result = convert(csv, { fileName: 'quoted.csv' });
    assert.ok(result.ok, JSON.stringify(result));
    assertXml(result.xform, '<label>Hello, "you"\nsecond line</label>');
  });

  it('reads markdown tables, ignoring comments and notes after the last pipe', () => {
    const md = `
      # a comment line
      | survey |
      |        | type | name | label     |
      |        | text | q1   | Q \\| one | a note about this row
    `;
    const result = convert(md, { fileName: 'm.md' });
    assert.ok(result.ok, JSON.stringify(result));
    assertXml(result.xform, '<label>Q | one</label>');
  });

  it('accepts bytes for text formats', () => {
    const bytes = new TextEncoder().encode('| survey |\n| | type | name | label |\n| | text | q | Q |\n');
    const result = convert(bytes, { fileName: 'b.md' });
    assert.ok(result.ok);
  });

  it('reads a single sheet of any name as the survey sheet', () => {
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(SURVEY), 'Sheet1');
    const bytes = new Uint8Array(XLSX.write(wb, { type: 'array', bookType: 'xlsx' }) as ArrayBuffer);
    const result = convert(bytes, { fileName: 'single.xlsx' });
    assert.ok(result.ok, JSON.stringify(result));
    assertXml(result.xform, '<bind nodeset="/data/age" type="int"/>');
  });

  it('writes numbers as pyxform does: integers without ".0", booleans as TRUE/FALSE', () => {
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(
      wb,
      XLSX.utils.aoa_to_sheet([
        ['type', 'name', 'label', 'default'],
        ['integer', 'a', 'A', 5],
        ['decimal', 'b', 'B', 2.5],
        ['text', 'c', 'C', true],
        ['integer', 'd', 'D', 0],
        ['text', 'e', 'E', false],
      ]),
      'survey',
    );
    for (const bookType of ['xlsx', 'xls'] as const) {
      const bytes = new Uint8Array(XLSX.write(wb, { type: 'array', bookType }) as ArrayBuffer);
      const result = convert(bytes, { fileName: `numbers.${bookType}` });
      assert.ok(result.ok, JSON.stringify(result));
      assertXml(result.xform, '<a>5</a>', '<b>2.5</b>', '<c>TRUE</c>', '<d>0</d>', '<e>FALSE</e>');
    }
  });

  it('ignores a huge declared sheet range and reads only the cells present', () => {
    const rows =
      '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c></row>' +
      '<row r="2"><c r="A2" t="s"><v>3</v></c><c r="B2" t="inlineStr"><is><t>q1</t></is></c><c r="C2" t="inlineStr"><is><r><t>Rich </t></r><r><t>&amp; bold</t></r></is></c><c r="D2" s="0"/></row>';
    const bytes = xlsxWithSurvey(rows, { sharedStrings: ['type', 'name', 'label', 'text'], dimension: 'A1:AMJ1048576' });
    const start = Date.now();
    const result = convert(bytes, { fileName: 'huge.xlsx' });
    assert.ok(result.ok, JSON.stringify(result));
    assert.ok(Date.now() - start < 1000);
    assertXml(result.xform, '<label>Rich &amp; bold</label>');
  });

  it('reads date-formatted cells as dates and times, as pyxform prints them', () => {
    const styles =
      '<?xml version="1.0"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy-mm-dd hh:mm"/></numFmts><cellXfs count="3"><xf numFmtId="0"/><xf numFmtId="164"/><xf numFmtId="21"/></cellXfs></styleSheet>';
    const rows =
      '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c><c r="D1" t="s"><v>3</v></c></row>' +
      '<row r="2"><c r="A2" t="s"><v>4</v></c><c r="B2" t="s"><v>5</v></c><c r="C2" t="s"><v>2</v></c><c r="D2" s="1"><v>43831.5</v></c></row>' +
      '<row r="3"><c r="A3" t="s"><v>6</v></c><c r="B3" t="s"><v>7</v></c><c r="C3" t="s"><v>2</v></c><c r="D3" s="2"><v>0.395833333333333</v></c></row>';
    const bytes = xlsxWithSurvey(rows, { sharedStrings: ['type', 'name', 'label', 'default', 'text', 'when', 'time', 'at'], styles });
    const result = convert(bytes, { fileName: 'dates.xlsx' });
    assert.ok(result.ok, JSON.stringify(result));
    assertXml(result.xform, '<when>2020-01-01 12:00:00</when>', '<at>09:30:00</at>');
  });

  it('rejects corrupt spreadsheets with a message, never an exception', () => {
    for (const [name, bytes] of [
      ['bad.xlsx', new Uint8Array([0x50, 0x4b, 3, 4, 0, 0, 0, 0])],
      ['bad.xls', new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 1, 2, 3])],
      ['empty.xlsx', new Uint8Array(0)],
      ['random.bin', new Uint8Array([1, 2, 3, 4])],
    ] as const) {
      const result = convert(bytes, { fileName: name });
      assert.equal(result.ok, false, name);
      if (!result.ok) assert.ok(result.errors[0]?.message, name);
    }
  });

  it('rejects text that is not an XLSForm', () => {
    const result = convert('just some text', { fileName: 'x.md' });
    assert.equal(result.ok, false);
  });

  it('rejects a workbook without a survey sheet, suggesting a misspelt one', () => {
    const md = '| surveys |\n| | type | name |\n| | text | q |\n| choices |\n| | list_name | name | label |\n| | l | a | A |\n';
    const result = convert(md, { fileName: 'x.md' });
    assert.equal(result.ok, false);
    if (!result.ok) assert.match(result.errors[0]?.message ?? '', /You must have a sheet named 'survey'.*'surveys'/);
  });
});

describe('SheetJS fallback', () => {
  it('reads an .xlsx whose workbook part is not at the usual path', () => {
    const ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
    const bytes = zip({
      '[Content_Types].xml':
        '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/book/main.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/book/s1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
      '_rels/.rels':
        '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="book/main.xml"/></Relationships>',
      'book/main.xml': `<?xml version="1.0"?><workbook ${ns} xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="survey" sheetId="1" r:id="rId1"/></sheets></workbook>`,
      'book/_rels/main.xml.rels':
        '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="s1.xml"/></Relationships>',
      'book/s1.xml': `<?xml version="1.0"?><worksheet ${ns}><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>type</t></is></c><c r="B1" t="inlineStr"><is><t>name</t></is></c><c r="C1" t="inlineStr"><is><t>label</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>integer</t></is></c><c r="B2" t="inlineStr"><is><t>n</t></is></c><c r="C2" t="inlineStr"><is><t>N</t></is></c></row></sheetData></worksheet>`,
    });
    const result = convert(bytes, { fileName: 'odd.xlsx' });
    assert.ok(result.ok, JSON.stringify(result));
    assertXml(result.xform, '<bind nodeset="/data/n" type="int"/>');
  });
});

describe('xlsx written with a namespace prefix', () => {
  it('reads <x:row>/<x:c> elements', () => {
    const ns = 'xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
    const bytes = zip({
      'xl/workbook.xml': `<?xml version="1.0"?><x:workbook ${ns} xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><x:sheets><x:sheet name="survey" sheetId="1" r:id="rId1"/></x:sheets></x:workbook>`,
      'xl/_rels/workbook.xml.rels':
        '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
      'xl/sharedStrings.xml': `<?xml version="1.0"?><x:sst ${ns}><x:si><x:t>type</x:t></x:si><x:si><x:t>name</x:t></x:si><x:si><x:t>label</x:t></x:si><x:si><x:t>integer</x:t></x:si></x:sst>`,
      'xl/worksheets/sheet1.xml': `<?xml version="1.0"?><x:worksheet ${ns}><x:sheetData><x:row r="1"><x:c r="A1" t="s"><x:v>0</x:v></x:c><x:c r="B1" t="s"><x:v>1</x:v></x:c><x:c r="C1" t="s"><x:v>2</x:v></x:c></x:row><x:row r="2"><x:c r="A2" t="s"><x:v>3</x:v></x:c><x:c r="B2" t="inlineStr"><x:is><x:t>n</x:t></x:is></x:c><x:c r="C2" t="inlineStr"><x:is><x:t>N</x:t></x:is></x:c></x:row></x:sheetData></x:worksheet>`,
    });
    const result = convert(bytes, { fileName: 'prefixed.xlsx' });
    assert.ok(result.ok, JSON.stringify(result));
    assertXml(result.xform, '<bind nodeset="/data/n" type="int"/>');
  });
});

describe('damaged files', () => {
  it('mutated .xlsx and .xls bytes give a result or a failure, never an exception or a hang', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (const bookType of ['xlsx', 'xls'] as const) {
      const original = book(bookType);
      for (let round = 0; round < 60; round++) {
        const bytes = new Uint8Array(original);
        for (let i = 0; i < 1 + Math.floor(random() * 6); i++) bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
        const started = Date.now();
        const result = convert(bytes, { fileName: `damaged.${bookType}` });
        assert.equal(typeof result.ok, 'boolean');
        // A guard against a reader stuck looping on damaged bytes, far beyond any machine's load
        // (2 s failed on a loaded machine with a cold process): not a check of speed.
        assert.ok(Date.now() - started < 30_000, `round ${round} ran for ${Date.now() - started} ms`);
      }
    }
  });
});

describe('number cells', () => {
  it('print as Python prints them (exponents below 1e-4, integers in full)', async () => {
    const { numberText } = await import('../src/workbook/spreadsheet.ts');
    assert.equal(numberText(5), '5');
    assert.equal(numberText(0.0001), '0.0001');
    assert.equal(numberText(0.00001), '1e-05');
    assert.equal(numberText(-0.00002), '-2e-05');
    assert.equal(numberText(1e21), '1000000000000000000000');
    assert.equal(numberText(123456789.123), '123456789.123');
  });
});
