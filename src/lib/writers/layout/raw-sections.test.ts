import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { convert } from '../../../../packages/xlsform/src/index.ts';
import { buildFormModel, type FormModel } from '../../form-model/model.ts';
import { SheetBytes } from '../xlsx/sheet-bytes.ts';
import { savRowEncoder, type SavCaseOut } from '../sav/index.ts';
import { savCell, savSection } from './sav-columns.ts';
import { RawSections, type RawRowOut } from './raw-sections.ts';
import { planSections, type SectionedLayout } from './sections.ts';
import { DEFAULT_LAYOUT_OPTIONS, type Cell, type ExportRecord, type LayoutOptions } from './types.ts';

const FORM_CSV = `survey,,,
,type,name,label
,text,name,Name
,integer,age,Age
,decimal,height,Height
,date,born,Born
,select_one yn,ok,OK?
,select_multiple colors,colors,Colours
,geopoint,where,Where
,text,constructor,Inherited name
,begin repeat,kids,Kids
,text,kname,Name
,integer,kage,Age
,select_multiple colors,kcolors,Colours
,begin repeat,toys,Toys
,text,toy,Toy
,decimal,price,Price
,end repeat,,
,end repeat,,
,begin repeat,visits,Visits
,date,vdate,Date
,end repeat,,
choices,,,
,list_name,name,label
,yn,yes,Yes
,yn,no,No
,colors,red,Red
,colors,blue,Blue
settings,,,
,form_id,version,
,raw_sections,1,
`;

function form(csv: string): FormModel {
  const result = convert(Buffer.from(csv), { fileName: 'raw_sections.csv' });
  if (!result.ok) throw new Error(result.errors.map((e) => e.message).join('; '));
  return buildFormModel(result.formJson);
}

const META_KEYS = ['_id', '_uuid', '_submission_time', '_version'] as const;

const RECORDS: Array<Record<string, unknown>> = [
  {
    name: 'Abe', age: 35, height: 1.8, born: '1990-01-02', ok: 'yes', colors: 'red blue', where: '-1.2 36.8 1650 5',
    kids: [
      { 'kids/kname': 'Mike', 'kids/kage': 5, 'kids/kcolors': 'blue', 'kids/toys': [{ 'kids/toys/toy': 'ball', 'kids/toys/price': 2.5 }] },
      { 'kids/kname': ' padded ', 'kids/kage': '7', 'kids/toys': [] },
    ],
    visits: [{ 'visits/vdate': '2020-02-30' }, { 'visits/vdate': '2021-03-04' }],
    _tags: ['a', 'b'], _notes: [{ note: 'n1' }, 'n2'], _duration: 12, _uuid: 'stored', _submitted_by: 'someone',
  },
  {
    name: 'Tom & Jerry <x>', age: '12', height: '1e2', born: 'soon', ok: 'no', colors: '', where: 'nowhere',
    kids: [{ 'kids/kname': 'caf\u00e9 \u{1F600}', 'kids/kage': 1.5, 'kids/toys': [{ 'kids/toys/toy': 'a_x0041_b', 'kids/toys/price': -0 }, { 'kids/toys/toy': 'tab\there', 'kids/toys/price': 2 ** 60 }] }],
    constructor: 'built',
  },
  // More items than planned, and an item that is not an object: read whole.
  { name: 'Many', kids: [{ 'kids/kname': 'k1' }, { 'kids/kname': 'k2' }, { 'kids/kname': 'k3' }], visits: [7, { 'visits/vdate': '2022-01-01' }] },
  { name: 'quote "q" and \\ slash\nline\r', age: -4, height: 0, kids: 'not a list', visits: [], where: 5, ok: true, colors: ['red'] },
  { name: '', age: null, kids: [{}, { 'kids/toys': [{}, {}] }], _tags: [], _notes: [] },
  { name: 'x'.repeat(300), kids: [{ 'kids/kname': '\u00e9'.repeat(200) }], visits: [{ 'visits/vdate': '2020-01-01' }] },
  {},
];

/** Parsed as the export source parses records of forms with inherited names: no prototypes. */
function parsedRecord(stored: unknown): Record<string, unknown> {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (typeof value !== 'object' || value === null) return value;
    const out = Object.create(null) as Record<string, unknown>;
    for (const [key, inner] of Object.entries(value)) out[key] = strip(inner);
    return out;
  };
  return strip(JSON.parse(JSON.stringify(stored))) as Record<string, unknown>;
}

