import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { convert } from '../src/index.ts';
import { assertXml, md, mdError } from './helpers.ts';

describe('basic survey', () => {
  it('names the form after the file stem when settings give no form_id or title', () => {
    const result = md(
      `
      | survey |
      |        | type | name | label |
      |        | text | q1   | Q1    |
      `,
      'my_form.md',
    );
    assert.equal(result.idString, 'my_form');
    assert.equal(result.title, 'my_form');
    assertXml(result.xform, '<h:title>my_form</h:title>', '<data id="my_form">', '<q1/>', '<bind nodeset="/data/q1" type="string"/>');
    assertXml(result.xform, '<input ref="/data/q1"><label>Q1</label></input>');
    assert.equal(result.formJson['id_string'], 'my_form');
    assert.equal(result.formJson['type'], 'survey');
  });

  it('uses --name for the primary instance root', () => {
    const result = convert('| survey |\n| | type | name | label |\n| | integer | age | Age |\n', { fileName: 'f.md', rootName: 'household' });
    assert.ok(result.ok);
    assertXml(result.xform, '<household id="f">', '<bind nodeset="/household/age" type="int"/>');
  });

  it('reads settings: form_id, form_title, version, style, instance_name', () => {
    const result = md(`
      | survey |
      |        | type | name | label |
      |        | text | q1   | Q1    |
      | settings |
      |          | form_id | form_title | version | style  | instance_name |
      |          | the_id  | The Title  | 2024-1  | pages  | concat(\${q1}) |
    `);
    assert.equal(result.idString, 'the_id');
    assert.equal(result.title, 'The Title');
    assert.equal(result.version, '2024-1');
    assert.equal(result.instanceName, 'concat(${q1})');
    assertXml(result.xform, '<data id="the_id" version="2024-1">', '<h:body class="pages">', 'calculate="concat( /data/q1 )"');
  });

  it('rejects a row with no name, naming the row', () => {
    const { message, failure } = mdError(`
      | survey |
      |        | type | name | label |
      |        | text |      | Q1    |
    `);
    assert.match(message, /\[row : 2\] Question or group with no name/);
    assert.equal(failure.errors[0]?.row, 2);
    assert.equal(failure.errors[0]?.sheet, 'survey');
  });

  it('returns a failure, not an exception, for a corrupt spreadsheet', () => {
    const result = convert(new Uint8Array([0x50, 0x4b, 3, 4, 1, 2, 3]), { fileName: 'broken.xlsx' });
    assert.equal(result.ok, false);
  });
});
