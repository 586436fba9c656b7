import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { planFlatLayout } from './flat.ts';
import { RepeatShape } from './repeat-shape.ts';
import { exportFormFrom } from './testing.ts';
import { DEFAULT_LAYOUT_OPTIONS, type ExportRecord, type LayoutOptions } from './types.ts';

const form = exportFormFrom('submissions/tutorial_w_repeats.csv');
const links = { baseUrl: 'http://testserver' };

/** The tutorial_w_repeats record of onadata-data.md §2, as the export repository reads it. */
const BOB: ExportRecord = {
  name: 'Bob', age: 25, has_children: '1',
  children: [
    { 'children/childs_name': 'Tom', 'children/childs_age': 12 },
    { 'children/childs_name': 'Dick', 'children/childs_age': 5 },
  ],
  gps: '-1.2625621 36.7921711 0.0 20.0',
  'meta/instanceID': 'uuid:b31c6ac2-b8ca-4180-914f-c844fa10ed3b',
  _id: 7, _uuid: 'b31c6ac2-b8ca-4180-914f-c844fa10ed3b', _version: '2014111', _status: 'submitted_via_web',
  _submitted_by: 'bob', _submission_time: '2013-02-18T15:54:01+00:00', _date_modified: '2013-02-18T15:54:01+00:00',
  _geolocation: [-1.2625621, 36.7921711], _duration: '', _tags: [], _notes: [], _last_edited_by: null,
  _total_media: 0, _media_count: 0, _media_all_received: true, _attachments: {},
};

function layout(records: ExportRecord[], options: Partial<LayoutOptions> = {}) {
  const shape = new RepeatShape();
  for (const r of records) shape.observe(r);
  return planFlatLayout(form, { ...DEFAULT_LAYOUT_OPTIONS, ...options }, shape, links);
}

const HEADER =
  'name,age,picture,has_children,children[1]/childs_name,children[1]/childs_age,children[2]/childs_name,children[2]/childs_age,gps,_gps_latitude,_gps_longitude,_gps_altitude,_gps_precision,web_browsers/firefox,web_browsers/chrome,web_browsers/ie,web_browsers/safari,meta/instanceID,_id,_uuid,_submission_time,_date_modified,_tags,_notes,_version,_duration,_submitted_by,_last_edited_by,_total_media,_media_count,_media_all_received';
const ROW =
  'Bob,25,n/a,1,Tom,12,Dick,5,-1.2625621 36.7921711 0.0 20.0,-1.2625621,36.7921711,0.0,20.0,n/a,n/a,n/a,n/a,uuid:b31c6ac2-b8ca-4180-914f-c844fa10ed3b,7,b31c6ac2-b8ca-4180-914f-c844fa10ed3b,2013-02-18T15:54:01+00:00,2013-02-18T15:54:01+00:00,,,2014111,,bob,,0,0,True';

