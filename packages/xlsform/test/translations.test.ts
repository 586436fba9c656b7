import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertXml, md } from './helpers.ts';

describe('translations and media', () => {
  it('label::Language columns become itext translations referenced from the body', () => {
    const { xform, formJson } = md(`
      | survey |
      |        | type | name | label::English (en) | label::French (fr) | hint::English (en) |
      |        | text | q    | Name                | Nom                | Your name          |
      | settings |
      |          | default_language |
      |          | English (en)     |
    `);
    assertXml(
      xform,
      '<translation lang="English (en)" default="true()"><text id="/data/q:label"><value>Name</value></text><text id="/data/q:hint"><value>Your name</value></text></translation>',
      '<translation lang="French (fr)"><text id="/data/q:label"><value>Nom</value></text><text id="/data/q:hint"><value>-</value></text></translation>',
      `<input ref="/data/q"><label ref="jr:itext('/data/q:label')"/><hint ref="jr:itext('/data/q:hint')"/></input>`,
    );
    const q = (formJson['children'] as Array<Record<string, unknown>>)[0];
    assert.deepEqual(q?.['label'], { 'English (en)': 'Name', 'French (fr)': 'Nom' });
    assert.equal(formJson['default_language'], 'English (en)');
  });

  it('warns when a language lacks a column the others have', () => {
    const { warnings } = md(`
      | survey |
      |        | type | name | label::English (en) | label::French (fr) | hint::English (en) |
      |        | text | q    | Name                | Nom                | Your name          |
    `);
    assert.ok(warnings.includes("Language 'French (fr)' is missing the survey hint column."));
  });

  it('warns about language names without a code', () => {
    const { warnings } = md(`| survey |\n| | type | name | label::English |\n| | text | q | Name |\n`);
    assert.ok(warnings.some((w) => w.startsWith('The following language declarations do not contain valid machine-readable codes: English.')));
  });

  it('translated choice labels get itext ids and itextId items', () => {
    const { xform } = md(`
      | survey |
      |        | type          | name | label::en (en) |
      |        | select_one yn | q    | Q              |
      | choices |
      |         | list_name | name | label::en (en) | label::fr (fr) |
      |         | yn        | yes  | Yes            | Oui            |
    `);
    assertXml(
      xform,
      '<text id="yn-0"><value>Yes</value></text>',
      '<text id="yn-0"><value>Oui</value></text>',
      '<item><itextId>yn-0</itextId><name>yes</name></item>',
      '<label ref="jr:itext(itextId)"/>',
    );
  });

  it('media columns become itext values with jr:// URIs', () => {
    const { xform } = md(`
      | survey |
      |        | type | name | label | image   | audio   | video   |
      |        | note | n    | Look  | a.png   | b.mp3   | c.mp4   |
    `);
    assertXml(
      xform,
      '<text id="/data/n:label"><value>Look</value><value form="image">jr://images/a.png</value><value form="audio">jr://audio/b.mp3</value><value form="video">jr://video/c.mp4</value></text>',
    );
  });

  it('guidance hints are itext hint values of form "guidance"', () => {
    const { xform } = md(`
      | survey |
      |        | type | name | label | hint | guidance_hint |
      |        | text | q    | Q     | H    | More help     |
    `);
    assertXml(xform, '<text id="/data/q:hint"><value>H</value><value form="guidance">More help</value></text>');
  });

  it('constraint messages with references go through itext', () => {
    const { xform } = md(`
      | survey |
      |        | type    | name | label | constraint | constraint_message     |
      |        | integer | a    | A     | . > 0      | Must exceed \${a}       |
    `);
    assertXml(xform, `jr:constraintMsg="jr:itext('/data/a:jr:constraintMsg')"`, '<value> Must exceed <output value=" /data/a "/></value>');
  });

  it('labels with ${references} get <output/> elements', () => {
    const { xform } = md(`
      | survey |
      |        | type | name | label          |
      |        | text | a    | A              |
      |        | note | n    | You said \${a} |
    `);
    // Text mixed with <output/> is padded with spaces, as pyxform writes it.
    assert.ok(xform.includes('<label> You said <output value=" /data/a "/> </label>'));
  });

  it('or_other in a translated form warns', () => {
    const { warnings } = md(`
      | survey |
      |        | type                   | name | label::en (en) |
      |        | select_one yn or_other | q    | Q              |
      | choices |
      |         | list_name | name | label::en (en) |
      |         | yn        | yes  | Yes            |
    `);
    assert.ok(warnings.some((w) => w.startsWith('This form uses or_other and translations')));
  });
});
