import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { csvLine } from '../csv/writer.ts';
import { planSections, sectionCellText, type SectionLayout, type SectionedLayout } from './sections.ts';
import { sheetNames, validSheetName } from './sheet-names.ts';
import { exportFormFrom } from './testing.ts';
import { DEFAULT_LAYOUT_OPTIONS, type ExportRecord } from './types.ts';

const form = exportFormFrom('exports/childrens_survey.form.csv');
const links = { baseUrl: 'http://testserver' };

/** onadata's TestExportBuilder.data (keys decoded). */
export const CHILDRENS_SURVEY_DATA: ExportRecord[] = [
  {
    name: 'Abe',
    age: 35,
    'tel/tel.office': '020123456',
    children: [
      {
        'children/name': 'Mike', 'children/age': 5, 'children/fav_colors': 'red blue', 'children/ice.creams': 'vanilla chocolate',
        'children/cartoons': [
          { 'children/cartoons/name': 'Tom & Jerry', 'children/cartoons/why': 'Tom is silly' },
          { 'children/cartoons/name': 'Flinstones', 'children/cartoons/why': 'I like bam bam\u0107' },
        ],
      },
      { 'children/name': 'John', 'children/age': 2, 'children/cartoons': [] },
      {
        'children/name': 'Imora', 'children/age': 3,
        'children/cartoons': [
          { 'children/cartoons/name': 'Shrek', 'children/cartoons/why': "He's so funny" },
          {
            'children/cartoons/name': "Dexter's Lab", 'children/cartoons/why': 'He thinks hes smart',
            'children/cartoons/characters': [
              { 'children/cartoons/characters/name': 'Dee Dee', 'children/cartoons/characters/good_or_evil': 'good' },
              { 'children/cartoons/characters/name': 'Dexter', 'children/cartoons/characters/good_or_evil': 'evil' },
            ],
          },
        ],
      },
    ],
  },
  { children: [] },
];

function csvOf(layout: SectionedLayout, section: SectionLayout, records: readonly ExportRecord[]): string {
  const builder = layout.rowBuilder(section);
  let out = section.headerRows.map((r) => csvLine(r)).join('');
  for (const record of records) {
    for (const row of builder.rows(record)) {
      out += csvLine(row.map((cell, i) => { const column = section.columns[i]; return column ? sectionCellText(cell, column) : ''; }));
    }
  }
  return out;
}

