import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bombWorkbook, bombZip } from '../../test/zip-bomb.ts';
import { convert, convertAsync } from '../convert.ts';
import { WORKBOOK_ZIP_LIMITS, ZipArchive, ZipTooLargeError } from './zip.ts';

const MB = 1024 * 1024;

/** A zip of stored entries built by ZipArchive itself from a small deflated one. */
async function storedZip(files: Record<string, string>): Promise<Buffer> {
  const deflated = await bombZip(Object.entries(files).map(([name, head]) => ({ name, head })));
  return Buffer.from(ZipArchive.open(deflated).storedCopy());
}

/** Parts of a stored zip of one entry named `a`: its local record, central record and end record. */
function split(zip: Buffer): { local: Buffer; central: Buffer; end: Buffer } {
  const end = zip.subarray(zip.length - 22);
  const directoryStart = end.readUInt32LE(16);
  return { local: zip.subarray(0, directoryStart), central: zip.subarray(directoryStart, zip.length - 22), end };
}

function endRecord(count: number, directorySize: number, directoryStart: number): Buffer {
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(count, 8);
  end.writeUInt16LE(count, 10);
  end.writeUInt32LE(directorySize, 12);
  end.writeUInt32LE(directoryStart, 16);
  return end;
}

describe('zip bombs', () => {
  // As found by the fault run: 1.5 MB whose three sheets inflate to 500 MB each.
  let bombOnce: Promise<Buffer> | undefined;
  const bombOf500MbSheets = (): Promise<Buffer> => (bombOnce ??= bombWorkbook({ padBytes: 500 * MB, sheets: 3 }));

  it('refuses an entry that declares more than the per-entry limit before inflating anything', async () => {
    const bomb = await bombOf500MbSheets();
    assert.ok(bomb.length < 1.6 * MB, `the bomb is ${bomb.length} bytes`);
    assert.throws(
      () => ZipArchive.open(bomb),
      (err: unknown) => err instanceof ZipTooLargeError && /^The workbook is too large when uncompressed \(more than 32 MB\): the part xl\/worksheets\/sheet1.xml alone inflates to 500 MB\.$/.test(err.message),
    );
  });

  it('refuses entries that together declare more than the total limit', async () => {
    const bomb = await bombWorkbook({ padBytes: 30 * MB, sheets: 3 });
    assert.throws(() => ZipArchive.open(bomb), (err: unknown) => err instanceof ZipTooLargeError && /more than 64 MB\): its parts inflate to more than 90 MB/.test(err.message));
  });

  it('stops inflating an entry that lies about its size where its declared size ends', async () => {
    const bomb = await bombWorkbook({ padBytes: 200 * MB, declaredSize: 1000 });
    const archive = ZipArchive.open(bomb);
    assert.throws(() => archive.read('xl/worksheets/sheet1.xml'), /the part xl\/worksheets\/sheet1.xml inflates past the size its directory declares/);
    await assert.rejects(ZipArchive.open(bomb).preload(), /inflates past the size its directory declares/);
  });

  it('publishing a bomb fails with the clear message, synchronously or not', async () => {
    const bomb = await bombOf500MbSheets();
    for (const result of [convert(bomb, { fileName: 'bomb.xlsx' }), await convertAsync(bomb, { fileName: 'bomb.xlsx' })]) {
      assert.equal(result.ok, false);
      if (!result.ok) {
        assert.equal(result.errors[0]?.code, 'too_large');
        assert.match(result.errors[0]?.message ?? '', /^The workbook is too large when uncompressed \(more than 32 MB\)/);
      }
    }
  });

  it('reads the same workbook when it is small', async () => {
    const book = await bombWorkbook({ padBytes: 1000 });
    const result = await convertAsync(book, { fileName: 'small.xlsx' });
    assert.ok(result.ok, JSON.stringify(result));
    assert.match(result.xform, /<bind nodeset="\/data\/q" type="string"\/>/);
  });
});

describe('zip structure', () => {
  it('refuses more entries than the limit', async () => {
    const zip = await storedZip({ a: '1', b: '2', c: '3' });
    assert.throws(() => ZipArchive.open(zip, { ...WORKBOOK_ZIP_LIMITS, maxEntries: 2 }), /the archive has 3 entries; a workbook has at most 2/);
    assert.deepEqual(ZipArchive.open(zip).names, ['a', 'b', 'c']);
  });

  it('refuses two entries that share their bytes', async () => {
    const { local, central } = split(await storedZip({ a: 'shared bytes' }));
    const alias = Buffer.from(central);
    alias.write('b', 46);
    const zip = Buffer.concat([local, central, alias, endRecord(2, central.length * 2, local.length)]);
    assert.throws(() => ZipArchive.open(zip), /the entries (a and b|b and a) overlap/);
  });

  it('refuses a name held twice', async () => {
    const { local, central } = split(await storedZip({ a: 'x' }));
    const second = Buffer.from(local);
    const again = Buffer.from(central);
    again.writeUInt32LE(local.length, 42);
    const zip = Buffer.concat([local, second, central, again, endRecord(2, central.length * 2, local.length * 2)]);
    assert.throws(() => ZipArchive.open(zip), /the archive holds a twice/);
  });

  it('refuses an entry whose data runs into the central directory', async () => {
    const { local, central, end } = split(await storedZip({ a: 'abc' }));
    const long = Buffer.from(central);
    long.writeUInt32LE(1000, 20);
    long.writeUInt32LE(1000, 24);
    assert.throws(() => ZipArchive.open(Buffer.concat([local, long, end])), /truncated entry a/);
  });

  it('reads zip64 sizes, offsets and entry counts', async () => {
    const { local, central } = split(await storedZip({ a: 'zip64 content' }));
    const extra = Buffer.alloc(4 + 24);
    extra.writeUInt16LE(0x0001, 0);
    extra.writeUInt16LE(24, 2);
    extra.writeBigUInt64LE(BigInt(central.readUInt32LE(24)), 4);
    extra.writeBigUInt64LE(BigInt(central.readUInt32LE(20)), 12);
    extra.writeBigUInt64LE(0n, 20);
    const entry = Buffer.concat([central, extra]);
    entry.writeUInt32LE(0xffffffff, 20);
    entry.writeUInt32LE(0xffffffff, 24);
    entry.writeUInt32LE(0xffffffff, 42);
    entry.writeUInt16LE(extra.length, 30);
    const record = Buffer.alloc(56);
    record.writeUInt32LE(0x06064b50, 0);
    record.writeBigUInt64LE(1n, 24);
    record.writeBigUInt64LE(1n, 32);
    record.writeBigUInt64LE(BigInt(entry.length), 40);
    record.writeBigUInt64LE(BigInt(local.length), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(BigInt(local.length + entry.length), 8);
    const end = endRecord(0xffff, 0xffffffff, 0xffffffff);
    const archive = ZipArchive.open(Buffer.concat([local, entry, record, locator, end]));
    assert.equal(new TextDecoder().decode(archive.read('a')), 'zip64 content');
  });

  it('turns any archive into stored entries another reader can parse', async () => {
    const zip = await bombZip([{ name: 'x/one.xml', head: '<one/>', padBytes: 10_000 }]);
    const copy = ZipArchive.open(Buffer.from(ZipArchive.open(zip).storedCopy()));
    assert.equal(copy.read('x/one.xml')?.length, 10_006);
  });
});
