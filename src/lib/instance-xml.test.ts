import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { convert } from '../../packages/xlsform/src/index.ts';
import { buildFormModel, type FormModel } from './form-model/model.ts';
import { coerceNumeric, EMPTY_SUBMISSION, MALFORMED_XML, parseInstance, type InstanceMeta, type SubmissionRecord } from './instance-xml.ts';

const fixtures = new URL('../../test/fixtures/submissions/', import.meta.url);
const LIMIT = { maxBytes: 1_000_000 };

function schemaOf(form: string): FormModel {
  const result = convert(form, { fileName: 'form.md' });
  if (!result.ok) assert.fail(result.errors.map((e) => e.message).join('; '));
  return buildFormModel(result.formJson);
}

function parsed(xml: string | Uint8Array, schema: FormModel): { record: SubmissionRecord; meta: InstanceMeta } {
  const result = parseInstance(xml, schema, LIMIT);
  if (!result.ok) assert.fail(`expected a record, got: ${result.error} (${result.detail ?? ''})`);
  return result;
}

function refused(xml: string | Uint8Array, schema: FormModel, maxBytes = LIMIT.maxBytes): { error: string; detail?: string } {
  const result = parseInstance(xml, schema, { maxBytes });
  if (result.ok) assert.fail(`expected a refusal, got ${JSON.stringify(result.record)}`);
  return result;
}

const plain = schemaOf(`
  | survey |
  |        | type | name | label |
  |        | text | a    | A     |
`);

describe('parseInstance: the tutorial_w_repeats reference (onadata-data.md §2)', () => {
  test('gives the documented record, less what storage adds', () => {
    const form = convert(readFileSync(new URL('tutorial_w_repeats.csv', fixtures)), { fileName: 'tutorial_w_repeats.csv' });
    if (!form.ok) assert.fail(form.errors.map((e) => e.message).join('; '));
    const schema = buildFormModel(form.formJson);
    const { record, meta } = parsed(readFileSync(new URL('tutorial_w_repeats.xml', fixtures)), schema);
    const stored = {
      ...record,
      _uuid: meta.uuid,
      _xform_id_string: meta.idString,
      _version: meta.version ?? schema.version,
      _geolocation: meta.geolocation,
      _duration: meta.duration,
      _total_media: meta.mediaFiles.length,
    };
    assert.deepStrictEqual(stored, {
      name: 'Bob', age: 25, has_children: '1',
      children: [
        { 'children/childs_name': 'Tom', 'children/childs_age': 12 },
        { 'children/childs_name': 'Dick', 'children/childs_age': 5 },
      ],
      gps: '-1.2625621 36.7921711 0.0 20.0',
      'meta/instanceID': 'uuid:b31c6ac2-b8ca-4180-914f-c844fa10ed3b',
      _uuid: 'b31c6ac2-b8ca-4180-914f-c844fa10ed3b',
      _xform_id_string: 'tutorial_w_repeats', _version: '2014111',
      _geolocation: [-1.2625621, 36.7921711], _duration: '',
      _total_media: 0,
    });
    assert.equal(meta.rootName, 'tutorial_w_repeats');
    assert.equal(meta.encrypted, false);
  });
});