/** Cells as a RawRowOut gets them, text bytes decoded. */
class CellRow implements RawRowOut {
  cells: Cell[] = [];
  textBytes(column: number, src: Uint8Array, start: number, end: number): void {
    this.cells[column] = Buffer.from(src.buffer, src.byteOffset, src.byteLength).toString('utf8', start, end);
  }
  cell(column: number, cell: Cell): void {
    this.cells[column] = cell;
  }
}

/** Every section's rows of every record: parsed whole (the row builders) and read from the bytes. */
function bothWays(layout: SectionedLayout, records: ReadonlyArray<Record<string, unknown>>, largest: (path: string) => number) {
  const builders = layout.sections.map((section) => layout.rowBuilder(section));
  const raw = RawSections.plan(layout, largest, META_KEYS);
  assert.ok(raw);
  const parsedRows: Cell[][][] = layout.sections.map(() => []);
  const rawRows: Cell[][][] = layout.sections.map(() => []);
  const parsedXml: string[] = layout.sections.map(() => '');
  const rawXml: string[] = layout.sections.map(() => '');
  let readWhole = 0;
  records.forEach((stored, n) => {
    const meta = [n + 1, `uuid-${n}`, '2026-11-28T10:00:00+00:00', 'v1'];
    const record = parsedRecord(stored);
    META_KEYS.forEach((key, i) => (record[key] = meta[i]));
    builders.forEach((builder, s) => {
      for (const row of builder.rows(record as ExportRecord)) {
        (parsedRows[s] as Cell[][]).push(row);
        const out = new SheetBytes();
        out.row(1, row);
        parsedXml[s] += Buffer.from(out.take()).toString('utf8');
      }
    });
    // As PostgreSQL writes jsonb's text: `, ` between members, `: ` after keys.
    const bytes = Buffer.from(JSON.stringify(stored).replace(/,"/g, ', "').replace(/":/g, '": '));
    const ok = raw.read(bytes, 0, bytes.length, meta);
    const rows = ok ? undefined : raw.rowsOf(record as ExportRecord);
    if (!ok) readWhole += 1;
    layout.sections.forEach((_, s) => {
      const count = rows ? (rows[s] as Cell[][]).length : raw.rowCount(s);
      for (let k = 0; k < count; k++) {
        const out = new SheetBytes();
        if (rows) {
          const row = (rows[s] as Cell[][])[k] as Cell[];
          (rawRows[s] as Cell[][]).push(row);
          out.row(1, row);
        } else {
          const cells = new CellRow();
          raw.writeRow(s, k, cells);
          (rawRows[s] as Cell[][]).push(cells.cells);
          out.beginRow(1);
          raw.writeRow(s, k, out);
          out.endRow();
        }
        rawXml[s] += Buffer.from(out.take()).toString('utf8');
      }
    });
  });
  return { parsedRows, rawRows, parsedXml, rawXml, readWhole };
}

describe('sectioned rows from stored bytes', () => {
  const model = form(FORM_CSV);
  const largest = (path: string) => ({ kids: 2, 'kids/toys': 2, visits: 2 })[path] ?? 0;

  for (const [name, options] of [
    ['defaults', DEFAULT_LAYOUT_OPTIONS],
    ['labels, binary choices, group names removed', { ...DEFAULT_LAYOUT_OPTIONS, showChoiceLabels: true, binarySelectMultiples: true, removeGroupName: true }],
    ['value choices, no split', { ...DEFAULT_LAYOUT_OPTIONS, valueSelectMultiples: true }],
    ['choices not split', { ...DEFAULT_LAYOUT_OPTIONS, splitSelectMultiples: false }],
  ] as Array<[string, LayoutOptions]>) {
    test(`the same cells and XML as the parsed records' (${name})`, () => {
      for (const cellText of ['as-answered', 'formula-safe'] as const) {
        const layout = planSections(model, options, { baseUrl: 'http://testserver' }, { parentNames: 'sheet', cellText });
        const both = bothWays(layout, RECORDS, largest);
        assert.deepEqual(both.rawRows, both.parsedRows);
        assert.deepEqual(both.rawXml, both.parsedXml);
        assert.equal(both.readWhole, 1);
      }
    });
  }

  test('the same .sav cases written from the bytes as from the cells', () => {
    const options = { ...DEFAULT_LAYOUT_OPTIONS, removeGroupName: true };
    const layout = planSections(model, options, { baseUrl: 'http://testserver' }, { parentNames: 'path', cellText: 'as-answered' });
    const savs = layout.sections.map((section) => savSection(section, model, options));
    const now = new Date(0);
    const fromCells = savs.map((sav) => savRowEncoder(sav.variables, { now }));
    const fromBytes = savs.map((sav) => savRowEncoder(sav.variables, { now }));
    const builders = layout.sections.map((section) => layout.rowBuilder(section));
    const raw = RawSections.plan(layout, largest, META_KEYS);
    assert.ok(raw);
    const chunks = (encoders: typeof fromCells, at: number, bytes: Uint8Array | undefined): void => {
      if (bytes) (collected[at] as Uint8Array[][])[encoders === fromCells ? 0 : 1]?.push(bytes);
    };
    const collected = savs.map((): Uint8Array[][] => [[], []]);
    RECORDS.forEach((stored, n) => {
      const meta = [n + 1, `uuid-${n}`, '2026-11-28T10:00:00+00:00', 'v1'];
      const record = parsedRecord(stored);
      META_KEYS.forEach((key, i) => (record[key] = meta[i]));
      builders.forEach((builder, s) => {
        for (const row of builder.rows(record as ExportRecord)) chunks(fromCells, s, (fromCells[s] as (typeof fromCells)[number]).add((savs[s] as (typeof savs)[number]).row(row)));
      });
      const bytes = Buffer.from(JSON.stringify(stored).replace(/,"/g, ', "').replace(/":/g, '": '));
      if (!raw.read(bytes, 0, bytes.length, meta)) {
        raw.rowsOf(record as ExportRecord).forEach((rows, s) => {
          for (const row of rows) chunks(fromBytes, s, (fromBytes[s] as (typeof fromBytes)[number]).add((savs[s] as (typeof savs)[number]).row(row)));
        });
        return;
      }
      layout.sections.forEach((_, s) => {
        for (let k = 0; k < raw.rowCount(s); k++) {
          const written = {
            write: (out: SavCaseOut) =>
              raw.writeRow(s, k, {
                cell: (column, cell) => out.cell(column, savCell(cell)),
                textBytes: (column, src, start, end) => out.textBytes(column, src, start, end),
              }),
          };
          chunks(fromBytes, s, (fromBytes[s] as (typeof fromBytes)[number]).add(written));
        }
      });
    });
    savs.forEach((_, s) => {
      chunks(fromCells, s, (fromCells[s] as (typeof fromCells)[number]).end());
      chunks(fromBytes, s, (fromBytes[s] as (typeof fromBytes)[number]).end());
      const [cells, bytes] = collected[s] as Uint8Array[][];
      assert.deepEqual(Buffer.concat(bytes as Uint8Array[]), Buffer.concat(cells as Uint8Array[]));
    });
  });

  test('nothing planned for a repeat no record has: records with it are read whole, numbered on', () => {
    const layout = planSections(model, DEFAULT_LAYOUT_OPTIONS, { baseUrl: 'http://testserver' }, { parentNames: 'path', cellText: 'as-answered' });
    const both = bothWays(layout, RECORDS, () => 0);
    assert.deepEqual(both.rawRows, both.parsedRows);
    assert.ok(both.readWhole >= 3);
  });

  test('no plan where a column needs the whole record (media links) or repeats need too many containers', () => {
    const media = form(FORM_CSV.replace(',text,name,Name', ',image,name,Photo'));
    const layout = planSections(media, DEFAULT_LAYOUT_OPTIONS, { baseUrl: 'http://testserver' }, { parentNames: 'sheet', cellText: 'as-answered' });
    assert.equal(RawSections.plan(layout, largest, META_KEYS), undefined);
    const withoutLinks = planSections(media, { ...DEFAULT_LAYOUT_OPTIONS, includeImages: false }, { baseUrl: 'http://testserver' }, { parentNames: 'sheet', cellText: 'as-answered' });
    assert.ok(RawSections.plan(withoutLinks, largest, META_KEYS));
    const plain = planSections(model, DEFAULT_LAYOUT_OPTIONS, { baseUrl: 'http://testserver' }, { parentNames: 'sheet', cellText: 'as-answered' });
    assert.equal(RawSections.plan(plain, () => 100, META_KEYS), undefined);
  });
});
