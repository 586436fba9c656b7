// Fault suite, hostile bodies from anonymous clients against a server process: 1 GB of file parts
// streamed as fast as the server takes them (chunked) to /submission and to /{username}/submission
// (an owner who does not require authentication), a huge declared Content-Length, and slow bodies
// (a stall, a steady trickle, and a hundred of them at once) under small time limits. Each is
// refused or cut off, stores nothing, and raises the server process's peak resident memory by at
// most 64 MB (a server that has taken one photo in: warmUp). A large photo that is allowed is
// stored, served and zipped within the same 64 MB.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';
import { createServerStorage, type ServerProcess, type ServerStorage } from '../server-process.ts';
import { MB, megabytes, memoryRow, peakRise, postMultipart, publish, records, registerUser, runningServer, streamRequest, type StreamedAnswer } from './harness.ts';

const ANONYMOUS_LIMIT = 64 * MB;
const HOSTILE_BYTES = 1024 * MB;
const PART_BYTES = 8 * MB;
/** Small limits for the slow bodies, so that they are cut off within seconds. */
const SLOW_ENV = { BODY_IDLE_TIMEOUT: '2', REQUEST_TIMEOUT: '8' };

let storage: ServerStorage;
let server: ServerProcess | undefined;
let auth = '';
let formId = 0;
const rows: string[] = [];

/**
 * One real submission with a photo, before any input is measured: the first large body a server
 * process takes in grows memory that the process then keeps for its life (node's heap and
 * buffers, the embedded database's memory), once, whatever comes next. That growth is the
 * process's, not what an input costs: without the photo it was counted against whichever input
 * came first after a start (bench/RESULTS.md).
 */
async function warmUp(baseUrl: string): Promise<void> {
  const warm = await postMultipart(baseUrl, '/bob/submission', undefined, [
    { name: 'xml_submission_file', fileName: 'submission.xml', content: householdXml({ uuid: randomUUID(), photo: 'warm.jpg' }), contentType: 'text/xml' },
    { name: 'warm.jpg', fileName: 'warm.jpg', content: randomBytes(8 * MB), contentType: 'image/jpeg' },
  ]);
  assert.equal(warm.status, 201, await warm.text());
}

/** The limits the running server was started with (its environment beyond the defaults). */
let serverLimits: Record<string, string> = {};

/** Makes the server that the tests measure run with `limits`, restarting it (and warming it up) if it does not. */
async function useLimits(limits: Record<string, string>): Promise<void> {
  if (JSON.stringify(limits) === JSON.stringify(serverLimits)) return;
  await running().stop();
  server = await storage.start(limits);
  serverLimits = limits;
  await warmUp(server.baseUrl);
}

before(async () => {
  storage = await createServerStorage();
  server = await storage.start();
  auth = await registerUser(server.baseUrl, 'bob');
  formId = await publish(server.baseUrl, auth, formFile(HOUSEHOLD_CSV, 'household.csv'));
  await warmUp(server.baseUrl);
});
after(async () => {
  await server?.kill();
  await storage?.remove();
  if (rows.length) console.log(rows.join('\n'));
});

const running = (): ServerProcess => runningServer(server).server;
const pid = (): number => runningServer(server).pid;

function record(input: string, answer: string, riseBytes: number): void {
  rows.push(memoryRow(ANONYMOUS_LIMIT, input, answer, riseBytes));
}

/** The message of an OpenRosa or JSON answer, on one line. */
function brief(body: string): string {
  const message = /<message[^>]*>([^<]*)<\/message>/.exec(body)?.[1] ?? /"detail":"([^"]*)"/.exec(body)?.[1];
  return message ?? body.replace(/\s+/g, ' ').slice(0, 120);
}

async function storedCount(): Promise<number> {
  return (await records<{ _id: number }>(running().baseUrl, auth, formId, ['_id'])).length;
}

/** A submission's multipart body: the instance, then file parts of zeros up to `totalBytes`, produced as sent. */
function* hostileSubmission(boundary: string, totalBytes: number): Generator<Buffer> {
  const xml = householdXml({ uuid: 'deadbeef-0000-4000-8000-000000000000', photo: 'photo0.jpg' });
  yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="xml_submission_file"; filename="submission.xml"\r\nContent-Type: text/xml\r\n\r\n${xml}`);
  const part = Buffer.alloc(PART_BYTES);
  for (let sent = 0, i = 0; sent < totalBytes; sent += PART_BYTES, i++) {
    yield Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="photo${i}.jpg"; filename="photo${i}.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`);
    for (let offset = 0; offset < PART_BYTES; offset += 64 * 1024) yield part.subarray(offset, offset + 64 * 1024);
  }
  yield Buffer.from(`\r\n--${boundary}--\r\n`);
}

/**
 * The server's refusal: its answer, or, when it closed the connection while the client was still
 * sending, a reset. A server closing a connection with unread bytes resets it, and a client still
 * writing then loses the answer already on its way (curl, reading as it sends, shows it; node's
 * socket does not always): the reset before the body's end is then the refusal.
 */
