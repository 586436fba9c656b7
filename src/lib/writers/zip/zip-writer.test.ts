import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unzip } from '../../../../test/zip.ts';
import { memorySpool, type Spool } from '../spool.ts';
import { zipOnePassChunks, type FileBatch, type RowEncoder } from './one-pass.ts';
import { ZipWriter } from './zip-writer.ts';
import yauzl from 'yauzl';

async function collect(chunks: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}

/** A memory spool that records whether it was released. */
function trackedSpool(log: string[], name: string): Spool {
  const inner = memorySpool();
  return {
    write: (chunk) => inner.write(chunk),
    read: () => inner.read(),
    dispose: async () => {
      log.push(`disposed ${name}`);
      await inner.dispose();
    },
  };
}

const OPTIONS = { level: 6, date: new Date(Date.UTC(2024, 0, 1)) };

test('streamed entries come out as they are written; spooled ones follow in the order asked for', async () => {
  const zip = new ZipWriter(OPTIONS);
  const out: Uint8Array[] = [];
  const spooledA = zip.openSpooled(memorySpool(), 'a.txt');
  const spooledB = zip.openSpooled(memorySpool());
  const streamed = zip.openStreamed('main.txt');
  for (let i = 0; i < 1000; i += 1) {
    await streamed.write(`main line ${i}\n`);
    await spooledA.write(`a line ${i}\n`);
    await spooledB.write(Buffer.from(`b line ${i}\n`));
  }
  await streamed.close();
  out.push(...zip.take());
  await spooledA.close();
  await spooledB.close();
  spooledB.name = 'b.txt';
  for await (const chunk of zip.emitSpooled([spooledB, spooledA])) out.push(chunk);
  out.push(zip.finish());
  const files = await unzip(Buffer.concat(out));
  assert.deepEqual([...files.keys()], ['main.txt', 'b.txt', 'a.txt']);
  assert.equal(files.get('main.txt')?.toString(), Array.from({ length: 1000 }, (_, i) => `main line ${i}\n`).join(''));
  assert.equal(files.get('b.txt')?.toString(), Array.from({ length: 1000 }, (_, i) => `b line ${i}\n`).join(''));
  assert.equal(files.get('a.txt')?.toString().split('\n').length, 1001);
});

test('one streamed entry at a time, and spooled entries must be closed and all named in the order', async () => {
  const zip = new ZipWriter(OPTIONS);
  zip.openStreamed('one');
  assert.throws(() => zip.openStreamed('two'), /still open/);
  await zip.dispose();

  const other = new ZipWriter(OPTIONS);
  const open = other.openSpooled(memorySpool(), 'open');
  await open.write('x');
  await assert.rejects(collect(other.emitSpooled([])), /every spooled entry/);
  await assert.rejects(collect(other.emitSpooled()), /was not closed/);
  await other.dispose();
});

test('dispose releases the spools of entries never emitted', async () => {
  const log: string[] = [];
  const zip = new ZipWriter(OPTIONS);
  const entry = zip.openSpooled(trackedSpool(log, 'x'), 'x');
  await entry.write('some bytes');
  await zip.dispose();
  assert.deepEqual(log, ['disposed x']);
});

/** Lines of text, the header first, chunked every `every` rows. */
function lineEncoder(header: string, every = 3): RowEncoder<string> {
  let pending = '';
  let rows = 0;
  return {
    head: `${header}\n`,
    add(row) {
      pending += `${row}\n`;
      rows += 1;
      if (rows % every !== 0) return undefined;
      const out = pending;
      pending = '';
      return out;
    },
    end: () => pending,
  };
}

test('a one-pass zip holds every file whole although their rows arrived side by side', async () => {
  const log: string[] = [];
  let spools = 0;
  async function* batches(): AsyncGenerator<Iterable<FileBatch<string>>> {
    // Groups of three steps and one of two.
    for (let group = 0; group < 50; group += 3) {
      const steps: FileBatch<string>[] = [];
      for (let step = group; step < Math.min(group + 3, 50); step += 1) steps.push([[`main ${step}`], undefined, [`r ${step}.1`, `r ${step}.2`]]);
      yield steps;
    }
  }
  const files = [
    { name: 'main.csv', encoder: lineEncoder('main') },
    { name: 'empty.csv', encoder: lineEncoder('nothing') },
    { name: 'repeat.csv', encoder: lineEncoder('repeat') },
  ];
  const bytes = await collect(zipOnePassChunks(files, batches(), { ...OPTIONS, createSpool: async () => trackedSpool(log, String(++spools)) }));
  const entries = await unzip(bytes);
  assert.deepEqual([...entries.keys()], ['main.csv', 'empty.csv', 'repeat.csv']);
  assert.equal(entries.get('main.csv')?.toString(), ['main', ...Array.from({ length: 50 }, (_, i) => `main ${i}`)].join('\n') + '\n');
  assert.equal(entries.get('empty.csv')?.toString(), 'nothing\n');
  assert.equal(entries.get('repeat.csv')?.toString(), ['repeat', ...Array.from({ length: 50 }, (_, i) => [`r ${i}.1`, `r ${i}.2`]).flat()].join('\n') + '\n');
  assert.deepEqual(log, ['disposed 1', 'disposed 2']);
});

