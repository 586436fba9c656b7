// Migration 0024 moves every stored file into chunks of 256 KiB, byte for byte, on a database
// written by an earlier build (files were one bytea value each).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';

const MIB = 256 * 1024; // the chunk size

test('migration 0024 splits each stored file into 256 KiB chunks that join to the same bytes', async () => {
  const db = new PGlite();
  try {
    await db.exec(`CREATE TABLE blobs (sha256 text PRIMARY KEY, content_type text NOT NULL DEFAULT 'application/octet-stream',
      size bigint NOT NULL, data bytea NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
    const files = [0, 1, MIB - 1, MIB, MIB + 1, 2 * MIB + 777].map((size) => Uint8Array.from({ length: size }, (_, i) => (i * 131 + size) % 256));
    for (const bytes of files) {
      const sha = createHash('sha256').update(bytes).digest('hex');
      await db.query('INSERT INTO blobs (sha256, size, data) VALUES ($1, $2, $3)', [sha, bytes.length, bytes]);
    }
    await db.exec(await readFile(new URL('../../migrations/0024_blob_chunks.sql', import.meta.url), 'utf8'));
    for (const bytes of files) {
      const sha = createHash('sha256').update(bytes).digest('hex');
      const { rows } = await db.query<{ seq: number; data: Uint8Array }>('SELECT seq, data FROM blob_chunks WHERE sha256 = $1 ORDER BY seq', [sha]);
      assert.deepEqual(rows.map((r) => r.seq), rows.map((_, i) => i), `${bytes.length} bytes: chunks numbered from 0`);
      assert.equal(rows.length, Math.ceil(bytes.length / MIB), `${bytes.length} bytes: chunk count`);
      assert.ok(rows.every((r) => r.data.length <= MIB));
      assert.ok(Buffer.concat(rows.map((r) => r.data)).equals(Buffer.from(bytes)), `${bytes.length} bytes come back whole`);
    }
    const { rows: columns } = await db.query<{ column_name: string }>(`SELECT column_name FROM information_schema.columns WHERE table_name = 'blobs' ORDER BY column_name`);
    assert.deepEqual(columns.map((c) => c.column_name), ['content_type', 'crc32', 'created_at', 'sha256', 'size']);
  } finally {
    await db.close();
  }
});