function assertRefused(result: StreamedAnswer, expected: number, bodyBytes: number): void {
  if (result.status !== 0) {
    assert.equal(result.status, expected, result.body);
    return;
  }
  assert.ok(result.error === 'EPIPE' || result.error === 'ECONNRESET', `no answer and no reset: ${result.error ?? 'the connection closed'}`);
  assert.ok(result.sentBytes < bodyBytes, `the connection was cut before the body ended (${megabytes(result.sentBytes)} sent)`);
}

describe('oversized bodies, default limits', () => {
  before(() => useLimits({}));

  for (const [path, expected] of [
    ['/submission', 401],
    ['/bob/submission', 413],
  ] as const) {
    test(`an anonymous chunked 1 GB of file parts to ${path} is refused (${expected}) within 64 MB`, { timeout: 300_000 }, async () => {
      const before = await storedCount();
      const boundary = `----fault${randomBytes(8).toString('hex')}`;
      const { result, riseBytes } = await peakRise(pid(), () =>
        streamRequest(`${running().baseUrl}${path}`, { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body: hostileSubmission(boundary, HOSTILE_BYTES) }),
      );
      record(`anonymous chunked ${megabytes(HOSTILE_BYTES)} of file parts, POST ${path}`, `${result.status} ${brief(result.body)} after ${megabytes(result.sentBytes)} sent${result.error ? ` (${result.error})` : ''}`, riseBytes);
      assertRefused(result, expected, HOSTILE_BYTES);
      assert.ok(riseBytes <= ANONYMOUS_LIMIT, `the peak rose by ${megabytes(riseBytes)}`);
      assert.equal(await storedCount(), before, 'nothing was stored');
    });
  }

  test('an anonymous request declaring a 1 TB body is refused (413) within 64 MB', { timeout: 300_000 }, async () => {
    const boundary = `----fault${randomBytes(8).toString('hex')}`;
    const declared = 1024 * 1024 * MB;
    // Sends at most 256 MB of the declared terabyte, as fast as the server takes it.
    async function* body(): AsyncGenerator<Buffer> {
      let sent = 0;
      for (const chunk of hostileSubmission(boundary, 256 * MB)) {
        sent += chunk.byteLength;
        if (sent > 256 * MB) return;
        yield chunk;
      }
    }
    const { result, riseBytes } = await peakRise(pid(), () =>
      streamRequest(`${running().baseUrl}/bob/submission`, { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, contentLength: declared, body: body() }),
    );
    record('anonymous Content-Length of 1 TB, POST /bob/submission', `${result.status} ${brief(result.body)} after ${megabytes(result.sentBytes)} sent${result.error ? ` (${result.error})` : ''}`, riseBytes);
    assertRefused(result, 413, 256 * MB);
    assert.ok(riseBytes <= ANONYMOUS_LIMIT, `the peak rose by ${megabytes(riseBytes)}`);
  });
});

describe('an allowed large photo', () => {
  before(() => useLimits({}));

  const PHOTO_BYTES = 96 * MB;
  const block = randomBytes(MB);
  const photoSha = (() => {
    const hash = createHash('sha256');
    for (let i = 0; i < PHOTO_BYTES / MB; i++) hash.update(block);
    return hash.digest('hex');
  })();
  const uuid = 'b16f0700-0000-4000-8000-000000000000';

  function* photoSubmission(boundary: string): Generator<Buffer> {
    const xml = householdXml({ uuid, photo: 'big.jpg' });
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="xml_submission_file"; filename="submission.xml"\r\nContent-Type: text/xml\r\n\r\n${xml}`);
    yield Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="big.jpg"; filename="big.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`);
    for (let i = 0; i < PHOTO_BYTES / MB; i++) yield block;
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }

  /** Reads a download to its end without keeping it, answering its SHA-256 and length. */
  async function digestOf(response: Response): Promise<{ sha256: string; bytes: number }> {
    assert.ok(response.body);
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of response.body) {
      hash.update(chunk);
      bytes += chunk.byteLength;
    }
    return { sha256: hash.digest('hex'), bytes };
  }

  test('an anonymous 96 MB photo is stored (201), served and zipped, each within 64 MB', { timeout: 300_000 }, async () => {
    const boundary = `----fault${randomBytes(8).toString('hex')}`;
    const stored = await peakRise(pid(), () =>
      streamRequest(`${running().baseUrl}/bob/submission`, { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body: photoSubmission(boundary) }),
    );
    record(`anonymous ${megabytes(PHOTO_BYTES)} photo (allowed), POST /bob/submission`, `${stored.result.status} ${brief(stored.result.body)}`, stored.riseBytes);
    assert.equal(stored.result.status, 201, stored.result.body);
    assert.ok(stored.riseBytes <= ANONYMOUS_LIMIT, `the peak rose by ${megabytes(stored.riseBytes)}`);

    const [row] = await records<{ _attachments: { id: number; filename: string }[] }>(running().baseUrl, auth, formId, ['_attachments']).then((all) =>
      all.filter((r) => r._attachments.some((a) => a.filename.endsWith('big.jpg'))),
    );
    const attachment = row?._attachments.find((a) => a.filename.endsWith('big.jpg'));
    assert.ok(attachment, 'the record lists the photo');
    const served = await peakRise(pid(), async () => digestOf(await fetch(`${running().baseUrl}/api/v1/files/${attachment.id}`, { headers: { authorization: auth } })));
    record(`download of the ${megabytes(PHOTO_BYTES)} photo, GET /api/v1/files/{id}`, `${served.result.bytes} bytes`, served.riseBytes);
    assert.deepEqual(served.result, { sha256: photoSha, bytes: PHOTO_BYTES }, 'the photo comes back byte for byte');
    assert.ok(served.riseBytes <= ANONYMOUS_LIMIT, `the peak rose by ${megabytes(served.riseBytes)}`);

    const zipped = await peakRise(pid(), async () => {
      const response = await fetch(`${running().baseUrl}/api/v1/forms/${formId}.zip`, { headers: { authorization: auth } });
      assert.equal(response.status, 200);
      return digestOf(response);
    });
    record(`attachments zip holding the ${megabytes(PHOTO_BYTES)} photo, GET /api/v1/forms/{pk}.zip`, `${zipped.result.bytes} bytes`, zipped.riseBytes);
    assert.ok(zipped.result.bytes > PHOTO_BYTES, 'the zip holds the photo, stored');
    assert.ok(zipped.riseBytes <= ANONYMOUS_LIMIT, `the peak rose by ${megabytes(zipped.riseBytes)}`);
  });
});

