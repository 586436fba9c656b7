import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CsvRowCounter, readCsvRows } from './csv.ts';

// Quoted fields with line ends, delimiters and doubled quotes; blank lines of spaces and
// delimiters; CRLF; a last line without a line end; a quoted field left open at the end.
const SAMPLES = [
  'a,b\n1,2\n3,4\n',
  'a,b\r\n1,2\r\n\r\n3,4',
  'a,b\n"x\ny",2\n"say ""hi""",3\n',
  'a,b\n , \n1,"a,b"\n\n\n2,3\n   \n',
  'name,note\n"multi\r\nline\r\n\r\nfield",1\n"x",""\n',
  'a\n"never closed\n1\n2\n',
  '',
  'only a header',
];

async function parsedRows(text: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'csv-count-'));
  try {
    const path = join(dir, 'f.csv');
    writeFileSync(path, text);
    let rows = 0;
    for await (const row of readCsvRows(path)) {
      void row;
      rows++;
    }
    return Math.max(rows - 1, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the row counter agrees with the parser however the file is cut into pieces', async () => {
  for (const text of SAMPLES) {
    const bytes = Buffer.from(text);
    const expected = await parsedRows(text);
    for (const size of [1, 2, 3, 5, 8, bytes.length || 1]) {
      const counter = new CsvRowCounter();
      for (let at = 0; at < bytes.length; at += size) counter.add(bytes.subarray(at, at + size));
      assert.equal(counter.rows, expected, `${JSON.stringify(text)} in pieces of ${size}`);
    }
  }
});
