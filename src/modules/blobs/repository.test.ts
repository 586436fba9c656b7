// Blobs keep every byte, on both backends (on PGlite through the fast hex parser in db.ts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestDatabase, type TestDatabase } from '../../../test/helpers.ts';
import { getBlob, putBlob } from './repository.ts';

let database: TestDatabase;

before(async () => {
  database = await startTestDatabase();
});
after(async () => {
  await database.close();
});

test('a blob comes back byte for byte as a Uint8Array, whatever its bytes and size', async () => {
  const cases = [
    new Uint8Array(0),
    Uint8Array.from({ length: 256 }, (_, i) => i),
    Uint8Array.from({ length: 3_000_000 }, (_, i) => (i * 7919 + (i >> 8)) % 256),
  ];
  for (const bytes of cases) {
    const sha = await putBlob(database.deps.db, bytes, 'application/octet-stream');
    const found = await getBlob(database.deps.db, sha);
    assert.ok(found, `blob of ${bytes.length} bytes`);
    assert.ok(found.data instanceof Uint8Array);
    assert.equal(found.data.length, bytes.length);
    assert.ok(Buffer.from(found.data).equals(Buffer.from(bytes)), `blob of ${bytes.length} bytes`);
    assert.equal(found.content_type, 'application/octet-stream');
  }
  assert.equal(await getBlob(database.deps.db, 'f'.repeat(64)), undefined);
});
