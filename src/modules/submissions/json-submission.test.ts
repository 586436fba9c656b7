import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { convert } from '../../../packages/xlsform/src/index.ts';
import { buildFormModel, type FormModel } from '../../lib/form-model/model.ts';
import { parseInstance, type SubmissionRecord } from '../../lib/instance-xml.ts';
import {
  elementName, EMPTY_JSON_SUBMISSION, INCORRECT_FORMAT, jsonSubmissionToXml, NO_SUBMISSION_KEY, readJsonSubmission,
} from './json-submission.ts';

const UUID = '5f1c1b0e-7b7a-4c53-9a52-0d9c1a3e2b10';

function accepted(body: unknown): { idString: string | null; submission: Record<string, unknown> } {
  const result = readJsonSubmission(body);
  if (!result.ok) assert.fail(`expected a submission, got ${JSON.stringify(result.body)}`);
  return result;
}

function tutorialSchema(): FormModel {
  const bytes = readFileSync(new URL('../../../test/fixtures/submissions/tutorial_w_repeats.csv', import.meta.url));
  const form = convert(bytes, { fileName: 'tutorial_w_repeats.csv' });
  if (!form.ok) assert.fail(form.errors.map((e) => e.message).join('; '));
  return buildFormModel(form.formJson);
}

function roundTrip(body: unknown, schema: FormModel): SubmissionRecord {
  const { submission } = accepted(body);
  const xml = jsonSubmissionToXml(submission, { rootName: schema.rootName, idString: schema.idString, uuid: UUID });
  const result = parseInstance(xml, schema, { maxBytes: 1_000_000 });
  if (!result.ok) assert.fail(`${result.error} ${result.detail ?? ''}\n${xml}`);
  return result.record;
}

describe('readJsonSubmission: onadata validation errors', () => {
  test('no submission key', () => {
    for (const body of [{ id: 'x' }, [], 'text', null, 42]) {
      assert.deepStrictEqual(readJsonSubmission(body), { ok: false, body: { submission: [NO_SUBMISSION_KEY] } });
    }
  });

  test('an empty submission', () => {
    for (const submission of [{}, null, '', [], 0, false]) {
      assert.deepStrictEqual(readJsonSubmission({ id: 'x', submission }), { ok: false, body: { submission: [EMPTY_JSON_SUBMISSION] } });
    }
    assert.equal(EMPTY_JSON_SUBMISSION, 'Received empty submission. No instance was created');
  });

  test('a list (or any non-object) submission is the wrong format', () => {
    for (const submission of [[{ name: 'Bob' }], 'name=Bob', 7, true]) {
      assert.deepStrictEqual(readJsonSubmission({ id: 'x', submission }), { ok: false, body: [INCORRECT_FORMAT] });
    }
    assert.match(INCORRECT_FORMAT, /^Incorrect format, see format details here,https:\/\/api\.ona\.io\/static\/docs\/submissions\.html\.$/);
  });

  test('absurdly deep nesting is the wrong format', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 5000; i++) deep = { g: deep };
    assert.deepStrictEqual(readJsonSubmission({ id: 'x', submission: deep }), { ok: false, body: [INCORRECT_FORMAT] });
  });

  test('the id is the form id_string; absent means null', () => {
    assert.equal(accepted({ id: 'tutorial', submission: { a: '1' } }).idString, 'tutorial');
    assert.equal(accepted({ submission: { a: '1' } }).idString, null);
  });
});

describe('readJsonSubmission: reshaping', () => {
  test('lists of strings are joined with spaces, at any depth', () => {
    const { submission } = accepted({ submission: { web_browsers: ['firefox', 'chrome'], none: [], g: { many: ['a', 'b'] }, rep: [{ many: ['c', 'd'] }] } });
    assert.deepStrictEqual(submission, { web_browsers: 'firefox chrome', none: '', g: { many: 'a b' }, rep: [{ many: 'c d' }] });
  });

  test('keys with slashes become nested objects, merged with their siblings', () => {
    const { submission } = accepted({ submission: { 'grp/a': '1', 'grp/b': '2', 'grp/sub/c': '3', grp2: { 'x/y': '4' }, 'meta/instanceID': 'uuid:1' } });
    assert.deepStrictEqual(submission, { grp: { a: '1', b: '2', sub: { c: '3' } }, grp2: { x: { y: '4' } }, meta: { instanceID: 'uuid:1' } });
  });
});

