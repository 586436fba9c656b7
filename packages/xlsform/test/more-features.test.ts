import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertXml, md, mdError } from './helpers.ts';

describe('less common features', () => {
  it('the flat setting flattens groups and moves their relevance onto the questions', () => {
    const { xform, formJson } = md(`
      | survey |
      |        | type        | name | label | relevant |
      |        | integer     | a    | A     |          |
      |        | begin group | g    | G     | \${a} > 1 |
      |        | text        | b    | B     |          |
      |        | end group   |      |       |          |
      | settings |
      |          | flat |
      |          | TRUE |
    `);
    assertXml(xform, '<a/><b/>', '<bind nodeset="/data/b" type="string" relevant=" /data/a  &gt; 1"/>');
    const g = (formJson['children'] as Array<Record<string, unknown>>)[1];
    assert.equal(g?.['flat'], true);
  });

  it('compact representation: prefix, delimiter and odk:tag', () => {
    const { xform } = md(`
      | survey |
      |        | type | name | label | compact_tag |
      |        | text | a    | A     | aa          |
      | settings |
      |          | prefix | delimiter |
      |          | p      | ~         |
    `);
    assertXml(xform, '<data id="test_form" odk:prefix="p" odk:delimiter="~">', '<a odk:tag="aa"/>');
  });

  it('sms columns are kept in the form JSON', () => {
    const { formJson } = md(`
      | survey |
      |        | type | name | label | sms_field |
      |        | text | a    | A     | AA        |
      | settings |
      |          | sms_keyword |
      |          | kw          |
    `);
    assert.equal(formJson['sms_keyword'], 'kw');
    assert.equal((formJson['children'] as Array<Record<string, unknown>>)[0]?.['sms_field'], 'AA');
  });

  it('disabled rows are skipped with a warning', () => {
    const { xform, warnings } = md(`
      | survey |
      |        | type | name | label | disabled |
      |        | text | a    | A     | yes      |
      |        | text | b    | B     |          |
    `);
    assert.ok(!xform.includes('<a/>'));
    assert.ok(warnings.some((w) => w.includes("The 'disabled' column header is not part of the current spec")));
  });

  it('notes without a name get a generated one', () => {
    const { xform } = md(`| survey |\n| | type | name | label |\n| | note | | Hello |\n`);
    assertXml(xform, '<generated_note_name_2/>');
  });

  it('smart quotes in expressions become plain quotes', () => {
    const { xform } = md(`| survey |\n| | type | name | label | relevant |\n| | text | a | A | . = \u2018x\u2019 |\n`);
    assertXml(xform, `relevant=". = 'x'"`);
  });

  it('choice lists with media need itext and keep media forms', () => {
    const { xform } = md(`
      | survey |
      |        | type          | name | label |
      |        | select_one yn | q    | Q     |
      | choices |
      |         | list_name | name | label | image |
      |         | yn        | y    | Yes   | y.png |
    `);
    assertXml(xform, '<text id="yn-0"><value>Yes</value><value form="image">jr://images/y.png</value></text>');
  });

  it('big-image needs an image', () => {
    const { message } = mdError(`| survey |\n| | type | name | label | big-image |\n| | note | n | N | b.png |\n`);
    assert.match(message, /To use big-image, you must also specify an image/);
  });
});
