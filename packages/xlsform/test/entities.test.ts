import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertXml, md, mdError } from './helpers.ts';

describe('entities', () => {
  it('a create declaration adds meta/entity with dataset, create and a generated id', () => {
    const { xform, formJson } = md(`
      | survey |
      |        | type | name  | label | save_to |
      |        | text | tree  | Tree  | species |
      | entities |
      |          | list_name | label   |
      |          | trees     | \${tree} |
    `);
    assertXml(
      xform,
      'xmlns:entities="http://www.opendatakit.org/xforms/entities"',
      '<model odk:xforms-version="1.0.0" entities:entities-version="2024.1.0">',
      '<meta><entity dataset="trees" create="1" id=""><label/></entity><instanceID/></meta>',
      '<bind nodeset="/data/tree" type="string" entities:saveto="species"/>',
      '<setvalue ref="/data/meta/entity/@id" event="odk-instance-first-load" value="uuid()"/>',
      '<bind nodeset="/data/meta/entity/label" calculate=" /data/tree " readonly="true()" type="string"/>',
    );
    assert.equal(formJson['entity_version'], '2024.1.0');
  });

  it('an update declaration reads the entity version from the list', () => {
    const { xform } = md(`
      | survey |
      |        | type | name | label |
      |        | text | id   | ID    |
      | entities |
      |          | list_name | entity_id | update_if    |
      |          | trees     | \${id}    | \${id} != '' |
    `);
    assertXml(
      xform,
      '<entity dataset="trees" update="1" baseVersion="" trunkVersion="" branchId="" id=""/>',
      `calculate="instance('trees')/root/item[name= /data/id ]/__version"`,
    );
  });

  it('an entity declared from inside a repeat lives in the repeat (entities 2025.1)', () => {
    const { xform } = md(`
      | survey |
      |        | type         | name | label | save_to |
      |        | begin_repeat | r    | R     |         |
      |        | text         | q    | Q     | p       |
      |        | end_repeat   |      |       |         |
      | entities |
      |          | list_name | label |
      |          | e         | E     |
    `);
    assertXml(xform, 'entities:entities-version="2025.1.0"', '<r><q/><meta><entity dataset="e" create="1" id=""><label/></entity></meta></r>');
  });

  it('rejects save_to without an entities sheet', () => {
    const { message } = mdError(`| survey |\n| | type | name | label | save_to |\n| | text | q | Q | p |\n`);
    assert.match(message, /\[row : 2\] On the 'survey' sheet, the 'save_to' value is invalid/);
  });

  it('rejects a declaration that creates without a label', () => {
    const { message } = mdError(`| survey |\n| | type | name | label |\n| | text | q | Q |\n| entities |\n| | list_name | create_if |\n| | e | true() |\n`);
    assert.match(message, /\[row : 2\] On the 'entities' sheet, the entity declaration is invalid/);
  });
});