describe('parseInstance: structure', () => {
  const nested = schemaOf(`
    | survey |
    |        | type          | name              | label |
    |        | begin group   | kids              | K     |
    |        | integer       | has_kids          | H     |
    |        | begin repeat  | kids_details      | D     |
    |        | text          | kids_name         | N     |
    |        | integer       | kids_age          | A     |
    |        | begin repeat  | kids_immunization | I     |
    |        | text          | immunization_info | II    |
    |        | end repeat    |                   |       |
    |        | end repeat    |                   |       |
    |        | begin group   | nested_group      | G     |
    |        | text          | nested_name       | NN    |
    |        | end group     |                   |       |
    |        | end group     |                   |       |
    |        | text          | address           | Ad    |
  `);

  test('nested repeats nest under their full paths; indentation is ignored', () => {
    const xml = `<?xml version='1.0' ?>
      <nested_repeats id="nested_repeats">
        <kids>
          <has_kids>1</has_kids>
          <kids_details>
            <kids_name>Hansel</kids_name>
            <kids_age>2</kids_age>
            <kids_immunization><immunization_info>Polio</immunization_info></kids_immunization>
            <kids_immunization><immunization_info>Measles</immunization_info></kids_immunization>
          </kids_details>
          <kids_details>
            <kids_name>Gretel</kids_name>
            <kids_age>1</kids_age>
            <kids_immunization>
              <immunization_info>TB</immunization_info>
            </kids_immunization>
          </kids_details>
          <nested_group>
            <nested_name>The Witch</nested_name>
          </nested_group>
        </kids>
        <address>1234</address>
      </nested_repeats>`;
    assert.deepStrictEqual(parsed(xml, nested).record, {
      'kids/has_kids': 1,
      'kids/kids_details': [
        {
          'kids/kids_details/kids_name': 'Hansel',
          'kids/kids_details/kids_age': 2,
          'kids/kids_details/kids_immunization': [
            { 'kids/kids_details/kids_immunization/immunization_info': 'Polio' },
            { 'kids/kids_details/kids_immunization/immunization_info': 'Measles' },
          ],
        },
        {
          'kids/kids_details/kids_name': 'Gretel',
          'kids/kids_details/kids_age': 1,
          'kids/kids_details/kids_immunization': [{ 'kids/kids_details/kids_immunization/immunization_info': 'TB' }],
        },
      ],
      'kids/nested_group/nested_name': 'The Witch',
      address: '1234',
    });
  });

  test('a single repeat entry is still a list', () => {
    const xml = '<d><kids><kids_details><kids_name>Solo</kids_name></kids_details></kids></d>';
    assert.deepStrictEqual(parsed(xml, nested).record, { 'kids/kids_details': [{ 'kids/kids_details/kids_name': 'Solo' }] });
  });

  test('groups inside repeats flatten into the entry with full paths', () => {
    const schema = schemaOf(`
      | survey |
      |        | type         | name    | label |
      |        | begin repeat | hh      | H     |
      |        | begin group  | person  | P     |
      |        | text         | name    | N     |
      |        | begin group  | contact | C     |
      |        | text         | phone   | T     |
      |        | end group    |         |       |
      |        | end group    |         |       |
      |        | decimal      | weight  | W     |
      |        | end repeat   |         |       |
    `);
    const xml = '<data><hh><person><name>Ann</name><contact><phone>0700</phone></contact></person><weight>61.5</weight></hh>'
      + '<hh><person><name>Ben</name><contact><phone/></contact></person></hh></data>';
    assert.deepStrictEqual(parsed(xml, schema).record, {
      hh: [
        { 'hh/person/name': 'Ann', 'hh/person/contact/phone': '0700', 'hh/weight': 61.5 },
        { 'hh/person/name': 'Ben' },
      ],
    });
  });

  test('empty elements, blank text and empty groups or repeat entries give no key', () => {
    const xml = `<data><a/><b></b><c>   \n  </c><kids><has_kids/><nested_group><nested_name/></nested_group>
      <kids_details><kids_name/></kids_details></kids><address>x</address></data>`;
    assert.deepStrictEqual(parsed(xml, nested).record, { address: 'x' });
  });

  test('text keeps its own spaces; comments between elements are ignored', () => {
    const xml = '<data><!-- saved by Enketo --><a>  spaced out \n</a><?pi x?><b>x &amp; y &lt; z</b></data>';
    assert.deepStrictEqual(parsed(xml, plain).record, { a: '  spaced out \n', b: 'x & y < z' });
  });

  test('a comment inside a value is ignored', () => {
    assert.deepStrictEqual(parsed('<data><a><!-- typed by hand -->x</a></data>', plain).record, { a: 'x' });
  });

  test('a CDATA section is the value', () => {
    assert.deepStrictEqual(parsed('<data><a><![CDATA[<b>bold</b>]]></a></data>', plain).record, { a: '<b>bold</b>' });
  });

  test('a non-repeat element sent twice collapses into a list, as onadata does', () => {
    const xml = '<data><a>1</a><g><x>first</x><y>1</y></g><a>2</a><g><x>second</x></g><a>3</a></data>';
    assert.deepStrictEqual(parsed(xml, plain).record, {
      a: [{ a: '1' }, { a: '2' }, { a: '3' }],
      g: [{ 'g/x': 'first', 'g/y': '1' }, { 'g/x': 'second' }],
    });
  });

  test('an empty second occurrence does not make a list', () => {
    assert.deepStrictEqual(parsed('<data><a>1</a><a/><g><x/></g></data>', plain).record, { a: '1' });
  });

  test('an element named __proto__ is an ordinary key', () => {
    const { record } = parsed('<data><__proto__>x</__proto__><a>1</a></data>', plain);
    assert.equal(Object.getPrototypeOf(record), Object.prototype);
    assert.deepStrictEqual(Object.keys(record), ['__proto__', 'a']);
    assert.equal(Object.getOwnPropertyDescriptor(record, '__proto__')?.value, 'x');
  });
});