interface SlowOutcome {
  readonly status: number;
  readonly sentBytes: number;
}

/**
 * Sends a multipart submission's head, then `bytesPerStep` bytes every `gapMs` until the server
 * answers or closes the connection; answers the status (0: closed without an answer).
 */
function slowSubmission(baseUrl: string, bytesPerStep: number, gapMs: number): Promise<SlowOutcome> {
  const { port, hostname } = new URL(baseUrl);
  const boundary = `----fault${randomBytes(8).toString('hex')}`;
  const head =
    `POST /bob/submission HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${10 * MB}\r\nConnection: close\r\n\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="xml_submission_file"; filename="submission.xml"\r\nContent-Type: text/xml\r\n\r\n`;
  return new Promise((resolve) => {
    let answer = '';
    let sentBytes = 0;
    let open = true;
    const socket = connect(Number(port), hostname, () => {
      socket.write(head);
      void (async () => {
        while (open) {
          await sleep(gapMs);
          if (!open || socket.destroyed) return;
          socket.write('<'.repeat(bytesPerStep));
          sentBytes += bytesPerStep;
        }
      })();
    });
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    const done = (): void => {
      open = false;
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1] ?? 0), sentBytes });
    };
    socket.on('error', done);
    socket.on('close', done);
  });
}

describe(`slow bodies (BODY_IDLE_TIMEOUT ${SLOW_ENV.BODY_IDLE_TIMEOUT} s, REQUEST_TIMEOUT ${SLOW_ENV.REQUEST_TIMEOUT} s)`, () => {
  before(() => useLimits(SLOW_ENV));

  test('a body that stalls (a byte every 4 s) is answered 408 and cut off', { timeout: 120_000 }, async () => {
    const { result, riseBytes } = await peakRise(pid(), () => slowSubmission(running().baseUrl, 1, 4_000));
    record('anonymous body sending a byte every 4 s, POST /bob/submission', `${result.status} after ${result.sentBytes} bytes`, riseBytes);
    assert.equal(result.status, 408);
  });

  test('a body trickling a few bytes a second is answered 408 once the whole request took too long', { timeout: 120_000 }, async () => {
    const { result, riseBytes } = await peakRise(pid(), () => slowSubmission(running().baseUrl, 2, 500));
    record('anonymous body sending 4 bytes a second, POST /bob/submission', `${result.status} after ${result.sentBytes} bytes`, riseBytes);
    assert.equal(result.status, 408);
  });

  test('a hundred slow bodies at once are all cut off within 64 MB', { timeout: 180_000 }, async () => {
    const before = await storedCount();
    const { result, riseBytes } = await peakRise(pid(), () =>
      Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? slowSubmission(running().baseUrl, 1, 4_000) : slowSubmission(running().baseUrl, 2, 500)))),
    );
    const statuses = new Map<number, number>();
    for (const outcome of result) statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
    record('100 anonymous slow bodies at once (stalling and trickling), POST /bob/submission', [...statuses].map(([code, n]) => `${n}× ${code}`).join(', '), riseBytes);
    assert.deepEqual([...statuses], [[408, 100]]);
    assert.ok(riseBytes <= ANONYMOUS_LIMIT, `the peak rose by ${megabytes(riseBytes)}`);
    assert.equal(await storedCount(), before, 'nothing was stored');
  });
});