describe('jsonSubmissionToXml', () => {
  test('writes the instance under the form root with the id_string and a new instanceID', () => {
    const xml = jsonSubmissionToXml({ name: 'Bob', age: 25, ok: true, gone: null, g: { a: 'x' }, rep: [{ b: 1 }, { b: 2 }] }, { rootName: 'data', idString: 'tutorial', uuid: UUID });
    assert.equal(xml, '<?xml version="1.0" encoding="UTF-8"?><data id="tutorial"><name>Bob</name><age>25</age><ok>True</ok><gone></gone>'
      + `<g><a>x</a></g><rep><b>1</b></rep><rep><b>2</b></rep><meta><instanceID>uuid:${UUID}</instanceID></meta></data>`);
  });

  test('an instanceID sent keeps its place; other meta is kept beside the new one', () => {
    const kept = jsonSubmissionToXml({ meta: { instanceID: 'uuid:mine' } }, { rootName: 'data', idString: 'f', uuid: UUID });
    assert.equal(kept, '<?xml version="1.0" encoding="UTF-8"?><data id="f"><meta><instanceID>uuid:mine</instanceID></meta></data>');
    const added = jsonSubmissionToXml({ meta: { instanceName: 'n' } }, { rootName: 'data', idString: 'f', uuid: UUID });
    assert.match(added, new RegExp(`<meta><instanceName>n</instanceName><instanceID>uuid:${UUID}</instanceID></meta>`));
  });

  test('text and the id attribute are escaped', () => {
    const xml = jsonSubmissionToXml({ note: '<b>"Tom" & Jerry</b>' }, { rootName: 'data', idString: 'a"b&<c>', uuid: UUID });
    assert.match(xml, /<data id="a&quot;b&amp;&lt;c&gt;"><note>&lt;b&gt;"Tom" &amp; Jerry&lt;\/b&gt;<\/note>/);
  });

  test('keys that are not XML names are made into names as dict2xml does', () => {
    assert.equal(elementName('name'), 'name');
    assert.equal(elementName('1st'), '_1st');
    assert.equal(elementName('my key'), 'my_key');
    assert.equal(elementName('xmlData'), '_xmlData');
    assert.equal(elementName('<x>'), '__x_');
    assert.equal(elementName('école'), 'école');
  });
});

describe('JSON submission round trip: JSON → XML → record', () => {
  test('the tutorial_w_repeats record, from JSON', () => {
    const body = {
      id: 'tutorial_w_repeats',
      submission: {
        name: 'Bob & <Alice>', age: 25, has_children: '1',
        children: [{ childs_name: 'Tom', childs_age: 12 }, { childs_name: 'Dick', childs_age: '5' }],
        gps: '-1.2625621 36.7921711 0.0 20.0',
        web_browsers: ['firefox', 'chrome'],
        picture: null,
        'meta/instanceID': 'uuid:b31c6ac2-b8ca-4180-914f-c844fa10ed3b',
      },
    };
    assert.deepStrictEqual(roundTrip(body, tutorialSchema()), {
      name: 'Bob & <Alice>', age: 25, has_children: '1',
      children: [
        { 'children/childs_name': 'Tom', 'children/childs_age': 12 },
        { 'children/childs_name': 'Dick', 'children/childs_age': 5 },
      ],
      gps: '-1.2625621 36.7921711 0.0 20.0',
      web_browsers: 'firefox chrome',
      'meta/instanceID': 'uuid:b31c6ac2-b8ca-4180-914f-c844fa10ed3b',
    });
  });

  test('a submission without instanceID gets one, so the record has a uuid', () => {
    const schema = tutorialSchema();
    const { submission } = accepted({ submission: { name: 'Eve' } });
    const result = parseInstance(jsonSubmissionToXml(submission, { rootName: 'data', idString: 'tutorial_w_repeats', uuid: UUID }), schema, { maxBytes: 10_000 });
    if (!result.ok) assert.fail(result.error);
    assert.equal(result.meta.uuid, UUID);
    assert.equal(result.meta.idString, 'tutorial_w_repeats');
    assert.deepStrictEqual(result.record, { name: 'Eve', 'meta/instanceID': `uuid:${UUID}` });
  });

  test('transport_submission.json: nested groups flatten and null answers give no key', () => {
    const body = {
      id: 'transportation_2011_07_25',
      submission: {
        transport: {
          available_transportation_types_to_referral_facility: ['ambulance', 'bicycle'],
          loop_over_transport_types_frequency: {
            ambulance: { frequency_to_referral_facility: 'daily' },
            bicycle: { frequency_to_referral_facility: 'weekly' },
            boat_canoe: null,
          },
        },
        meta: { instanceID: 'uuid:f3d8dc65-91a6-4d0f-9e97-802128083390' },
      },
    };
    const schema = buildFormModel({ name: 'transportation', id_string: 'transportation_2011_07_25', children: [] });
    assert.deepStrictEqual(roundTrip(body, schema), {
      'transport/available_transportation_types_to_referral_facility': 'ambulance bicycle',
      'transport/loop_over_transport_types_frequency/ambulance/frequency_to_referral_facility': 'daily',
      'transport/loop_over_transport_types_frequency/bicycle/frequency_to_referral_facility': 'weekly',
      'meta/instanceID': 'uuid:f3d8dc65-91a6-4d0f-9e97-802128083390',
    });
  });
});