describe('parseInstance: values', () => {
  const numbers = schemaOf(`
    | survey |
    |        | type                   | name  | label | calculation |
    |        | integer                | n     | N     |             |
    |        | decimal                | d     | D     |             |
    |        | text                   | t     | T     |             |
    |        | select_multiple colors | many  | M     |             |
    |        | calculate              | c     |       | 1 + 2       |
    | choices |
    |         | list_name | name  | label |
    |         | colors    | red   | Red   |
    |         | colors    | green | Green |
  `);

  test('integer and decimal answers become numbers; other answers stay text exactly', () => {
    const xml = '<data><n>007</n><d>2.50</d><t>007</t><many>red green</many><c>3</c></data>';
    assert.deepStrictEqual(parsed(xml, numbers).record, { n: 7, d: 2.5, t: '007', many: 'red green', c: '3' });
  });

  test('numeric coercion follows Python int() then float()', () => {
    const cases: Array<[string, string | number]> = [
      ['25', 25], [' 7 ', 7], ['+3', 3], ['-12', -12], ['1_000', 1000], ['0', 0],
      ['1.5', 1.5], ['-0.25', -0.25], ['1e3', 1000], ['2.5E-1', 0.25], ['.5', 0.5], ['5.', 5], ['1_0.5', 10.5],
      ['NaN', 0], ['nan', 0], ['-nan', 0],
      ['inf', 'inf'], ['-Infinity', '-Infinity'], ['1e400', '1e400'],
      ['12345678901234567890', '12345678901234567890'],
      ['abc', 'abc'], ['0x10', '0x10'], ['1,5', '1,5'], ['1__0', '1__0'], ['_1', '_1'], ['1.2.3', '1.2.3'], ['.', '.'], ['e5', 'e5'],
    ];
    for (const [text, expected] of cases) assert.deepStrictEqual(coerceNumeric(text), expected, text);
  });

  test('a decimal answer that is not a number is kept as sent', () => {
    assert.deepStrictEqual(parsed('<data><n>many</n><d>NaN</d></data>', numbers).record, { n: 'many', d: 0 });
  });
});

