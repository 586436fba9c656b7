import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createPostgresDatabase } from '../../test/helpers.ts';
import { openDatabase } from './db.ts';
import { BinaryRows, CopyBuffers, copyBinaryRows, replaceParameters } from './pg-copy.ts';

test('each $n outside quotes, quoted names and comments is replaced by its expression, and nowhere else', () => {
  const text = `SELECT $1, '$2 it''s', "col$2", E'\\'$2', x$2 /* $2 */ -- $2
    FROM t WHERE a = $2 AND b = ANY($3::text[]) AND d = $10`;
  const expressions = Array.from({ length: 10 }, (_, i) => `current_setting('gather.copy_${i + 1}')::integer`);
  assert.equal(
    replaceParameters(text, expressions),
    `SELECT current_setting('gather.copy_1')::integer, '$2 it''s', "col$2", E'\\'$2', x$2 /* $2 */ -- $2
    FROM t WHERE a = current_setting('gather.copy_2')::integer AND b = ANY(current_setting('gather.copy_3')::integer::text[]) AND d = current_setting('gather.copy_10')::integer`,
  );
  assert.equal(replaceParameters('SELECT $2', ['x']), undefined, 'a parameter with no expression');
});

function binaryCopy(rows: ReadonlyArray<ReadonlyArray<Buffer | null>>): Buffer {
  const parts: Buffer[] = [Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.from([0, 0, 0, 0, 0, 0, 0, 4, 9, 9, 9, 9])];
  for (const row of rows) {
    const count = Buffer.alloc(2);
    count.writeInt16BE(row.length);
    parts.push(count);
    for (const field of row) {
      const length = Buffer.alloc(4);
      length.writeInt32BE(field === null ? -1 : field.length);
      parts.push(length, field ?? Buffer.alloc(0));
    }
  }
  parts.push(Buffer.from([0xff, 0xff]));
  return Buffer.concat(parts);
}

test('binary COPY rows are read field by field, NULLs and header extensions included', () => {
  const int = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeInt32BE(n);
    return b;
  };
  const float = (n: number) => {
    const b = Buffer.alloc(8);
    b.writeDoubleBE(n);
    return b;
  };
  // Read in a bigger buffer, up to its end.
  const copied = Buffer.concat([binaryCopy([[int(7), Buffer.from('dé'), float(1.5)], [int(-1), null, Buffer.alloc(0)]]), Buffer.alloc(32, 0xee)]);
  const rows = new BinaryRows(copied, copied.length - 32, 3);
  assert.equal(rows.next(), true);
  assert.deepEqual([rows.int32(0), rows.text(1), rows.float64(2), rows.isNull(1)], [7, 'dé', 1.5, false]);
  assert.equal(rows.next(), true);
  assert.deepEqual([rows.int32(0), rows.isNull(1), rows.text(2)], [-1, true, '']);
  assert.equal(rows.next(), false);
  assert.throws(() => new BinaryRows(Buffer.from('not a copy'), 10, 1), /not a binary COPY/);
  const short = new BinaryRows(binaryCopy([[int(1)]]), 25, 1);
  assert.throws(() => short.next(), /ends early/);
});

test('a buffer is free again only once every row read into it has been used, and never twice', () => {
  const buffers = new CopyBuffers();
  const page = buffers.take();
  buffers.hold(page, 500);
  // A page read whole, used in pieces (an export's first page): still taken after four of five.
  for (let piece = 0; piece < 4; piece++) buffers.used(page, 100);
  const other = buffers.take();
  assert.notEqual(other, page);
  buffers.used(page, 100);
  assert.equal(buffers.take(), page);
  buffers.give(other);
  buffers.give(other);
  assert.equal(buffers.take(), other);
  assert.notEqual(buffers.take(), other, 'a buffer given twice is handed out once');
  const empty = buffers.take();
  buffers.hold(empty, 0);
  assert.equal(buffers.take(), empty, 'a read of no rows leaves its buffer free');
});

const serverUrl = process.env['DATABASE_URL'];

test('COPY reads the rows the query reads, with awkward parameters', { skip: serverUrl ? false : 'PostgreSQL only' }, async () => {
  const server = await createPostgresDatabase(serverUrl ?? '');
  const database = await openDatabase({ databaseUrl: server.url, pgliteDir: '', poolSize: 2 });
  try {
    const { db } = database;
    await sql`CREATE TABLE copy_probe (id int PRIMARY KEY, label text, n int, at timestamptz)`.execute(db);
    const labels = ["it's", 'back\\slash', '$1 and $2', 'dé 日本', '', null, 'a"b', "x'); DROP TABLE copy_probe; --"];
    for (const [i, label] of labels.entries()) {
      await sql`INSERT INTO copy_probe VALUES (${i + 1}, ${label}, ${i % 2 === 0 ? i : null}, ${new Date(Date.UTC(2026, 10, i + 1))})`.execute(db);
    }
    const query = sql<{ id: number; label: string | null; n: number | null; since: number }>`SELECT id, label, n, date_part('epoch', at) AS since FROM copy_probe
      WHERE (label IS NULL OR label <> ${"nobody's"}) AND (label = ANY(${labels.filter((l) => l !== null)}::text[]) OR label IS NULL)
        AND at >= ${new Date(Date.UTC(2026, 10, 2)).toISOString()}::timestamptz AND id > ${1} /* $9 */ ORDER BY id`;
    const expected = (await query.execute(db)).rows;
    const buffers = new CopyBuffers();
    const copied = await copyBinaryRows(db, query.compile(db), buffers);
    assert.ok(copied);
    const rows = new BinaryRows(copied.bytes, copied.length, 4);
    const read: unknown[] = [];
    while (rows.next()) {
      read.push({ id: rows.int32(0), label: rows.isNull(1) ? null : rows.text(1), n: rows.isNull(2) ? null : rows.int32(2), since: rows.float64(3) });
    }
    assert.equal(expected.length, labels.length - 1);
    assert.deepEqual(read, expected);

    // PostgreSQL's errors reach the caller, and the connection serves the next query.
    buffers.give(copied.bytes);
    await assert.rejects(copyBinaryRows(db, sql`SELECT id / 0 FROM copy_probe`.compile(db), buffers), /division by zero/);
    const again = await copyBinaryRows(db, sql`SELECT count(*)::int FROM copy_probe WHERE label = ${"it's"}`.compile(db), buffers);
    assert.ok(again);
    assert.equal(again.bytes, copied.bytes, 'the buffer given back is used again');
    const count = new BinaryRows(again.bytes, again.length, 1);
    assert.equal(count.next(), true);
    assert.equal(count.int32(0), 1);

    // A NULL parameter, and the table the hostile label names is still there.
    buffers.give(again.bytes);
    const nulls = await copyBinaryRows(db, sql`SELECT count(*)::int FROM copy_probe WHERE label IS NOT DISTINCT FROM ${null} AND id > ${0}`.compile(db), buffers);
    assert.ok(nulls);
    const nullCount = new BinaryRows(nulls.bytes, nulls.length, 1);
    assert.equal(nullCount.next(), true);
    assert.equal(nullCount.int32(0), 1);
  } finally {
    await database.close();
    await server.drop();
  }
});
