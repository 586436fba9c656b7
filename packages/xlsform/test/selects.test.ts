import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertNoXml, assertXml, md, mdError } from './helpers.ts';

const CHOICES = `
  | choices |
  |         | list_name | name | label |
  |         | yn        | yes  | Yes   |
  |         | yn        | no   | No    |
`;

describe('selects', () => {
  it('select_one uses an itemset over the list instance', () => {
    const { xform, formJson } = md(`
      | survey |
      |        | type          | name | label |
      |        | select_one yn | q    | Q     |
      ${CHOICES}
    `);
    assertXml(
      xform,
      '<instance id="yn"><root><item><name>yes</name><label>Yes</label></item><item><name>no</name><label>No</label></item></root></instance>',
      '<select1 ref="/data/q"><label>Q</label><itemset nodeset="instance(\'yn\')/root/item"><value ref="name"/><label ref="label"/></itemset></select1>',
    );
    const q = (formJson['children'] as Array<Record<string, unknown>>)[0];
    assert.equal(q?.['type'], 'select one');
    assert.equal(q?.['list_name'], 'yn');
    assert.deepEqual(q?.['children'], [
      { name: 'yes', label: 'Yes' },
      { name: 'no', label: 'No' },
    ]);
  });

  it('select_multiple is a <select>; "select all that apply" is the same', () => {
    for (const type of ['select_multiple yn', 'select all that apply yn']) {
      assertXml(md(`| survey |\n| | type | name | label |\n| | ${type} | q | Q |\n${CHOICES}`).xform, '<select ref="/data/q">');
    }
  });

  it('rank is odk:rank', () => {
    const { xform } = md(`| survey |\n| | type | name | label |\n| | rank yn | q | Q |\n${CHOICES}`);
    assertXml(xform, '<bind nodeset="/data/q" type="odk:rank"/>', '<odk:rank ref="/data/q">');
  });

  it('or_other adds an "other" choice and a follow-up text question', () => {
    const { xform, warnings } = md(`
      | survey |
      |        | type                   | name | label |
      |        | select_one yn or_other | q    | Q     |
      ${CHOICES}
    `);
    assertXml(xform, '<item><name>other</name><label>Other</label></item>', `<bind nodeset="/data/q_other" type="string" relevant="selected(../q, 'other')"/>`, '<label>Specify other.</label>');
    assert.deepEqual(warnings, []);
  });

  it('choice_filter filters the itemset', () => {
    const { xform } = md(`
      | survey |
      |        | type          | name | label | choice_filter |
      |        | select_one yn | a    | A     |               |
      |        | select_one yn | b    | B     | name != \${a} |
      ${CHOICES}
    `);
    assertXml(xform, `<itemset nodeset="instance('yn')/root/item[name !=  /data/a ]">`);
  });

  it('select_one_from_file points at an attached file instance', () => {
    const { xform } = md(`
      | survey |
      |        | type                          | name | label |
      |        | select_one_from_file towns.csv | t    | Town  |
      |        | select_multiple_from_file areas.xml | a | Area |
    `);
    assertXml(
      xform,
      '<instance id="towns" src="jr://file-csv/towns.csv"/>',
      '<instance id="areas" src="jr://file/areas.xml"/>',
      `<itemset nodeset="instance('towns')/root/item"><value ref="name"/><label ref="label"/></itemset>`,
    );
  });

  it('select from file takes value and label columns from parameters', () => {
    const { xform } = md(`
      | survey |
      |        | type                           | name | label | parameters           |
      |        | select_one_from_file towns.csv | t    | Town  | value=code label=title |
    `);
    assertXml(xform, '<value ref="code"/><label ref="title"/>');
  });

  it('rejects select_one_from_file without a supported extension', () => {
    const { message } = mdError(`| survey |\n| | type | name | label |\n| | select_one_from_file towns.txt | t | T |\n`);
    assert.match(message, /\[row : 2\]/);
  });

  it('select_one_external uses a query and yields itemsets.csv', () => {
    const result = md(`
      | survey |
      |        | type                     | name  | label | choice_filter  |
      |        | select_one yn            | a     | A     |                |
      |        | select_one_external city | city  | City  | state=\${a}    |
      ${CHOICES}
      | external_choices |
      |                  | list_name | name   | label  | state |
      |                  | city      | sydney | Sydney | yes   |
    `);
    assertXml(result.xform, `<input ref="/data/city" query="instance('city')/root/item[state= /data/a ]">`);
    assert.equal(result.itemsetsCsv, '"list_name","name","label","state"\r\n"city","sydney","Sydney","yes"\r\n');
  });

  it('select_one_external without a choice_filter is rejected (pyxform fails on it)', () => {
    const { message } = mdError(`
      | survey |
      |        | type                     | name | label |
      |        | select_one_external city | city | City  |
      | external_choices |
      |                  | list_name | name   | label  |
      |                  | city      | sydney | Sydney |
    `);
    assert.match(message, /\[row : 2\] List name not in choices sheet: city/);
  });

  it('randomize and seed wrap the nodeset', () => {
    const { xform } = md(`
      | survey |
      |        | type          | name | label | parameters                 |
      |        | integer       | s    | S     |                            |
      |        | select_one yn | q    | Q     | randomize=true seed=\${s}  |
      ${CHOICES}
    `);
    assertXml(xform, `<itemset nodeset="randomize(instance('yn')/root/item, /data/s)">`);
  });

  it('search() appearance puts the items inline and drops the list instance', () => {
    const { xform } = md(`
      | survey |
      |        | type          | name | label | appearance                   |
      |        | select_one yn | q    | Q     | search('fruits')             |
      ${CHOICES}
    `);
    assertXml(xform, '<select1 ref="/data/q" appearance="search(\'fruits\')">', '<item><label>Yes</label><value>yes</value></item>');
    assertNoXml(xform, '<instance id="yn">');
  });

  it('select from a previous repeat answer (${repeat_question})', () => {
    const { xform } = md(`
      | survey |
      |        | type              | name | label |
      |        | begin repeat      | r    | R     |
      |        | text              | n    | Name  |
      |        | end repeat        |      |       |
      |        | select_one \${n}  | pick | Pick  |
    `);
    assertXml(xform, `<itemset nodeset="/data/r[./n != '']"><value ref="n"/><label ref="n"/></itemset>`);
  });

  it('rejects an unknown list name with its row', () => {
    const { message } = mdError(`| survey |\n| | type | name | label |\n| | select_one nope | q | Q |\n${CHOICES}`);
    assert.match(message, /\[row : 2\] List name not in choices sheet: nope/);
  });

  it('rejects duplicate choice names unless allow_choice_duplicates is set', () => {
    const choices = `| choices |\n| | list_name | name | label |\n| | yn | a | A |\n| | yn | a | B |\n`;
    const { message } = mdError(`| survey |\n| | type | name | label |\n| | select_one yn | q | Q |\n${choices}`);
    assert.match(message, /\[row : 3\] On the 'choices' sheet, the 'name' value is invalid/);
    md(`| survey |\n| | type | name | label |\n| | select_one yn | q | Q |\n${choices}| settings |\n| | allow_choice_duplicates |\n| | yes |\n`);
  });

  it('warns about choices without labels', () => {
    const { warnings } = md(`| survey |\n| | type | name | label |\n| | select_one yn | q | Q |\n| choices |\n| | list_name | name |\n| | yn | a |\n`);
    assert.ok(warnings.some((w) => w.startsWith("[row : 2] On the 'choices' sheet, the 'label' value is invalid")));
  });

  it('extra choice columns become item fields', () => {
    const { xform } = md(`| survey |\n| | type | name | label |\n| | select_one yn | q | Q |\n| choices |\n| | list_name | name | label | region |\n| | yn | a | A | north |\n`);
    assertXml(xform, '<item><name>a</name><label>A</label><region>north</region></item>');
  });
});
