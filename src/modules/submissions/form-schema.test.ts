import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { convert } from '../../../packages/xlsform/src/index.ts';
import { buildFormSchema, FIELD_NUMERIC, FIELD_REPEAT, type FormSchema } from './form-schema.ts';

function schemaOf(form: string, fileName = 'form.md'): FormSchema {
  const result = convert(form, { fileName });
  if (!result.ok) assert.fail(result.errors.map((e) => e.message).join('; '));
  return buildFormSchema(result.formJson);
}

describe('buildFormSchema', () => {
  test('tutorial_w_repeats: repeat, numeric, media, geopoint and select_multiple paths', () => {
    const bytes = readFileSync(new URL('../../../test/fixtures/submissions/tutorial_w_repeats.csv', import.meta.url));
    const result = convert(bytes, { fileName: 'tutorial_w_repeats.csv' });
    if (!result.ok) assert.fail(result.errors.map((e) => e.message).join('; '));
    const schema = buildFormSchema(result.formJson);
    assert.equal(schema.rootName, 'data');
    assert.equal(schema.idString, 'tutorial_w_repeats');
    assert.equal(schema.version, '2014111');
    assert.deepEqual([...schema.repeatPaths], ['children']);
    assert.deepEqual([...schema.numericPaths], ['age', 'children/childs_age']);
    assert.deepEqual(schema.mediaPaths, ['picture']);
    assert.deepEqual(schema.geopointPaths, ['gps']);
    assert.deepEqual([...schema.selectMultiplePaths], ['web_browsers']);
    assert.equal(schema.startPath, 'start');
    assert.equal(schema.endPath, 'end');
    assert.equal(schema.encrypted, false);
    assert.equal(schema.fieldFlags.get('children'), FIELD_REPEAT);
    assert.equal(schema.fieldFlags.get('children/childs_age'), FIELD_NUMERIC);
    assert.equal(schema.fieldFlags.get('name'), undefined);
  });

  test('paths run through groups and nested repeats; choices are not elements', () => {
    const schema = schemaOf(`
      | survey |
      |        | type                | name      | label |
      |        | start               | began     |       |
      |        | end                 | finished  |       |
      |        | begin group         | hh        | H     |
      |        | int                 | size      | S     |
      |        | gps                 | where     | W     |
      |        | begin repeat        | member    | M     |
      |        | decimal             | income    | I     |
      |        | select_one yn       | yes       | Y     |
      |        | begin repeat        | visit     | V     |
      |        | photo               | shot      | P     |
      |        | audio               | voice     | A     |
      |        | end repeat          |           |       |
      |        | end repeat          |           |       |
      |        | end group           |           |       |
      |        | osm                 | building  | B     |
      |        | file                | doc       | D     |
      | choices |
      |         | list_name | name | label |
      |         | yn        | yes  | Yes   |
      |         | yn        | no   | No    |
    `);
    assert.deepEqual([...schema.repeatPaths], ['hh/member', 'hh/member/visit']);
    assert.deepEqual([...schema.numericPaths], ['hh/size', 'hh/member/income']);
    assert.deepEqual(schema.geopointPaths, ['hh/where']);
    assert.deepEqual(schema.mediaPaths, ['hh/member/visit/shot', 'hh/member/visit/voice', 'building', 'doc']);
    assert.equal(schema.startPath, 'began');
    assert.equal(schema.endPath, 'finished');
    assert.equal(schema.fieldFlags.get('hh/member/yes/yes'), undefined);
    assert.equal(schema.fieldFlags.get('hh/member/visit'), FIELD_REPEAT);
  });

  test('a form with a public key takes encrypted submissions', () => {
    const schema = schemaOf(`
      | survey |
      |        | type | name | label |
      |        | text | a    | A     |
      | settings |
      |          | public_key |
      |          | MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA |
    `);
    assert.equal(schema.encrypted, true);
  });

  test('odd form JSON is tolerated: missing names, non-array children', () => {
    const schema = buildFormSchema({ name: 'survey_root', children: [{ type: 'integer' }, { name: 'g', type: 'group', children: 'x' }, 5] });
    assert.equal(schema.rootName, 'survey_root');
    assert.equal(schema.idString, null);
    assert.equal(schema.fieldFlags.size, 0);
  });
});
