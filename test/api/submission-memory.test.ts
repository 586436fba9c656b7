// A submission's body is read only after the URL and credentials allow it, within a total cap
// (SUBMISSION_LIMIT), its files spooled to DATA_DIR/tmp one at a time and those the instance does
// not name dropped; the temporary files go however the request ends. Over real HTTP, so that a
// refusal can be seen to arrive while the client is still sending.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createUser, multipart, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';

const MB = 1024 * 1024;
const UPLOAD_LIMIT = 24 * MB;
const SUBMISSION_LIMIT = 50 * MB;
const BOUNDARY = 'memoryTestBoundary';
const TWO_PHOTOS_CSV = ['survey,,,', ',type,name,label', ',image,front,Front', ',image,back,Back', 'settings,,,', ',form_id,form_title,', ',two_photos,Two photos,', ''].join('\n');

let server: TestServer;
let dataDir: string;
let port: number;
let bob: TestUser;
let alice: TestUser;
let carol: TestUser;
let householdId: number;
let twoPhotosId: number;

interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
  /** Body bytes the client had written when the answer arrived. */
  sentAtAnswer: number;
  total: number;
}

function partHead(name: string, fileName: string, type: string): Buffer {
  return Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${fileName}"\r\nContent-Type: ${type}\r\n\r\n`);
}

/** A file part's pieces, generated as they are written (a 10 MB part is never built whole). */
function* filePart(fileName: string, bytes: number, fill = 0xab): Generator<Buffer> {
  yield partHead(fileName, fileName, 'image/jpeg');
  const piece = Buffer.alloc(64 * 1024, fill);
  for (let left = bytes; left > 0; left -= piece.byteLength) yield left >= piece.byteLength ? piece : piece.subarray(0, left);
  yield Buffer.from('\r\n');
}

function* instancePart(xml: string): Generator<Buffer> {
  yield partHead('xml_submission_file', 'submission.xml', 'text/xml');
  yield Buffer.from(xml);
  yield Buffer.from('\r\n');
}

function* closing(): Generator<Buffer> {
  yield Buffer.from(`--${BOUNDARY}--\r\n`);
}

function* concat(...parts: Array<Iterable<Buffer>>): Generator<Buffer> {
  for (const part of parts) yield* part;
}

/**
 * POSTs a body written piece by piece (chunked unless `contentLength` is given), writing no more
 * once the answer has arrived. `abortAt`: the client drops the connection after that many bytes,
 * once `beforeAbort` resolves.
 */
