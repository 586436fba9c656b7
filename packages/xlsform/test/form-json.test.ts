import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { md } from './helpers.ts';

describe('form JSON (onadata form.json)', () => {
  it('has the survey fields, the children without type defaults, and the meta group', () => {
    const { formJson } = md(
      `
      | survey |
      |        | type    | name | label | relevant | appearance |
      |        | integer | a    | A     |          |            |
      |        | text    | b    | B     | \${a}>1  | multiline  |
    `,
      'my_form.md',
    );
    assert.deepEqual(formJson, {
      name: 'data',
      type: 'survey',
      title: 'my_form',
      id_string: 'my_form',
      sms_keyword: 'my_form',
      default_language: 'default',
      children: [
        { name: 'a', label: 'A', type: 'integer' },
        { name: 'b', label: 'B', type: 'text', bind: { relevant: '${a}>1' }, control: { appearance: 'multiline' } },
        {
          name: 'meta',
          type: 'group',
          control: { bodyless: true },
          children: [{ name: 'instanceID', type: 'calculate', bind: { readonly: 'true()', 'jr:preload': 'uid' } }],
        },
      ],
    });
  });

  it('lists choices on the survey and on each select', () => {
    const { formJson } = md(`
      | survey |
      |        | type          | name | label |
      |        | select_one yn | q    | Q     |
      | choices |
      |         | list_name | name | label |
      |         | yn        | y    | Yes   |
    `);
    assert.deepEqual(formJson['choices'], { yn: [{ name: 'y', label: 'Yes' }] });
    const q = (formJson['children'] as Array<Record<string, unknown>>)[0];
    assert.deepEqual(q, { name: 'q', label: 'Q', type: 'select one', itemset: 'yn', list_name: 'yn', children: [{ name: 'y', label: 'Yes' }] });
  });

  it('groups keep their control but not their bind', () => {
    const { formJson } = md(`
      | survey |
      |        | type        | name | label | relevant | appearance |
      |        | begin group | g    | G     | 1        | field-list |
      |        | text        | t    | T     |          |            |
      |        | end group   |      |       |          |            |
    `);
    const g = (formJson['children'] as Array<Record<string, unknown>>)[0];
    assert.deepEqual(g, { name: 'g', label: 'G', type: 'group', control: { appearance: 'field-list' }, children: [{ name: 't', label: 'T', type: 'text' }] });
  });
});
