import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertXml, md, mdError } from './helpers.ts';

describe('groups and repeats', () => {
  it('nests group children in the instance and the body', () => {
    const { xform } = md(`
      | survey |
      |        | type        | name | label | relevant   |
      |        | begin group | g    | G     | 1 = 1      |
      |        | text        | a    | A     |            |
      |        | end group   |      |       |            |
    `);
    assertXml(xform, '<g><a/></g>', '<bind nodeset="/data/g" relevant="1 = 1"/>', '<group ref="/data/g"><label>G</label><input ref="/data/g/a">');
  });

  it('field-list is a group appearance', () => {
    const { xform } = md(`
      | survey |
      |        | type        | name | label | appearance |
      |        | begin_group | g    | G     | field-list |
      |        | text        | a    | A     |            |
      |        | end_group   |      |       |            |
    `);
    assertXml(xform, '<group appearance="field-list" ref="/data/g">');
  });

  it('repeats get a jr:template copy and a group wrapper', () => {
    const { xform } = md(`
      | survey |
      |        | type         | name | label |
      |        | begin repeat | r    | R     |
      |        | text         | a    | A     |
      |        | end repeat   |      |       |
    `);
    assertXml(xform, '<r jr:template=""><a/></r><r><a/></r>', '<group ref="/data/r"><label>R</label><repeat nodeset="/data/r"><input ref="/data/r/a">');
  });

  it('repeat_count with an expression adds a generated count calculate', () => {
    const { xform } = md(`
      | survey |
      |        | type         | name | label | repeat_count |
      |        | integer      | n    | N     |              |
      |        | begin repeat | r    | R     | \${n} + 1    |
      |        | text         | a    | A     |              |
      |        | end repeat   |      |       |              |
    `);
    assertXml(xform, '<bind nodeset="/data/r_count" type="string" readonly="true()" calculate=" /data/n  + 1"/>', '<repeat nodeset="/data/r" jr:count=" /data/r_count ">');
  });

  it('repeat_count with a plain reference points at the question', () => {
    const { xform } = md(`
      | survey |
      |        | type         | name | label | repeat_count |
      |        | integer      | n    | N     |              |
      |        | begin repeat | r    | R     | \${n}        |
      |        | text         | a    | A     |              |
      |        | end repeat   |      |       |              |
    `);
    assertXml(xform, '<repeat nodeset="/data/r" jr:count=" /data/n ">');
  });

  it('references between siblings inside a repeat are relative', () => {
    const { xform } = md(`
      | survey |
      |        | type         | name | label | relevant  |
      |        | begin repeat | r    | R     |           |
      |        | integer      | a    | A     |           |
      |        | text         | b    | B     | \${a} > 1 |
      |        | end repeat   |      |       |           |
    `);
    assertXml(xform, '<bind nodeset="/data/r/b" type="string" relevant=" ../a  &gt; 1"/>');
  });

  it('table-list becomes field-list with a label row and list-nolabel selects', () => {
    const { xform } = md(`
      | survey |
      |        | type          | name | label | appearance |
      |        | begin group   | t    | Table | table-list |
      |        | select_one yn | a    | A     |            |
      |        | select_one yn | b    | B     |            |
      |        | end group     |      |       |            |
      | choices |
      |         | list_name | name | label |
      |         | yn        | y    | Yes   |
      |         | yn        | n    | No    |
    `);
    assertXml(
      xform,
      '<group appearance="field-list" ref="/data/t">',
      '<input ref="/data/t/generated_table_list_label_2"><label>Table</label></input>',
      '<select1 ref="/data/t/reserved_name_for_field_list_labels_3" appearance="label">',
      '<select1 ref="/data/t/a" appearance="list-nolabel">',
    );
  });

  it('rejects an unmatched end group with its row', () => {
    const { message, failure } = mdError(`
      | survey |
      |        | type      | name | label |
      |        | text      | a    | A     |
      |        | end group |      |       |
    `);
    assert.match(message, /\[row : 3\] Unmatched 'end_group'/);
    assert.equal(failure.errors[0]?.row, 3);
  });

  it('rejects a group that is never closed', () => {
    const { message } = mdError(`
      | survey |
      |        | type         | name | label |
      |        | begin repeat | r    | R     |
      |        | text         | a    | A     |
    `);
    assert.match(message, /\[row : 2\] Unmatched 'begin_repeat'.*'r'/);
  });

  it('rejects duplicate names in the same group but allows them in different groups', () => {
    const { message } = mdError(`
      | survey |
      |        | type | name | label |
      |        | text | a    | A     |
      |        | text | a    | A2    |
    `);
    assert.match(message, /\[row : 3\].*'a' is invalid/);
    md(`
      | survey |
      |        | type        | name | label |
      |        | text        | a    | A     |
      |        | begin group | g    | G     |
      |        | text        | a    | A2    |
      |        | end group   |      |       |
    `);
  });

  it('warns about a repeat without a label', () => {
    const { warnings } = md(`
      | survey |
      |        | type         | name | label |
      |        | begin repeat | r    |       |
      |        | text         | a    | A     |
      |        | end repeat   |      |       |
    `);
    assert.ok(warnings.some((w) => w.includes('[row : 2] Repeat has no label')));
  });

  it('expands a loop over a choice list into one group per choice', () => {
    const { xform } = md(`
      | survey |
      |        | type               | name | label         |
      |        | begin loop over c1 | l    | Loop          |
      |        | integer            | n    | How many %(label)s? |
      |        | end loop           |      |               |
      | choices |
      |         | list_name | name | label |
      |         | c1        | cow  | cows  |
      |         | c1        | pig  | pigs  |
    `);
    assertXml(xform, '<l><cow><n/></cow><pig><n/></pig></l>', '<label>How many cows?</label>', '<label>How many pigs?</label>');
  });
});
