import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertXml, md, mdError } from './helpers.ts';

describe('expressions, defaults and triggers', () => {
  it('replaces ${name} with the absolute path outside repeats', () => {
    const { xform } = md(`
      | survey |
      |        | type    | name | label | relevant | constraint | required | readonly |
      |        | integer | a    | A     |          |            |          |          |
      |        | text    | b    | B     | \${a}>1  | . != \${a} | yes      | true     |
    `);
    assertXml(xform, `<bind nodeset="/data/b" type="string" relevant=" /data/a &gt;1" constraint=". !=  /data/a " required="true()" readonly="true()"/>`);
  });

  it('rejects a reference to a name that does not exist, naming row and column', () => {
    const { message, failure } = mdError(`
      | survey |
      |        | type | name | label | relevant   |
      |        | text | b    | B     | \${nope}>1 |
    `);
    assert.match(message, /\[row : 2\] On the 'survey' sheet, the 'relevant' value is invalid.*'nope'/);
    assert.equal(failure.errors[0]?.column, 'relevant');
  });

  it('rejects a malformed reference', () => {
    const { message } = mdError(`| survey |\n| | type | name | label |\n| | note | n | \${a b} |\n`);
    assert.match(message, /\[row : 2\] On the 'survey' sheet, the 'label' value is invalid. Reference variables must start with/);
  });

  it('static defaults go into the instance; dynamic ones become setvalue actions', () => {
    const { xform } = md(`
      | survey |
      |        | type    | name | label | default     |
      |        | integer | a    | A     | 5           |
      |        | date    | d    | D     | 2024-01-02  |
      |        | integer | b    | B     | \${a} + 1   |
      |        | date    | t    | T     | today()     |
    `);
    assertXml(
      xform,
      '<a>5</a>',
      '<d>2024-01-02</d>',
      '<b/>',
      '<setvalue ref="/data/b" event="odk-instance-first-load" value=" /data/a  + 1"/>',
      '<setvalue ref="/data/t" event="odk-instance-first-load" value="today()"/>',
    );
  });

  it('dynamic defaults inside a repeat also fire on each new repeat', () => {
    const { xform } = md(`
      | survey |
      |        | type         | name | label | default  |
      |        | begin repeat | r    | R     |          |
      |        | date         | d    | D     | today()  |
      |        | end repeat   |      |       |          |
    `);
    assertXml(xform, '<setvalue ref="/data/r/d" event="odk-new-repeat" value="today()"/></repeat>');
  });

  it('trigger recalculates a question when another changes', () => {
    const { xform } = md(`
      | survey |
      |        | type    | name | label | calculation | trigger |
      |        | integer | a    | A     |             |         |
      |        | text    | b    | B     | now()       | \${a}   |
    `);
    assertXml(xform, '<input ref="/data/a"><label>A</label><setvalue ref="/data/b" event="xforms-value-changed" value="now()"/></input>', '<bind nodeset="/data/b" type="string"/>');
  });

  it('background-geopoint needs a trigger', () => {
    const { message } = mdError(`| survey |\n| | type | name | label |\n| | background-geopoint | g | G |\n`);
    assert.match(message, /\[row : 2\] For 'background-geopoint' questions, the 'trigger' column must not be empty/);
    const { xform } = md(`| survey |\n| | type | name | label | trigger |\n| | integer | a | A | |\n| | background-geopoint | g | G | \${a} |\n`);
    assertXml(xform, '<odk:setgeopoint ref="/data/g" event="xforms-value-changed"/>');
  });

  it('${last-saved#name} reads from the last-saved instance', () => {
    const { xform } = md(`
      | survey |
      |        | type | name | label | default              |
      |        | text | a    | A     | \${last-saved#a}     |
    `);
    assertXml(xform, '<instance id="__last-saved" src="jr://instance/last-saved"/>', `value=" instance('__last-saved')/data/a "`);
  });

  it('pulldata() declares a CSV instance', () => {
    const { xform } = md(`
      | survey |
      |        | type      | name | label | calculation                              |
      |        | calculate | c    |       | pulldata('fruits', 'name', 'key', 'x')   |
    `);
    assertXml(xform, '<instance id="fruits" src="jr://file-csv/fruits.csv"/>');
  });

  it('csv-external and xml-external declare file instances', () => {
    const { xform } = md(`| survey |\n| | type | name |\n| | csv-external | towns |\n| | xml-external | areas |\n`);
    assertXml(xform, '<instance id="towns" src="jr://file-csv/towns.csv"/>', '<instance id="areas" src="jr://file/areas.xml"/>');
  });

  it('a calculate without a calculation is rejected with its row', () => {
    const { message } = mdError(`| survey |\n| | type | name |\n| | calculate | c |\n`);
    assert.equal(message, '[row : 2] Missing calculation.');
  });
});

describe('references inside repeats', () => {
  it('a choice filter inside a repeat uses current() and a relative path', () => {
    const { xform } = md(`
      | survey |
      |        | type          | name | label | choice_filter |
      |        | begin repeat  | r    | R     |               |
      |        | select_one yn | a    | A     |               |
      |        | select_one yn | b    | B     | name != \${a} |
      |        | end repeat    |      |       |               |
      | choices |
      |         | list_name | name | label |
      |         | yn        | y    | Yes   |
      |         | yn        | n    | No    |
    `);
    assertXml(xform, `<itemset nodeset="instance('yn')/root/item[name !=  current()/../a ]">`);
  });

  it('indexed-repeat keeps absolute paths for its repeat arguments', () => {
    const { xform } = md(`
      | survey |
      |        | type         | name  | label | calculation                              |
      |        | begin repeat | r     | R     |                                          |
      |        | integer      | n     | N     |                                          |
      |        | end repeat   |       |       |                                          |
      |        | calculate    | first |       | indexed-repeat(\${n}, \${r}, 1)          |
    `);
    assertXml(xform, 'calculate="indexed-repeat( /data/r/n ,  /data/r , 1)"');
  });

  it('a reference from a nested repeat to its parent repeat climbs with ..', () => {
    const { xform } = md(`
      | survey |
      |        | type         | name | label | relevant  |
      |        | begin repeat | outer | O    |           |
      |        | integer      | a    | A     |           |
      |        | begin repeat | inner | I    |           |
      |        | text         | b    | B     | \${a} > 0 |
      |        | end repeat   |      |       |           |
      |        | end repeat   |      |       |           |
    `);
    assertXml(xform, 'relevant=" ../../a  &gt; 0"');
  });
});