describe('flat layout', () => {
  test('tutorial_w_repeats gives onadata’s header and row (§3.10)', () => {
    const flat = layout([BOB]);
    assert.deepEqual(flat.headerRows, [HEADER.split(',')]);
    assert.equal(flat.row(BOB).join(','), ROW);
  });

  test('repeat blocks follow the largest count among the records', () => {
    const three = { ...BOB, children: [{ 'children/childs_name': 'A' }, {}, { 'children/childs_age': 3 }] };
    const flat = layout([BOB, three]);
    const headers = flat.headerRows[0] ?? [];
    assert.deepEqual(headers.filter((h) => h.startsWith('children[')), [
      'children[1]/childs_name', 'children[1]/childs_age', 'children[2]/childs_name', 'children[2]/childs_age', 'children[3]/childs_name', 'children[3]/childs_age',
    ]);
    const row = flat.row(BOB);
    assert.deepEqual(row.slice(4, 10), ['Tom', '12', 'Dick', '5', 'n/a', 'n/a']);
    assert.deepEqual(flat.row(three).slice(4, 10), ['A', 'n/a', 'n/a', 'n/a', 'n/a', '3']);
  });

  test('an empty export has no repeat columns', () => {
    const flat = layout([]);
    assert.equal((flat.headerRows[0] ?? []).some((h) => h.includes('[')), false);
  });

  test('select_multiple: split True/False, binary, values, unsplit, all n/a when absent', () => {
    const chosen = { ...BOB, web_browsers: 'firefox chrome' };
    const cells = (options: Partial<LayoutOptions>, record: ExportRecord = chosen) => {
      const flat = layout([record], options);
      const headers = flat.headerRows[0] ?? [];
      const row = flat.row(record);
      return headers.flatMap((h, i) => (h.startsWith('web_browsers') ? [`${h}=${row[i]}`] : []));
    };
    assert.deepEqual(cells({}), ['web_browsers/firefox=True', 'web_browsers/chrome=True', 'web_browsers/ie=False', 'web_browsers/safari=False']);
    assert.deepEqual(cells({ binarySelectMultiples: true }), ['web_browsers/firefox=1', 'web_browsers/chrome=1', 'web_browsers/ie=0', 'web_browsers/safari=0']);
    assert.deepEqual(cells({ valueSelectMultiples: true }), ['web_browsers/firefox=firefox', 'web_browsers/chrome=chrome', 'web_browsers/ie=', 'web_browsers/safari=']);
    assert.deepEqual(cells({ splitSelectMultiples: false }), ['web_browsers=firefox chrome']);
    assert.deepEqual(cells({ showChoiceLabels: true }), [
      'web_browsers/Mozilla Firefox=True', 'web_browsers/Google Chrome=True', 'web_browsers/Internet Explorer=False', 'web_browsers/Safari=False',
    ]);
    assert.deepEqual(cells({ splitSelectMultiples: false, showChoiceLabels: true }), ['web_browsers=Mozilla Firefox Google Chrome']);
    assert.deepEqual(cells({}, BOB), ['web_browsers/firefox=n/a', 'web_browsers/chrome=n/a', 'web_browsers/ie=n/a', 'web_browsers/safari=n/a']);
  });

  test('remove_group_name and group_delimiter', () => {
    const removed = layout([BOB], { removeGroupName: true }).headerRows[0] ?? [];
    assert.deepEqual(removed.slice(4, 8), ['childs_name', 'childs_age', 'childs_name', 'childs_age']);
    assert.equal(removed[17], 'instanceID');
    const dotted = layout([BOB], { groupDelimiter: '.' }).headerRows[0] ?? [];
    assert.deepEqual(dotted, HEADER.replace(/\//g, '.').split(','));
  });

  test('repeat_index_tags', () => {
    const headers = layout([BOB], { repeatIndexTags: ['_', '_'] }).headerRows[0] ?? [];
    assert.equal(headers[4], 'children_1_/childs_name');
  });

  test('labels row, labels only, choice labels', () => {
    const flat = layout([{ ...BOB, web_browsers: 'ie' }], { includeLabels: true });
    assert.equal(flat.headerRows.length, 2);
    const labels = flat.headerRows[1] ?? [];
    assert.deepEqual(labels.slice(0, 5), ['1. What is your name?', '2. How old are you?', '3. May I take your picture?', '4. Do you have any children?', '5.1 Childs name?']);
    assert.equal(labels[9], '_gps_latitude');
    assert.equal(labels[13], 'web_browsers/Mozilla Firefox');
    assert.equal(labels[17], 'instanceID');
    assert.equal(labels[18], '_id');
    const only = layout([BOB], { includeLabelsOnly: true });
    assert.deepEqual(only.headerRows, [labels]);
    const shown = layout([BOB], { showChoiceLabels: true });
    assert.equal(shown.row(BOB)[3], 'yes');
  });

  test('include_reviews adds the review columns; missing values read n/a', () => {
    const flat = layout([BOB], { includeReviews: true });
    const headers = flat.headerRows[0] ?? [];
    assert.deepEqual(headers.slice(-3), ['_review_status', '_review_comment', '_review_date']);
    assert.deepEqual(flat.row({ ...BOB, _review_status: '1' }).slice(-3), ['1', 'n/a', 'n/a']);
  });

  test('media answers become attachment links unless include_images is off', () => {
    const record = { ...BOB, picture: 'face.jpg', _attachments: { 'face.jpg': 42 } };
    assert.equal(layout([record]).row(record)[2], 'http://testserver/api/v1/files/42?filename=face.jpg');
    assert.equal(layout([record], { includeImages: false }).row(record)[2], 'face.jpg');
    const missing = { ...BOB, picture: 'other.jpg' };
    assert.equal(layout([missing]).row(missing)[2], 'other.jpg');
  });

  test('formula injection: risky text gets a quote, numbers and GPS pass, pipes are escaped', () => {
    const risky = (name: string) => layout([BOB]).row({ ...BOB, name })[0];
    assert.equal(risky('=HYPERLINK("x")'), `'=HYPERLINK("x")`);
    assert.equal(risky('+1 555'), '+1 555');
    assert.equal(risky('-12.5'), '-12.5');
    assert.equal(risky('@home'), `'@home`);
    assert.equal(risky('a|b'), 'a\\|b');
  });

  test('as-answered (custom XLS reports): text unchanged, and no CSV rules to compile', () => {
    const shape = new RepeatShape();
    shape.observe(BOB);
    const options = { ...DEFAULT_LAYOUT_OPTIONS, valueSelectMultiples: true };
    const answered = planFlatLayout(form, options, shape, links, [], 'as-answered');
    const record = { ...BOB, name: '=1+2', web_browsers: 'firefox', _submitted_by: '@bob', children: [{ 'children/childs_name': 'a|b' }] };
    const at = (flat: typeof answered, header: string) => flat.row(record)[flat.columns.findIndex((c) => c.header === header)];
    assert.deepEqual(['name', 'children[1]/childs_name', '_submitted_by'].map((h) => at(answered, h)), ['=1+2', 'a|b', '@bob']);
    assert.equal(at(answered, 'web_browsers/firefox'), 'firefox');
    assert.ok(answered.columns.every((c) => c.rule === undefined));
    const safe = planFlatLayout(form, options, shape, links);
    assert.deepEqual(['name', 'children[1]/childs_name', '_submitted_by'].map((h) => at(safe, h)), ["'=1+2", 'a\\|b', "'@bob"]);
  });

  test('tags: sorted, comma-space tags quoted; notes always empty; null is empty', () => {
    const record = { ...BOB, _tags: ['b', 'a, c'], _notes: ['hello'], _last_edited_by: null, name: null };
    const flat = layout([record]);
    const headers = flat.headerRows[0] ?? [];
    const row = flat.row(record);
    assert.equal(row[headers.indexOf('_tags')], '"a, c", b');
    assert.equal(row[headers.indexOf('_notes')], '');
    assert.equal(row[0], '');
  });

  test('HXL row under the tagged top-level questions', () => {
    const hxl = exportFormFrom('exports/hxl_example.form.csv');
    const flat = planFlatLayout(hxl, DEFAULT_LAYOUT_OPTIONS, new RepeatShape(), links);
    assert.deepEqual(flat.headerRows[0]?.slice(0, 3), ['age', 'name', 'meta/instanceID']);
    assert.deepEqual(flat.headerRows[1], ['#age', ...Array<string>(15).fill('')]);
    const without = planFlatLayout(hxl, { ...DEFAULT_LAYOUT_OPTIONS, includeHxl: false }, new RepeatShape(), links);
    assert.equal(without.headerRows.length, 1);
  });
});

describe('nested repeats', () => {
  const nested = exportFormFrom('exports/childrens_survey.form.csv');
  test('a nested repeat gets its own slot after its parent, blocks per parent position', () => {
    const record: ExportRecord = {
      children: [
        { 'children/name': 'Mike', 'children/cartoons': [{ 'children/cartoons/name': 'Tom' }, { 'children/cartoons/name': 'Jerry' }] },
        { 'children/name': 'John', 'children/cartoons': [{ 'children/cartoons/name': 'Shrek', 'children/cartoons/characters': [{ 'children/cartoons/characters/name': 'Fiona' }] }] },
      ],
    };
    const shape = new RepeatShape();
    shape.observe(record);
    const flat = planFlatLayout(nested, { ...DEFAULT_LAYOUT_OPTIONS, splitSelectMultiples: false }, shape, links);
    const headers = flat.headerRows[0] ?? [];
    const repeatHeaders = headers.filter((h) => h.includes('['));
    assert.deepEqual(repeatHeaders, [
      'children[1]/name', 'children[1]/age', 'children[1]/fav_colors', 'children[1]/ice.creams',
      'children[2]/name', 'children[2]/age', 'children[2]/fav_colors', 'children[2]/ice.creams',
      'children[1]/cartoons[1]/name', 'children[1]/cartoons[1]/why',
      'children[1]/cartoons[2]/name', 'children[1]/cartoons[2]/why',
      'children[2]/cartoons[1]/name', 'children[2]/cartoons[1]/why',
      'children[2]/cartoons[1]/characters[1]/name', 'children[2]/cartoons[1]/characters[1]/good_or_evil',
    ]);
    const row = flat.row(record);
    const at = (h: string) => row[headers.indexOf(h)];
    assert.equal(at('children[2]/cartoons[1]/name'), 'Shrek');
    assert.equal(at('children[2]/cartoons[1]/characters[1]/name'), 'Fiona');
    assert.equal(at('children[1]/cartoons[2]/why'), 'n/a');
  });
});