describe('sectioned layout', () => {
  test('childrens_survey: the four csvzip files of onadata’s fixtures', () => {
    const layout = planSections(form, DEFAULT_LAYOUT_OPTIONS, links, { parentNames: 'path', cellText: 'formula-safe' });
    assert.deepEqual(layout.sections.map((s) => s.fileName), ['childrens_survey', 'children', 'children_cartoons', 'children_cartoons_characters']);
    for (const section of layout.sections) {
      const expected = readFileSync(new URL(`../../../../test/fixtures/exports/childrens_survey/${section.fileName}.csv`, import.meta.url), 'utf8');
      assert.equal(csvOf(layout, section, CHILDRENS_SURVEY_DATA), expected, section.fileName);
    }
  });

  test('xlsx: _parent_table_name is the parent’s sheet title; cells are typed', () => {
    const layout = planSections(form, DEFAULT_LAYOUT_OPTIONS, links, { parentNames: 'sheet', cellText: 'as-answered' });
    assert.deepEqual(layout.sections.map((s) => s.sheetName), ['childrens_survey', 'children', 'children_cartoons', 'children_cartoons_characters']);
    const characters = layout.sections[3];
    assert.ok(characters);
    const builder = layout.rowBuilder(characters);
    const rows = CHILDRENS_SURVEY_DATA.flatMap((r) => builder.rows(r));
    const column = (name: string) => characters.columns.findIndex((c) => c.header === name);
    assert.equal(rows[0]?.[column('_parent_table_name')], 'children_cartoons');
    assert.equal(rows[0]?.[column('_parent_index')], 4);
    const main = layout.sections[0];
    assert.ok(main);
    const [abe] = layout.rowBuilder(main).rows({ ...CHILDRENS_SURVEY_DATA[0], _id: 3, _submission_time: '2013-02-18T15:54:01+00:00', 'geo/geolocation': '-1.5 36.7 0 20' });
    const at = (name: string) => abe?.[main.columns.findIndex((c) => c.header === name)];
    assert.equal(at('age'), 35);
    assert.equal(at('_id'), 3);
    assert.deepEqual(at('_submission_time'), { kind: 'datetime', iso: '2013-02-18T15:54:01' });
    assert.equal(at('geo/_geolocation_latitude'), -1.5);
    assert.equal(at('geo/_geolocation_altitude'), 0);
    assert.equal(at('_index'), 1);
    assert.equal(at('_parent_index'), -1);
  });

  test('date answers become date cells; blank select_multiple choices are empty', () => {
    const dated = exportFormFrom('exports/dates.form.csv');
    const layout = planSections(dated, DEFAULT_LAYOUT_OPTIONS, links, { parentNames: 'sheet', cellText: 'as-answered' });
    const main = layout.sections[0];
    assert.ok(main);
    const [row] = layout.rowBuilder(main).rows({ when: '2020-01-31', fruit: '' });
    assert.deepEqual(row?.slice(0, 4), [{ kind: 'date', iso: '2020-01-31' }, '', null, null]);
  });

  test('cell text: csvzip protects every text cell; xlsx, xls and savzip write it as answered', () => {
    const tutorial = exportFormFrom('submissions/tutorial_w_repeats.csv');
    const options = { ...DEFAULT_LAYOUT_OPTIONS, includeImages: false, includeReviews: true, showChoiceLabels: true, valueSelectMultiples: true };
    const record: ExportRecord = {
      name: '=1+2', age: '-minus', picture: '@home.jpg', has_children: '+1 x', web_browsers: 'firefox', _version: '%pct',
      children: [{ 'children/childs_name': 'a|b', 'children/childs_age': '=x' }],
      _tags: ['=tag', 'a|b'], _notes: [{ note: '@note' }], _review_comment: '-comment', _submitted_by: '@bob',
    };
    const answered = {
      name: '=1+2', age: '-minus', picture: '@home.jpg', has_children: '+1 x', _version: '%pct',
      _tags: '=tag,a|b', _notes: '@note', _review_comment: '-comment', _submitted_by: '@bob',
    };
    const cells = (cellText: 'formula-safe' | 'as-answered') => {
      const layout = planSections(tutorial, options, links, { parentNames: 'path', cellText });
      const [main, children] = layout.sections;
      assert.ok(main && children);
      const [row = []] = layout.rowBuilder(main).rows(record);
      const [child = []] = layout.rowBuilder(children).rows(record);
      const at = (section: SectionLayout, cells: readonly unknown[], header: string) => cells[section.columns.findIndex((c) => c.header === header)];
      return {
        main: Object.fromEntries(Object.keys(answered).map((header) => [header, at(main, row, header)])),
        // A value column of a select_multiple with labels; a risky choice label is in the HTTP test.
        firefox: at(main, row, 'web_browsers/Mozilla Firefox'),
        child: [at(children, child, 'children/childs_name'), at(children, child, 'children/childs_age')],
      };
    };
    assert.deepEqual(cells('as-answered'), { main: answered, firefox: 'Mozilla Firefox', child: ['a|b', '=x'] });
    const protectedText = Object.fromEntries(Object.entries(answered).map(([header, value]) => [header, value.includes('|') ? `'${value.replace('|', '\\|')}` : `'${value}`]));
    assert.deepEqual(cells('formula-safe'), { main: protectedText, firefox: 'Mozilla Firefox', child: ['a\\|b', "'=x"] });
    const dated = exportFormFrom('exports/dates.form.csv');
    const when = (cellText: 'formula-safe' | 'as-answered') => {
      const layout = planSections(dated, DEFAULT_LAYOUT_OPTIONS, links, { parentNames: 'sheet', cellText });
      const main = layout.sections[0];
      assert.ok(main);
      return layout.rowBuilder(main).rows({ when: '=today()' })[0]?.[0];
    };
    assert.deepEqual([when('as-answered'), when('formula-safe')], ['=today()', "'=today()"]);
  });

  test('sheet names: 31 characters, no forbidden characters, unique without case', () => {
    assert.equal(validSheetName('a'.repeat(40), []), 'a'.repeat(31));
    assert.equal(validSheetName('what?[x]:*', []), 'what__x___');
    assert.deepEqual(sheetNames(['children', 'Children', 'a'.repeat(35), 'a'.repeat(33)]), ['children', 'Children1', 'a'.repeat(31), `${'a'.repeat(30)}1`]);
  });
});
