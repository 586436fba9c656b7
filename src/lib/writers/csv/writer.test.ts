import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { csvChunks, csvLine } from './writer.ts';

async function text(chunks: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

describe('CSV writer', () => {
  test('quotes commas, quotes and line breaks; lines end with \\n', () => {
    assert.equal(csvLine(['a', 'b,c', 'say "hi"', 'x\ny', 'r\rs', '']), 'a,"b,c","say ""hi""","x\ny","r\rs",\n');
    assert.equal(csvLine(['']), '""\n');
  });

  test('win_excel_utf8 writes one BOM at the start of the file, not one per line like onadata', async () => {
    const bytes = await text(csvChunks([['h1', 'h2']], [['é', '1'], ['ü', '2']], { bom: true }));
    assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    assert.equal(bytes.subarray(3).toString('utf8'), 'h1,h2\né,1\nü,2\n');
    assert.equal(bytes.indexOf(Buffer.from([0xef, 0xbb, 0xbf]), 3), -1);
  });

  test('large outputs come in chunks of about 64 KiB', async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => [`row ${i}`, 'x'.repeat(50)]);
    const sizes: number[] = [];
    for await (const c of csvChunks([], rows)) sizes.push(c.byteLength);
    assert.ok(sizes.length > 3);
    assert.ok((sizes[0] ?? 0) >= 64 * 1024 && (sizes[0] ?? 0) < 66 * 1024);
  });
});
