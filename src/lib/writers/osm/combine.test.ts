import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { combineOsmFiles, parseOsmFile } from './combine.ts';

const fixture = (name: string): string => readFileSync(new URL(`../../../../test/fixtures/osm/${name}`, import.meta.url), 'utf8');

async function text(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts).toString('utf8');
}

test('two OpenMapKit files combine into onadata’s combined.osm, byte for byte', async () => {
  const combined = await text(combineOsmFiles([fixture('OSMWay234134797.osm'), fixture('OSMWay34298972.osm')]));
  assert.equal(combined, fixture('combined.osm'));
});

test('no usable file gives an empty body', async () => {
  assert.equal(await text(combineOsmFiles([])), '');
  assert.equal(await text(combineOsmFiles(['not xml', '<gpx/>'])), '');
});

test('malformed files, other roots and DOCTYPEs are left out whole', async () => {
  const good = '<osm version="0.6"><node id="1" lat="1" lon="2"/></osm>';
  const entity = '<?xml version="1.0"?><!DOCTYPE osm [<!ENTITY x SYSTEM "file:///etc/passwd">]><osm><node id="&x;"/></osm>';
  const truncated = '<osm version="0.6"><node id="2" lat="1" lon="2"/><way id="3">';
  const combined = await text(combineOsmFiles([entity, truncated, '<gpx><node id="4"/></gpx>', good]));
  assert.equal(combined, "<?xml version='1.0' encoding='utf-8'?>\n<osm version=\"0.6\"><node id=\"1\" lat=\"1\" lon=\"2\"/></osm>\n");
});

test('text, CDATA and attribute values are escaped again on the way out', () => {
  const parts = parseOsmFile('<osm a="x&amp;y &lt;z&gt; &quot;q&quot;"><tag k="name" v="A &amp; B"/><note><![CDATA[<b>]]> &amp; more</note></osm>');
  assert.deepEqual(parts, {
    rootTag: '<osm a="x&amp;y &lt;z&gt; &quot;q&quot;">',
    content: '<tag k="name" v="A &amp; B"/><note>&lt;b&gt; &amp; more</note>',
  });
});

test('large inputs come out in several chunks', async () => {
  const nodes = Array.from({ length: 3000 }, (_, i) => `<node id="${i}" lat="1.5" lon="2.5"/>`).join('');
  let count = 0;
  let total = '';
  for await (const chunk of combineOsmFiles([`<osm>${nodes}</osm>`, `<osm>${nodes}</osm>`])) {
    count += 1;
    total += Buffer.from(chunk).toString('utf8');
  }
  assert.ok(count >= 2);
  assert.equal((total.match(/<node /g) ?? []).length, 6000);
});