describe('parseInstance: metadata', () => {
  const located = schemaOf(`
    | survey |
    |        | type         | name   | label |
    |        | start        | start  |       |
    |        | end          | end    |       |
    |        | geopoint     | home   | H     |
    |        | begin repeat | plot   | P     |
    |        | geopoint     | corner | C     |
    |        | image        | photo  | Ph    |
    |        | end repeat   |        |       |
    |        | audio        | voice  | V     |
  `);

  test('the first geopoint in form order gives _geolocation; a repeat is searched when the top one is empty', () => {
    const xml = '<data><home/><plot><corner>1.5 2.5 0 5</corner></plot><plot><corner>3 4</corner></plot></data>';
    assert.deepStrictEqual(parsed(xml, located).meta.geolocation, [1.5, 2.5]);
    const top = '<data><home>-1.25 36.5 1700 4</home><plot><corner>1 2</corner></plot></data>';
    assert.deepStrictEqual(parsed(top, located).meta.geolocation, [-1.25, 36.5]);
  });

  test('no geopoint, or an unreadable one anywhere, gives [null, null]', () => {
    assert.deepStrictEqual(parsed('<data><voice>a.m4a</voice></data>', located).meta.geolocation, [null, null]);
    const bad = '<data><home>1 2</home><plot><corner>north</corner></plot></data>';
    assert.deepStrictEqual(parsed(bad, located).meta.geolocation, [null, null]);
    assert.deepStrictEqual(parsed('<data><home>7</home></data>', located).meta.geolocation, [null, null]);
  });

  test('_duration is the seconds between start and end, time zones ignored as onadata does', () => {
    const xml = '<data><start>2024-03-01T10:00:00.000+03:00</start><end>2024-03-01T10:05:30.250+00:00</end></data>';
    assert.equal(parsed(xml, located).meta.duration, 330);
    const overnight = '<data><start>2024-02-28T23:59:00</start><end>2024-02-29T00:01:00</end></data>';
    assert.equal(parsed(overnight, located).meta.duration, 120);
  });

  test('_duration is "" when start or end is missing or unreadable', () => {
    assert.equal(parsed('<data><start>2024-03-01T10:00:00</start></data>', located).meta.duration, '');
    assert.equal(parsed('<data><start>2024-02-30T10:00:00</start><end>2024-03-01T10:00:00</end></data>', located).meta.duration, '');
    assert.equal(parsed('<data><start>yesterday</start><end>2024-03-01T10:00:00</end></data>', located).meta.duration, '');
  });

  test('a form without start/end questions reads elements named start and end', () => {
    const xml = '<data><start>2024-03-01T10:00:00</start><end>2024-03-01T10:00:09</end></data>';
    assert.equal(parsed(xml, plain).meta.duration, 9);
  });

  test('media names come from media questions, repeats included, each once', () => {
    const xml = '<data><plot><photo>a.jpg</photo></plot><plot><photo>b.jpg</photo></plot><plot><photo>a.jpg</photo></plot><voice>v.m4a</voice><other>x.jpg</other></data>';
    assert.deepStrictEqual(parsed(xml, located).meta.mediaFiles, ['a.jpg', 'b.jpg', 'v.m4a']);
  });

  test('root attributes, formhub/uuid, instanceID and deprecatedID', () => {
    const xml = `<data id="household" version="2026111901" submissionDate="2013-02-18T15:54:01Z">
      <formhub><uuid>f0c9a4b2</uuid></formhub><a>x</a>
      <meta><instanceID>uuid:new-1</instanceID><deprecatedID>uuid:old-1</deprecatedID></meta></data>`;
    const { meta, record } = parsed(xml, plain);
    assert.deepStrictEqual(meta, {
      rootName: 'data', idString: 'household', version: '2026111901', formhubUuid: 'f0c9a4b2',
      instanceId: 'uuid:new-1', uuid: 'new-1', deprecatedId: 'uuid:old-1', deprecatedUuid: 'old-1',
      submissionDate: '2013-02-18T15:54:01Z', mediaFiles: [], geolocation: [null, null], duration: '', encrypted: false, repeatCounts: '{}',
    });
    assert.deepStrictEqual(record, {
      'formhub/uuid': 'f0c9a4b2', a: 'x', 'meta/instanceID': 'uuid:new-1', 'meta/deprecatedID': 'uuid:old-1',
    });
  });

  test('namespaced meta (orx:meta/orx:instanceID) is found by local name and stored as written', () => {
    const xml = `<h:data xmlns:h="http://example.org/h" xmlns:orx="http://openrosa.org/xforms" id="f">
      <a>x</a><orx:meta><orx:instanceID>uuid:abc</orx:instanceID></orx:meta></h:data>`;
    const { meta, record } = parsed(xml, plain);
    assert.equal(meta.rootName, 'h:data');
    assert.equal(meta.instanceId, 'uuid:abc');
    assert.equal(meta.uuid, 'abc');
    assert.deepStrictEqual(record, { a: 'x', 'orx:meta/orx:instanceID': 'uuid:abc' });
  });

  test('without meta/instanceID the root instanceID attribute is used; a value without uuid: gives no uuid', () => {
    assert.equal(parsed('<data instanceID="uuid:root-1"><a>x</a></data>', plain).meta.uuid, 'root-1');
    const bare = parsed('<data><a>x</a><meta><instanceID>abc</instanceID></meta></data>', plain).meta;
    assert.equal(bare.instanceId, 'abc');
    assert.equal(bare.uuid, null);
  });

  test('an encrypted submission: its media elements are a list and its files are the expected media', () => {
    const xml = `<data id="enc" encrypted="yes" xmlns="http://www.opendatakit.org/xforms/encrypted">
      <base64EncryptedKey>HIfp==</base64EncryptedKey>
      <orx:meta xmlns:orx="http://openrosa.org/xforms"><orx:instanceID>uuid:c152</orx:instanceID></orx:meta>
      <media><file>1.jpg.enc</file></media><media><file>2.jpg.enc</file></media>
      <encryptedXmlFile>submission.xml.enc</encryptedXmlFile>
      <base64EncryptedElementSignature>KhSn==</base64EncryptedElementSignature></data>`;
    const { meta, record } = parsed(xml, plain);
    assert.equal(meta.encrypted, true);
    assert.equal(meta.uuid, 'c152');
    assert.deepStrictEqual(meta.mediaFiles, ['submission.xml.enc', '1.jpg.enc', '2.jpg.enc']);
    assert.deepStrictEqual(record['media'], [{ 'media/file': '1.jpg.enc' }, { 'media/file': '2.jpg.enc' }]);
  });

  test('bytes are read as UTF-8, a byte order mark and leading whitespace allowed', () => {
    const bytes = new TextEncoder().encode('\uFEFF  \n<?xml version="1.0" encoding="UTF-8"?><data><a>Zoë 東京</a></data>');
    assert.deepStrictEqual(parsed(bytes, plain).record, { a: 'Zoë 東京' });
  });
});

