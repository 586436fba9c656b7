import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { splitMultipart } from './multipart-body.ts';
import { MultipartStream } from './multipart-stream.ts';

const B = 'XyZ-boundary';
const body = (...chunks: Array<string | Buffer>): Buffer => Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c, 'utf8') : c)));

/** The body handed over in pieces of `size` bytes, counting how many were pulled. */
function source(whole: Buffer, size: number): { pull: () => Promise<Buffer | undefined>; pulled: () => number } {
  let at = 0;
  return {
    pull: async () => {
      if (at >= whole.byteLength) return undefined;
      const piece = whole.subarray(at, at + size);
      at += piece.byteLength;
      return piece;
    },
    pulled: () => at,
  };
}

interface Read {
  name: string;
  filename: string | undefined;
  mimetype: string;
  data: Buffer;
}

async function readAll(whole: Buffer, size: number): Promise<Read[] | 'malformed'> {
  const reader = new MultipartStream(source(whole, size).pull, B);
  const parts: Read[] = [];
  try {
    for (let head = await reader.nextPart(); head; head = await reader.nextPart()) {
      const pieces: Buffer[] = [];
      for (let piece = await reader.read(); piece; piece = await reader.read()) pieces.push(Buffer.from(piece));
      parts.push({ ...head, data: Buffer.concat(pieces) });
    }
    await reader.finish();
  } catch (error) {
    if (error instanceof Error && /malformed/.test(error.message)) return 'malformed';
    throw error;
  }
  return parts;
}

const photo = Buffer.concat([Buffer.from(`\r\n--${B.slice(0, 5)}\r\n-\r`), randomBytes(3000), Buffer.from(`\r\n--${B}X`)]);
const bodies: Record<string, Buffer> = {
  'xml and photo': body(
    `--${B}\r\nContent-Disposition: form-data; name="xml_submission_file"; filename="instance.xml"\r\nContent-Type: text/xml; charset=utf-8\r\n\r\n<data>é</data>\r\n`,
    `--${B}\r\ncontent-disposition: form-data; name="photo.jpg"; filename="photo.jpg"\r\nContent-Type: IMAGE/JPEG\r\n\r\n`,
    photo,
    `\r\n--${B}--\r\n`,
  ),
  'fields, names and skipped parts': body(
    `preamble\r\n--${B}  \r\nContent-Disposition: form-data; name=plain\r\n\r\nvalue\r\n`,
    `--${B}\r\nContent-Disposition: form-data; name="a"; filename="C:\\\\photos\\\\x.jpg"\r\n\r\n1\r\n`,
    `--${B}\r\nContent-Disposition: form-data; name="b"; filename*=UTF-8''na%C3%AFve.png\r\n\r\n2\r\n`,
    `--${B}\r\nContent-Type: text/plain\r\n\r\nno disposition: skipped\r\n`,
    `--${B}\r\n\r\nno header lines: skipped\r\n`,
    `--${B}\r\n\r\n--${B}\r\nContent-Disposition: form-data; name="empty"; filename="e.txt"\r\n\r\n\r\n`,
    `--${B}\r\nContent-Disposition: form-data; name="bare"\r\n\r\n--${B}--epilogue`,
  ),
  'no parts': body(`--${B}--\r\n`),
  'no closing boundary': body(`--${B}\r\nContent-Disposition: form-data; name="a"; filename="a.xml"\r\n\r\n<a/>\r\n`),
  'another boundary': body(`--other\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--other--`),
  'a header line without a colon': body(`--${B}\r\nContent-Disposition form-data\r\n\r\nx\r\n--${B}--`),
  'no end of the headers': body(`--${B}\r\nContent-Disposition: form-data; name="a"\r\nx\r\n--${B}--`),
  'a longer boundary': body(`--${B}X\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--${B}--`),
  'cut short': body(`--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\nxyz`),
  empty: Buffer.alloc(0),
};

test('read in pieces of any size, every body gives the parts splitMultipart gives (or is malformed for both)', async () => {
  for (const [label, whole] of Object.entries(bodies)) {
    const expected = splitMultipart(whole, B)?.map((p) => ({ ...p, data: Buffer.from(p.data) })) ?? 'malformed';
    for (const size of [1, 2, 3, 7, 16, 64, 1000, whole.byteLength + 1]) {
      assert.deepEqual(await readAll(whole, size), expected, `${label}, pieces of ${size}`);
    }
  }
});

test('a part is handed over as it arrives, never gathered whole', async () => {
  const big = randomBytes(1024 * 1024);
  const whole = body(`--${B}\r\nContent-Disposition: form-data; name="v"; filename="v.mp4"\r\n\r\n`, big, `\r\n--${B}--\r\n`);
  const input = source(whole, 64 * 1024);
  const reader = new MultipartStream(input.pull, B);
  assert.equal((await reader.nextPart())?.filename, 'v.mp4');
  let largest = 0;
  let total = 0;
  for (let piece = await reader.read(); piece; piece = await reader.read()) {
    largest = Math.max(largest, piece.byteLength);
    total += piece.byteLength;
    assert.ok(input.pulled() - total <= 128 * 1024, 'at most a chunk read ahead');
  }
  assert.equal(total, big.byteLength);
  assert.ok(largest <= 64 * 1024);
  assert.equal(await reader.nextPart(), undefined);
});

test('an oversized header block is malformed rather than buffered', async () => {
  const whole = body(`--${B}\r\nContent-Disposition: form-data; name="a"\r\nX-Pad: ${'p'.repeat(100_000)}\r\n\r\nx\r\n--${B}--`);
  assert.equal(await readAll(whole, 4096), 'malformed');
});
