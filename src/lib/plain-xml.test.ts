import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SaxesParser } from 'saxes';
import { readPlainXml } from './plain-xml.ts';

type Event = ['open', string, Record<string, string>] | ['text', string] | ['close'];

/** What saxes reports, as the submission parser uses it: text outside the root is left out. */
function saxesEvents(text: string): Event[] | 'error' {
  const events: Event[] = [];
  let depth = 0;
  const parser = new SaxesParser<{ xmlns: false; position: boolean }>({ xmlns: false, position: true });
  parser.on('doctype', () => {
    throw new Error('doctype');
  });
  parser.on('error', (error) => {
    throw error;
  });
  parser.on('opentag', (tag) => {
    depth += 1;
    events.push(['open', tag.name, { ...tag.attributes }]);
  });
  parser.on('closetag', () => {
    depth -= 1;
    events.push(['close']);
  });
  parser.on('text', (t) => {
    if (depth > 0) events.push(['text', t]);
  });
  parser.on('cdata', (c) => events.push(['text', `CDATA:${c}`]));
  try {
    parser.write(text).close();
  } catch {
    return 'error';
  }
  return events;
}

function plainEvents(text: string): Event[] | 'not plain' {
  const events: Event[] = [];
  const read = readPlainXml(text, {
    open: (name, attributes) => events.push(['open', name, { ...attributes }]),
    text: (t) => events.push(['text', t]),
    close: () => events.push(['close']),
  });
  return read ? events : 'not plain';
}

/** Whatever the plain reader accepts, saxes accepts with the same events. */
function agrees(text: string): boolean {
  const plain = plainEvents(text);
  if (plain === 'not plain') return false;
  assert.deepEqual(plain, saxesEvents(text), JSON.stringify(text));
  return true;
}

const bench = readFileSync(new URL('../../test/fixtures/submissions/tutorial_w_repeats.xml', import.meta.url), 'utf8').trimStart();

test('the plain reader reports what saxes reports for plain documents', () => {
  const plain = [
    bench,
    '<?xml version="1.0"?>\n<a x="1">\n <b>t&amp;u&#65;&#x1F600;&lt;&gt;&quot;&apos;</b>\n</a>\n',
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><a/>",
    '<?xml version = "1.0"   encoding="utf-8"?>\n\n<data id="f" version="2" xmlns:jr="http://openrosa.org/javarosa"><m:x/></data>  \n',
    '<a>x<b/>y</a>',
    '<a></a >',
    '<a >t</a>',
    '<a\n x="1"\n y = \'2\' >t > u</a>',
    '<a-b.c:d/>',
    '<a:b:c><:d/><e:/></a:b:c>',
    '<a>&#0065;&#x000041;&#x10FFFF;&#127;</a>',
    '<a x=">"/>',
    '<a>é ü 日本 😀</a>',
    '<a><b>1</b><b>2</b><c/></a>',
  ];
  for (const text of plain) assert.ok(agrees(text), `read as plain: ${JSON.stringify(text)}`);
});

test('the plain reader leaves to saxes whatever is not plain, errors included', () => {
  const others = [
    '<a x="1"y="2"/>',
    '<a x="1" x="2"/>',
    '<a>]]></a>',
    '<a>x\r\ny</a>',
    '<a x="a\tb"/>',
    '<a x="a&amp;b"/>',
    '<?xml version="1.1"?><a/>',
    '<?xml version="1.0" encoding="ISO-8859-1"?><a/>',
    '<a><b></a>',
    '<a/><b/>',
    '<a/>x',
    '<a>&foo;</a>',
    '<a>&#0;</a>',
    '<a>&#9;</a>',
    '<a>&#xD800;</a>',
    '<a>&#xFFFE;</a>',
    '<a>&amp</a>',
    '<1a/>',
    '<a x="<"/>',
    '<a>\u0001</a>',
    '<a>\uFFFF</a>',
    '<a>\uD800</a>',
    '<a>t</a',
    '<a>t',
    '<é/>',
    '<a><!-- c --></a>',
    '<a><![CDATA[x]]></a>',
    '<a><?pi x?></a>',
    '<!DOCTYPE a><a/>',
    '<a/><!-- after -->',
    '',
    'text',
  ];
  for (const text of others) assert.equal(plainEvents(text), 'not plain', JSON.stringify(text));
});

test('on changed documents the plain reader never accepts what saxes reads otherwise', () => {
  // Each variant of a few documents with one character inserted, replaced or removed.
  const seeds = [bench, '<?xml version="1.0" encoding="UTF-8"?>\n<d id="x" v=\'1\'><g><q>a &amp; b &#x41;</q><r/></g></d>\n'];
  const inserts = ['<', '>', '&', ';', '"', "'", '/', '!', '?', '=', ' ', '\t', '\r', '\n', ']', 'x', ':', 'é', '#', '-', '.', '1', '\u0000'];
  let accepted = 0;
  let tried = 0;
  for (const seed of seeds) {
    for (let at = 0; at < seed.length; at += seed === bench ? 7 : 1) {
      const variants = [seed.slice(0, at) + seed.slice(at + 1)];
      for (const c of inserts) variants.push(seed.slice(0, at) + c + seed.slice(at), seed.slice(0, at) + c + seed.slice(at + 1));
      for (const text of variants) {
        tried += 1;
        if (agrees(text)) accepted += 1;
      }
    }
  }
  // Most single changes inside text stay plain; the rest went to saxes.
  assert.ok(accepted > 0 && accepted < tried, `${accepted} of ${tried}`);
});