describe('parseInstance: refusals', () => {
  test('an XXE attempt is refused, not expanded', () => {
    const xml = '<?xml version="1.0"?><!DOCTYPE data [<!ENTITY x SYSTEM "file:///etc/passwd">]><data><a>&x;</a></data>';
    const result = refused(xml, plain);
    assert.equal(result.error, MALFORMED_XML);
    assert.doesNotMatch(JSON.stringify(result), /root:/);
  });

  test('billion laughs is refused', () => {
    const entities = ['<!ENTITY lol "lol">'];
    for (let i = 1; i < 10; i++) entities.push(`<!ENTITY lol${i} "${`&lol${i === 1 ? '' : i - 1};`.repeat(10)}">`);
    const xml = `<?xml version="1.0"?><!DOCTYPE lolz [${entities.join('')}]><data><a>&lol9;</a></data>`;
    assert.equal(refused(xml, plain).error, MALFORMED_XML);
  });

  test('any DOCTYPE is refused, even an innocent one', () => {
    assert.equal(refused('<!DOCTYPE data><data><a>x</a></data>', plain).error, MALFORMED_XML);
  });

  test('an undeclared entity is malformed', () => {
    assert.equal(refused('<data><a>&nbsp;</a></data>', plain).error, MALFORMED_XML);
  });

  test('a submission over maxBytes is refused, counting UTF-8 bytes', () => {
    const xml = '<data><a>éé</a></data>';
    assert.equal(xml.length, 22);
    assert.equal(refused(xml, plain, 23).error, MALFORMED_XML);
    assert.equal(refused(new TextEncoder().encode(xml), plain, 23).error, MALFORMED_XML);
    assert.equal(parseInstance(xml, plain, { maxBytes: 24 }).ok, true);
  });

  test('malformed XML is refused with the parser detail kept for logs', () => {
    for (const xml of ['not xml at all', '<data><a>x</data>', '<data><a>x</a>', '<data><a b="1" b="2"/></data>', '<data/><data/>', '']) {
      const result = refused(xml, plain);
      assert.equal(result.error, MALFORMED_XML, xml);
      assert.equal(typeof result.detail, 'string', xml);
    }
  });

  test('absurdly deep nesting is refused', () => {
    const deep = `<data>${'<g>'.repeat(300)}x${'</g>'.repeat(300)}</data>`;
    assert.deepStrictEqual(parseInstance(deep, plain, LIMIT), { ok: false, error: MALFORMED_XML, detail: 'elements nested deeper than 256' });
  });

  test('bytes that are not UTF-8 are malformed', () => {
    assert.equal(refused(new Uint8Array([0x3c, 0x64, 0x3e, 0xff, 0xfe, 0x3c, 0x2f, 0x64, 0x3e]), plain).error, MALFORMED_XML);
  });

  test('a root with no data is an empty submission', () => {
    for (const xml of ['<data id="x"/>', '<data id="x"></data>', '<data><a/><g><b/></g><meta><instanceID/></meta></data>', '<data>just text</data>']) {
      const result = refused(xml, plain);
      assert.equal(result.error, EMPTY_SUBMISSION, xml);
    }
  });
});