function post(path: string, pieces: Iterable<Buffer>, options: { headers?: Record<string, string>; contentLength?: number; abortAt?: number; beforeAbort?: () => Promise<void> } = {}): Promise<Answer | 'aborted'> {
  const headers: Record<string, string> = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'x-openrosa-version': '1.0', ...options.headers };
  if (options.contentLength !== undefined) headers['content-length'] = String(options.contentLength);
  else headers['transfer-encoding'] = 'chunked';
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers });
    let sent = 0;
    let answered = false;
    const iterator = pieces[Symbol.iterator]();
    request.on('response', (response) => {
      answered = true;
      const sentAtAnswer = sent;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        let total = sent;
        for (let next = iterator.next(); !next.done; next = iterator.next()) total += next.value.byteLength;
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: response.headers, sentAtAnswer, total });
        request.destroy();
      });
    });
    request.on('error', (error) => {
      if (!answered && options.abortAt === undefined) reject(error);
    });
    const pump = (): void => {
      while (!answered && !request.destroyed) {
        if (options.abortAt !== undefined && sent >= options.abortAt) {
          void (options.beforeAbort ?? (async () => undefined))().then(() => {
            request.destroy();
            resolve('aborted');
          }, reject);
          return;
        }
        const next = iterator.next();
        if (next.done) {
          request.end();
          return;
        }
        sent += next.value.byteLength;
        if (!request.write(next.value)) {
          request.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
}

function answered(result: Answer | 'aborted'): Answer {
  assert.notEqual(result, 'aborted');
  return result as Answer;
}

function spooled(): string[] {
  try {
    return readdirSync(join(dataDir, 'tmp')).filter((name) => name.startsWith('submission-'));
  } catch {
    return [];
  }
}

/** Waits for a condition the server reaches on its own after the client has gone. */
async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let tries = 0; tries < 400; tries++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.fail(`never: ${what}`);
}

async function record(formId: number, uuid: string): Promise<{ name?: string; _attachments: Array<{ filename: string; download_url: string }> } | undefined> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?query=${encodeURIComponent(JSON.stringify({ _uuid: uuid }))}`, headers: bob.auth });
  return (res.json() as Array<{ name?: string; _attachments: Array<{ filename: string; download_url: string }> }>)[0];
}

async function download(url: string): Promise<Buffer> {
  const res = await server.app.inject({ method: 'GET', url: url.replace('http://testserver', ''), headers: bob.auth });
  assert.equal(res.statusCode, 200);
  return res.rawPayload;
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gather-submission-memory-'));
  server = await startTestServer({ DATA_DIR: dataDir, UPLOAD_LIMIT: String(UPLOAD_LIMIT), SUBMISSION_LIMIT: String(SUBMISSION_LIMIT) });
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  port = (server.app.server.address() as AddressInfo).port;
  bob = await createUser(server.app, 'bob');
  alice = await createUser(server.app, 'alice');
  carol = await createUser(server.app, 'carol');
  householdId = await publishForm(server.app, bob, formFile(HOUSEHOLD_CSV, 'household.csv'));
  twoPhotosId = await publishForm(server.app, bob, formFile(TWO_PHOTOS_CSV, 'two_photos.csv'));
  await publishForm(server.app, alice, formFile(HOUSEHOLD_CSV, 'household.csv'));
  const locked = await server.app.inject({ method: 'PATCH', url: '/api/v1/profiles/carol', payload: { require_auth: true }, headers: carol.auth });
  assert.equal(locked.statusCode, 200, locked.body);
});

after(async () => {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('who may submit is settled before the body is read', () => {
  const hundredMegabytes = (): Generator<Buffer> => concat(...Array.from({ length: 10 }, (_, i) => filePart(`f${i}.jpg`, 10 * MB)), closing());

  test('an anonymous POST to /submission is answered 401 while the client is still sending, and the connection closes', async () => {
    for (const path of ['/submission', '/api/v1/submissions']) {
      const res = answered(await post(path, hundredMegabytes()));
      assert.equal(res.status, 401, res.body);
      assert.ok(res.headers['www-authenticate']);
      assert.equal(res.headers['connection'], 'close');
      assert.ok(res.sentAtAnswer < res.total / 2, `${res.sentAtAnswer} of ${res.total} bytes sent before the answer`);
    }
    const declared = answered(await post('/submission', hundredMegabytes(), { contentLength: 100 * MB }));
    assert.equal(declared.status, 401);
    assert.ok(declared.sentAtAnswer < declared.total / 2);
    assert.deepEqual(spooled(), []);
  });

  test('anonymous to an owner who requires credentials is a 401, to no such owner a 404, both before the body', async () => {
    const locked = answered(await post('/carol/submission', hundredMegabytes()));
    assert.equal(locked.status, 401);
    assert.ok(locked.sentAtAnswer < locked.total / 2);
    const nobody = answered(await post('/nobody/submission', hundredMegabytes()));
    assert.equal(nobody.status, 404);
    assert.ok(nobody.sentAtAnswer < nobody.total / 2);
  });

  test('an instance that comes first and is refused stops the read of the files after it', async () => {
    const xml = householdXml({ uuid: randomUUID() }).replace('id="household"', 'id="no_such_form"');
    const res = answered(await post('/alice/submission', concat(instancePart(xml), hundredMegabytes())));
    assert.equal(res.status, 404, res.body);
    assert.ok(res.sentAtAnswer < res.total / 2, `${res.sentAtAnswer} of ${res.total} bytes sent before the answer`);
    assert.deepEqual(spooled(), []);
  });

  test('a large instance of a form that requires credentials is refused to an anonymous sender without being held', async () => {
    const locked = await server.app.inject({ method: 'PATCH', url: `/api/v1/forms/${householdId}`, payload: { require_auth: true }, headers: bob.auth });
    assert.equal(locked.statusCode, 200, locked.body);
    try {
      const xml = householdXml({ uuid: randomUUID(), name: 'n'.repeat(3 * MB) });
      const res = answered(await post('/bob/submission', concat(instancePart(xml), filePart('photo.png', 5 * MB), closing())));
      assert.equal(res.status, 401, res.body);
      assert.deepEqual(spooled(), []);
    } finally {
      await server.app.inject({ method: 'PATCH', url: `/api/v1/forms/${householdId}`, payload: { require_auth: false }, headers: bob.auth });
    }
  });
});

describe('the size of a submission request', () => {
  test('a declared Content-Length over SUBMISSION_LIMIT is a 413 before the body is read', async () => {
    const pieces = concat(instancePart(householdXml({ uuid: randomUUID() })), filePart('a.jpg', 20 * MB), filePart('b.jpg', 20 * MB), filePart('c.jpg', 20 * MB), closing());
    const res = answered(await post('/bob/submission', pieces, { headers: bob.auth, contentLength: SUBMISSION_LIMIT + 1 }));
    assert.equal(res.status, 413, res.body);
    assert.match(res.body, /larger than 52428800 bytes/);
    assert.ok(res.sentAtAnswer < res.total / 2);
  });

  test('a chunked body is cut off with a 413 once it passes SUBMISSION_LIMIT, its files removed', async () => {
    const uuid = randomUUID();
    const xml = householdXml({ uuid, photo: 'a.jpg' });
    const pieces = concat(instancePart(xml), ...['a.jpg', 'a.jpg', 'a.jpg', 'a.jpg'].map((name) => filePart(name, 20 * MB)), closing());
    const res = answered(await post('/bob/submission', pieces, { headers: bob.auth }));
    assert.equal(res.status, 413, res.body);
    assert.ok(res.sentAtAnswer >= SUBMISSION_LIMIT && res.sentAtAnswer < res.total, `${res.sentAtAnswer} of ${res.total}`);
    assert.equal(await record(householdId, uuid), undefined);
    assert.deepEqual(spooled(), []);
  });

  test('the limit is announced to devices', async () => {
    const res = await server.app.inject({ method: 'HEAD', url: '/submission', headers: bob.auth });
    assert.equal(res.headers['x-openrosa-accept-content-length'], String(SUBMISSION_LIMIT));
  });
});

describe('files of a streamed submission', () => {
  // Large enough to span many chunks and spool writes; PGlite takes about a second per MB to insert.
  test('two 8 MB files are stored byte for byte, and no temporary file remains', async () => {
    const uuid = randomUUID();
    const front = randomBytes(8 * MB);
    const back = randomBytes(8 * MB);
    const xml = `<?xml version="1.0"?><two_photos id="two_photos"><front>front.jpg</front><back>back.jpg</back><meta><instanceID>uuid:${uuid}</instanceID></meta></two_photos>`;
    const asPart = (name: string, bytes: Buffer): Buffer[] => [partHead(name, name, 'image/jpeg'), bytes, Buffer.from('\r\n')];
    const pieces = [...instancePart(xml), ...asPart('front.jpg', front), ...asPart('back.jpg', back), ...closing()];
    const res = answered(await post('/bob/submission', pieces, { headers: bob.auth, contentLength: pieces.reduce((n, p) => n + p.byteLength, 0) }));
    assert.equal(res.status, 201, res.body);
    const stored = await record(twoPhotosId, uuid);
    assert.ok(stored);
    const byName = new Map(stored._attachments.map((a) => [a.filename.split('/').pop(), a.download_url]));
    assert.equal(sha256(await download(byName.get('front.jpg') ?? '')), sha256(front));
    assert.equal(sha256(await download(byName.get('back.jpg') ?? '')), sha256(back));
    assert.deepEqual(spooled(), []);
  });

  test('only the files the instance names are stored, whether they come before it or after', async () => {
    const uuid = randomUUID();
    const pieces = concat(
      filePart('early.jpg', 2 * MB),
      instancePart(householdXml({ uuid, photo: 'photo.png' })),
      filePart('photo.png', 3 * MB, 0x11),
      filePart('later.jpg', 2 * MB),
      closing(),
    );
    const res = answered(await post('/bob/submission', pieces, { headers: bob.auth }));
    assert.equal(res.status, 201, res.body);
    const stored = await record(householdId, uuid);
    assert.deepEqual(stored?._attachments.map((a) => a.filename.split('/').pop()), ['photo.png']);
    assert.equal(sha256(await download(stored?._attachments[0]?.download_url ?? '')), sha256(Buffer.alloc(3 * MB, 0x11)));
    assert.deepEqual(spooled(), []);
  });

  test('a large instance is stored whole, its form found by a formhub uuid far into it', async () => {
    const form = await server.app.inject({ method: 'GET', url: `/api/v1/forms/${householdId}`, headers: bob.auth });
    const formUuid = String(form.json<{ uuid: string }>().uuid);
    const uuid = randomUUID();
    const name = 'n'.repeat(2 * MB);
    const xml = householdXml({ uuid, name }).replace('id="household"', 'id="renamed"').replace('<meta>', `<formhub><uuid>${formUuid}</uuid></formhub><meta>`);
    const res = answered(await post('/bob/submission', concat(instancePart(xml), closing()), { headers: bob.auth }));
    assert.equal(res.status, 201, res.body);
    assert.equal((await record(householdId, uuid))?.name?.length, name.length);
    assert.deepEqual(spooled(), []);
  });

  test('files spooled before a refused instance are removed', async () => {
    const xml = householdXml({ uuid: randomUUID() }).replace('id="household"', 'id="no_such_form"');
    const res = answered(await post('/bob/submission', concat(filePart('photo.png', 3 * MB), instancePart(xml), closing()), { headers: bob.auth }));
    assert.equal(res.status, 404, res.body);
    assert.deepEqual(spooled(), []);
  });

  test('a client that drops off mid-file leaves no temporary file behind', async () => {
    const uuid = randomUUID();
    const pieces = concat(instancePart(householdXml({ uuid, photo: 'photo.png' })), filePart('photo.png', 20 * MB), closing());
    const result = await post('/bob/submission', pieces, {
      headers: bob.auth,
      abortAt: 8 * MB,
      beforeAbort: () => eventually(() => spooled().length > 0, 'the photo is being spooled'),
    });
    assert.equal(result, 'aborted');
    await eventually(() => spooled().length === 0, 'the spooled photo is removed');
    assert.equal(await record(householdId, uuid), undefined);
  });

  test('a small body (read whole) is unchanged: an anonymous submission to an open account is stored', async () => {
    const body = multipart({}, [{ name: 'xml_submission_file', fileName: 'submission.xml', content: householdXml({ uuid: randomUUID() }), contentType: 'text/xml' }]);
    const res = await server.app.inject({ method: 'POST', url: '/alice/submission', payload: body.payload, headers: body.headers });
    assert.equal(res.statusCode, 201, res.body);
  });
});
