import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KML_TAIL, kmlChunks, kmlHead } from './writer.ts';

async function text(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts).toString('utf8');
}

test('one Placemark per point: name, escaped HTML description, lng,lat coordinates', async () => {
  const kml = await text(
    kmlChunks('Household & co', [
      { id: 7, latitude: -1.2625621, longitude: 36.7921711, rows: [['Name', 'Bob <b>'], ['Age', '25']], imageUrl: 'http://x/a.jpg?a=1&b=2' },
    ]),
  );
  assert.equal(
    kml,
    kmlHead('Household & co') +
      '<Placemark><name>Survey Instance: 7</name><description>' +
      '&lt;table border=&quot;1&quot;&gt;&lt;tr&gt;&lt;td colspan=&quot;2&quot;&gt;&lt;img width=&quot;210&quot; src=&quot;http://x/a.jpg?a=1&amp;amp;b=2&quot; alt=&quot;&quot;/&gt;&lt;/td&gt;&lt;/tr&gt;' +
      '&lt;tr&gt;&lt;td&gt;Name&lt;/td&gt;&lt;td&gt;Bob &amp;lt;b&amp;gt;&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;Age&lt;/td&gt;&lt;td&gt;25&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;' +
      '</description><styleUrl>#record</styleUrl><Point><coordinates>36.7921711,-1.2625621</coordinates></Point></Placemark>\n' +
      KML_TAIL,
  );
  assert.match(kml, /<name>Household &amp; co<\/name>/);
});

test('no records: a valid empty document', async () => {
  assert.equal(await text(kmlChunks('f', [])), kmlHead('f') + KML_TAIL);
});

test('characters XML forbids are dropped', async () => {
  const kml = await text(kmlChunks('f', [{ id: 1, latitude: 0, longitude: 0, rows: [['a\u0001', 'b\u0000c']] }]));
  assert.match(kml, /&lt;td&gt;a&lt;\/td&gt;&lt;td&gt;bc&lt;/);
});