test('a one-pass zip sends the first file while the pass goes on, and stopping early releases the spools', async () => {
  const log: string[] = [];
  let stepsTaken = 0;
  async function* endless(): AsyncGenerator<Iterable<FileBatch<string>>> {
    try {
      for (let step = 0; ; step += 1) {
        stepsTaken = step;
        yield [[[`main row ${step} `.repeat(50)], [`other row ${step}`]]];
      }
    } finally {
      log.push('rows released');
    }
  }
  const files = [
    { name: 'main.csv', encoder: lineEncoder('main', 1) },
    { name: 'other.csv', encoder: lineEncoder('other', 1) },
  ];
  let received = 0;
  for await (const chunk of zipOnePassChunks(files, endless(), { ...OPTIONS, level: 0, createSpool: async () => trackedSpool(log, 'other') })) {
    received += chunk.length;
    if (received > 200_000) break;
  }
  assert.ok(stepsTaken < 10_000, `the first file streamed before the pass ended (${stepsTaken} steps)`);
  assert.deepEqual(log.sort(), ['disposed other', 'rows released']);
});

test('an error in the rows reaches the reader and releases the spools', async () => {
  const log: string[] = [];
  async function* failing(): AsyncGenerator<Iterable<FileBatch<string>>> {
    yield [[['a'], ['b']]];
    throw new Error('database went away');
  }
  const files = [
    { name: 'a', encoder: lineEncoder('a') },
    { name: 'b', encoder: lineEncoder('b') },
  ];
  await assert.rejects(collect(zipOnePassChunks(files, failing(), { ...OPTIONS, createSpool: async () => trackedSpool(log, 'b') })), /database went away/);
  assert.deepEqual(log, ['disposed b']);
});

/** Each entry's name and compression method, from the central directory. */
function entryMethods(bytes: Buffer): Promise<Array<[string, number]>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (error, zip) => {
      if (error) return reject(error);
      const found: Array<[string, number]> = [];
      zip.on('entry', (entry: yauzl.Entry) => {
        found.push([entry.fileName, entry.compressionMethod]);
        zip.readEntry();
      });
      zip.on('end', () => resolve(found));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

test('stored entries sit between deflated ones, whole and with their method, sizes and CRC', async () => {
  const zip = new ZipWriter(OPTIONS);
  const photo = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 251));
  zip.addStored('a/photo.jpg', photo);
  const text = zip.openStreamed('notes.txt');
  await text.write('some notes\n'.repeat(100));
  assert.throws(() => zip.addStored('during.bin', Buffer.from('x')), /still open/);
  await text.close();
  zip.addStored('b/empty.bin', new Uint8Array(0));
  zip.addStored('c/ünïcode name.png', Buffer.from('png bytes'));
  const bytes = Buffer.concat([...zip.take(), zip.finish()]);
  const files = await unzip(bytes);
  assert.deepEqual([...files.keys()], ['a/photo.jpg', 'notes.txt', 'b/empty.bin', 'c/ünïcode name.png']);
  assert.ok(files.get('a/photo.jpg')?.equals(photo));
  assert.equal(files.get('notes.txt')?.toString(), 'some notes\n'.repeat(100));
  assert.equal(files.get('b/empty.bin')?.length, 0);
  assert.equal(files.get('c/ünïcode name.png')?.toString(), 'png bytes');
  assert.deepEqual(await entryMethods(bytes), [
    ['a/photo.jpg', 0],
    ['notes.txt', 8],
    ['b/empty.bin', 0],
    ['c/ünïcode name.png', 0],
  ]);
  // A stored entry's local header holds its CRC and sizes (no data descriptor follows it).
  assert.equal(bytes.readUInt16LE(6) & 0x0008, 0);
  assert.equal(bytes.readUInt32LE(18), photo.length);
  assert.equal(bytes.readUInt32LE(22), photo.length);
});

test('a stored entry of known size and CRC is written chunk by chunk and checked on close', async () => {
  const { crc32 } = await import('node:zlib');
  const photo = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 31) % 253));
  const zip = new ZipWriter(OPTIONS);
  const entry = zip.openStored('a/photo.jpg', { size: photo.length, crc: crc32(photo) });
  const out: Uint8Array[] = [];
  for (let start = 0; start < photo.length; start += 65_536) {
    await entry.write(photo.subarray(start, start + 65_536));
    out.push(...zip.take());
  }
  await entry.close();
  const bytes = Buffer.concat([...out, ...zip.take(), zip.finish()]);
  const files = await unzip(bytes);
  assert.ok(files.get('a/photo.jpg')?.equals(photo));
  assert.deepEqual(await entryMethods(bytes), [['a/photo.jpg', 0]]);
  assert.equal(bytes.readUInt16LE(6) & 0x0008, 0);

  const short = new ZipWriter(OPTIONS).openStored('b.bin', { size: 3, crc: crc32(Buffer.from('abc')) });
  await short.write('ab');
  await assert.rejects(short.close(), /does not match/);
  const long = new ZipWriter(OPTIONS).openStored('c.bin', { size: 1, crc: 0 });
  await assert.rejects(long.write('ab'), /longer than/);
  const wrong = new ZipWriter(OPTIONS).openStored('d.bin', { size: 3, crc: 1 });
  await wrong.write('abc');
  await assert.rejects(wrong.close(), /does not match/);
});
