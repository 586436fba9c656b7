// Blobs keep every byte, on both backends (on PGlite through the fast hex parser in db.ts), stored
// and read a chunk at a time.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { startTestDatabase, type TestDatabase } from '../../../test/helpers.ts';
import { blobCrc32, CHUNK_BYTES, findBlob, getBlob, putBlob, readBlobChunks } from './repository.ts';

let database: TestDatabase;

before(async () => {
  database = await startTestDatabase();
});
after(async () => {
  await database.close();
});

function pattern(length: number, seed: number): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => (i * 7919 + (i >> 8) + seed) % 256);
}

test('a blob comes back byte for byte as a Uint8Array, whatever its bytes and size', async () => {
  const cases = [new Uint8Array(0), Uint8Array.from({ length: 256 }, (_, i) => i), pattern(3_000_000, 0), pattern(CHUNK_BYTES, 1), pattern(CHUNK_BYTES + 1, 2)];
  for (const bytes of cases) {
    const sha = await putBlob(database.deps.db, bytes, 'application/octet-stream');
    const found = await getBlob(database.deps.db, sha);
    assert.ok(found, `blob of ${bytes.length} bytes`);
    assert.ok(found.data instanceof Uint8Array);
    assert.equal(found.data.length, bytes.length);
    assert.ok(Buffer.from(found.data).equals(Buffer.from(bytes)), `blob of ${bytes.length} bytes`);
    assert.equal(found.content_type, 'application/octet-stream');
    const info = await findBlob(database.deps.db, sha);
    assert.equal(info?.crc32, crc32(bytes), `CRC-32 of ${bytes.length} bytes`);
  }
  assert.equal(await getBlob(database.deps.db, 'f'.repeat(64)), undefined);
});

test('a file on disk is stored in chunks of at most CHUNK_BYTES, once however often it is put, and read back whole', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gather-blob-'));
  try {
    const bytes = pattern(CHUNK_BYTES * 2 + 12_345, 3);
    const path = join(dir, 'photo.jpg');
    await writeFile(path, bytes);
    const sha = await putBlob(database.deps.db, { path }, 'image/jpeg');
    assert.equal(await putBlob(database.deps.db, bytes, 'image/jpeg'), sha, 'the same bytes from memory address the same blob');
    const info = await findBlob(database.deps.db, sha);
    assert.ok(info);
    assert.equal(info.size, bytes.length);
    const chunks: Uint8Array[] = [];
    for await (const chunk of readBlobChunks(database.deps.db, info)) chunks.push(chunk);
    assert.ok(chunks.every((c) => c.length > 0 && c.length <= CHUNK_BYTES), 'read in pieces no larger than a stored chunk');
    assert.ok(Buffer.concat(chunks).equals(Buffer.from(bytes)));
    const stored = await database.deps.db.selectFrom('blob_chunks').select((eb) => eb.fn.countAll<number>().as('n')).where('sha256', '=', sha).executeTakeFirstOrThrow();
    assert.equal(Number(stored.n), 3);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a blob stored before CRCs were kept gets its CRC-32 from its chunks, and keeps it', async () => {
  const bytes = pattern(CHUNK_BYTES + 99, 4);
  const sha = await putBlob(database.deps.db, bytes, 'video/mp4');
  await database.deps.db.updateTable('blobs').set({ crc32: null }).where('sha256', '=', sha).execute();
  const info = await findBlob(database.deps.db, sha);
  assert.ok(info);
  assert.equal(await blobCrc32(database.deps.db, info), crc32(bytes));
  assert.equal((await findBlob(database.deps.db, sha))?.crc32, crc32(bytes));
});

test('a missing chunk is an error, never a short file', async () => {
  const bytes = pattern(CHUNK_BYTES + 5, 5);
  const sha = await putBlob(database.deps.db, bytes, 'image/png');
  await database.deps.db.deleteFrom('blob_chunks').where('sha256', '=', sha).where('seq', '=', 1).execute();
  await assert.rejects(getBlob(database.deps.db, sha), /chunk 1 is missing/);
});
