import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertXml, md, mdError } from './helpers.ts';

function form(type: string, extra = ''): string {
  return `
    | survey |
    |        | type   | name | label |
    |        | ${type} | q    | Q     |
    ${extra}
  `;
}

describe('question types', () => {
  const inputs: Array<[string, string]> = [
    ['text', 'string'],
    ['integer', 'int'],
    ['int', 'int'],
    ['decimal', 'decimal'],
    ['date', 'date'],
    ['time', 'time'],
    ['datetime', 'dateTime'],
    ['dateTime', 'dateTime'],
    ['geopoint', 'geopoint'],
    ['geotrace', 'geotrace'],
    ['geoshape', 'geoshape'],
    ['barcode', 'barcode'],
  ];
  for (const [type, bindType] of inputs) {
    it(`${type} is an input bound to ${bindType}`, () => {
      assertXml(md(form(type)).xform, `<bind nodeset="/data/q" type="${bindType}"/>`, '<input ref="/data/q"><label>Q</label></input>');
    });
  }

  const uploads: Array<[string, string]> = [
    ['image', 'image/*'],
    ['photo', 'image/*'],
    ['audio', 'audio/*'],
    ['video', 'video/*'],
    ['file', 'application/*'],
  ];
  for (const [type, mediatype] of uploads) {
    it(`${type} is a binary upload of ${mediatype}`, () => {
      assertXml(md(form(type)).xform, '<bind nodeset="/data/q" type="binary"/>', `<upload ref="/data/q" mediatype="${mediatype}"><label>Q</label></upload>`);
    });
  }

  it('note is a read-only input', () => {
    assertXml(md(form('note')).xform, '<bind nodeset="/data/q" readonly="true()" type="string"/>', '<input ref="/data/q"><label>Q</label></input>');
  });

  it('acknowledge is a trigger', () => {
    assertXml(md(form('acknowledge')).xform, '<trigger ref="/data/q"><label>Q</label></trigger>');
  });

  it('calculate has a bind and no body control', () => {
    const { xform } = md(`
      | survey |
      |        | type      | name | label | calculation |
      |        | calculate | c    |       | 1 + 2       |
    `);
    assertXml(xform, '<bind nodeset="/data/c" type="string" calculate="1 + 2"/>', '<h:body/>');
  });

  it('hidden is a string without a body control', () => {
    assertXml(md(form('hidden')).xform, '<bind nodeset="/data/q" type="string"/>', '<h:body/>');
  });

  it('range uses default start, end and step', () => {
    assertXml(md(form('range')).xform, '<range ref="/data/q" start="1" end="10" step="1"><label>Q</label></range>', '<bind nodeset="/data/q" type="int"/>');
  });

  it('range with decimal parameters is bound to decimal', () => {
    const { xform } = md(`
      | survey |
      |        | type  | name | label | parameters              |
      |        | range | q    | Q     | start=0 end=1 step=0.1  |
    `);
    assertXml(xform, '<bind nodeset="/data/q" type="decimal"/>', '<range ref="/data/q" start="0" end="1" step="0.1">');
  });

  it('range rejects a step larger than the range', () => {
    const { message } = mdError(`
      | survey |
      |        | type  | name | label | parameters           |
      |        | range | q    | Q     | start=1 end=3 step=5 |
    `);
    assert.match(message, /\[row : 2\].*'step' must not be larger than the range/);
  });

  it('phone number carries its constraint and hint', () => {
    const { xform } = md(form('phone number'));
    assertXml(xform, `constraint="regex(., '^\\d*$')"`, '<hint>Enter numbers only.</hint>');
  });

  it('old spellings are aliases: "add text prompt", "q int", "image"', () => {
    assertXml(md(form('add text prompt')).xform, '<bind nodeset="/data/q" type="string"/>');
    assertXml(md(form('q int')).xform, '<bind nodeset="/data/q" type="int"/>');
    assertXml(md(form('image')).xform, '<upload ref="/data/q" mediatype="image/*">');
  });

  it('photo warns about max-pixels unless given, and writes it to the bind', () => {
    const warned = md(form('image'));
    assert.ok(warned.warnings.some((w) => w.includes('max-pixels')));
    const { xform, warnings } = md(`
      | survey |
      |        | type  | name | label | parameters      |
      |        | image | q    | Q     | max-pixels=1024 |
    `);
    assert.ok(!warnings.some((w) => w.includes('max-pixels')));
    assertXml(xform, 'orx:max-pixels="1024"');
  });

  it('audio quality becomes odk:quality', () => {
    const { xform } = md(`
      | survey |
      |        | type  | name | label | parameters    |
      |        | audio | q    | Q     | quality=voice-only |
    `);
    assertXml(xform, 'odk:quality="voice-only"');
  });

  it('text rows parameter becomes a control attribute', () => {
    const { xform } = md(`
      | survey |
      |        | type | name | label | parameters |
      |        | text | q    | Q     | rows=5     |
    `);
    assertXml(xform, '<input ref="/data/q" rows="5">');
  });

  it('geopoint accuracy parameters become control attributes', () => {
    const { xform } = md(`
      | survey |
      |        | type     | name | label | parameters                                  |
      |        | geopoint | q    | Q     | capture-accuracy=5 warning-accuracy=20 allow-mock-accuracy=true |
    `);
    assertXml(xform, 'accuracyThreshold="5"', 'unacceptableAccuracyThreshold="20"', 'odk:allow-mock-accuracy="true"');
  });

  it('rejects parameters a type does not accept, listing the accepted keys', () => {
    const { message } = mdError(`
      | survey |
      |        | type | name | label | parameters |
      |        | text | q    | Q     | foo=bar    |
    `);
    assert.match(message, /\[row : 2\].*accepted parameter keys for this question type are 'rows'.*'foo'/);
  });

  it('rejects an unknown type', () => {
    const { message } = mdError(form('textt'));
    assert.match(message, /Unknown question type 'textt'/);
  });

  it('start-geopoint sets a geopoint on first load', () => {
    const { xform } = md(form('start-geopoint'));
    assertXml(xform, '<odk:setgeopoint ref="/data/q" event="odk-instance-first-load"/>', '<bind nodeset="/data/q" type="geopoint"/>');
  });

  it('background-audio records from instance load', () => {
    const { xform } = md(form('background-audio'));
    assertXml(xform, '<odk:recordaudio ref="/data/q" event="odk-instance-load"/>');
  });

  it('osm questions list their tags from the osm sheet', () => {
    const { xform } = md(`
      | survey |
      |        | type         | name     | label    |
      |        | osm building | building | Building |
      | osm |
      |     | list_name | name   | label  |
      |     | building  | height | Height |
    `);
    assertXml(xform, '<upload ref="/data/building" mediatype="osm/*"><label>Building</label><tag key="height"><label>Height</label></tag></upload>');
  });
});
