import { test } from 'node:test';
import assert from 'node:assert/strict';
import { multipartBoundary, splitMultipart } from './multipart-body.ts';

const B = 'XyZ-boundary';
const body = (...chunks: Array<string | Buffer>): Buffer => Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c, 'utf8') : c)));

test('multipartBoundary reads plain and quoted boundaries of form-data only', () => {
  assert.equal(multipartBoundary('multipart/form-data; boundary=abc123'), 'abc123');
  assert.equal(multipartBoundary('Multipart/Form-Data; charset=utf-8; boundary="a b:c"'), 'a b:c');
  assert.equal(multipartBoundary('multipart/mixed; boundary=abc'), undefined);
  assert.equal(multipartBoundary('application/json'), undefined);
});

test('an XML part and a photo come out with names, file names, media types and exact bytes', () => {
  const photo = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x2d, 0x2d, 0x00, 0xff]);
  const parts = splitMultipart(
    body(
      `--${B}\r\nContent-Disposition: form-data; name="xml_submission_file"; filename="instance.xml"\r\nContent-Type: text/xml; charset=utf-8\r\nContent-Length: 13\r\n\r\n<data>é</data>\r\n`,
      `--${B}\r\ncontent-disposition: form-data; name="photo.jpg"; filename="photo.jpg"\r\nContent-Type: IMAGE/JPEG\r\n\r\n`,
      photo,
      `\r\n--${B}--\r\n`,
    ),
    B,
  );
  assert.ok(parts);
  assert.equal(parts.length, 2);
  assert.deepEqual({ ...parts[0], data: parts[0]?.data.toString('utf8') }, { name: 'xml_submission_file', filename: 'instance.xml', mimetype: 'text/xml', data: '<data>é</data>' });
  assert.equal(parts[1]?.mimetype, 'image/jpeg');
  assert.deepEqual(parts[1]?.data, photo);
});

test('fields, defaults and file names as the streaming parser reports them', () => {
  const parts = splitMultipart(
    body(
      `preamble\r\n--${B}\r\nContent-Disposition: form-data; name=plain\r\n\r\nvalue\r\n`,
      `--${B}\r\nContent-Disposition: form-data; name="a"; filename="C:\\\\photos\\\\x.jpg"\r\n\r\n1\r\n`,
      `--${B}\r\nContent-Disposition: form-data; name="b"; filename*=UTF-8''na%C3%AFve.png\r\n\r\n2\r\n`,
      `--${B}\r\nContent-Disposition: form-data; name="q\\"d"; filename="../.."\r\n\r\n3\r\n`,
      `--${B}\r\nContent-Type: text/plain\r\n\r\nno disposition: skipped\r\n`,
      `--${B}\r\nContent-Disposition: attachment; name="x"\r\n\r\nnot form-data: skipped\r\n`,
      `--${B}\r\nContent-Disposition: form-data; name="empty"; filename="e.txt"\r\n\r\n\r\n`,
      `--${B}--`,
    ),
    B,
  );
  assert.ok(parts);
  assert.deepEqual(
    parts.map((p) => [p.name, p.filename, p.mimetype, p.data.toString()]),
    [
      ['plain', undefined, 'text/plain', 'value'],
      ['a', 'x.jpg', 'text/plain', '1'],
      ['b', 'naïve.png', 'text/plain', '2'],
      ['q"d', '', 'text/plain', '3'],
      ['empty', 'e.txt', 'text/plain', ''],
    ],
  );
});

test('malformed bodies are refused rather than guessed at', () => {
  const part = `Content-Disposition: form-data; name="a"; filename="a.xml"\r\n\r\n<a/>`;
  assert.equal(splitMultipart(body(`--${B}\r\n${part}\r\n`), B), undefined, 'no closing boundary');
  assert.equal(splitMultipart(body(`--other\r\n${part}\r\n--other--`), B), undefined, 'another boundary');
  assert.equal(splitMultipart(body(`--${B}\r\nContent-Disposition form-data\r\n\r\nx\r\n--${B}--`), B), undefined, 'a header line without a colon');
  assert.equal(splitMultipart(body(`--${B}\r\nContent-Disposition: form-data; name="a"\r\nx\r\n--${B}--`), B), undefined, 'no end of the headers');
  assert.equal(splitMultipart(body(`--${B}X\r\n${part}\r\n--${B}--`), B), undefined, 'a longer boundary');
  assert.deepEqual(splitMultipart(body(`--${B}--\r\n`), B), [], 'no parts at all');
});
