// Time limits on receiving requests, over real TCP against the real app with tiny limits: a client
// that stops sending is answered 408 and disconnected; one that sends slowly but steadily (a phone
// on a poor link) gets through.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createUser, multipart, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { formFile } from '../fixtures/forms.ts';
import { HOUSEHOLD_CSV, householdXml } from '../fixtures/submissions.ts';

const IDLE_SECONDS = 1;
const TIMED_OUT = /^HTTP\/1\.1 408 Request Timeout\r\n[\s\S]*\r\n\r\n\{"detail":"The request was not received in time\."\}$/;

async function listen(server: TestServer): Promise<number> {
  await server.app.listen({ port: 0, host: '127.0.0.1' });
  const address = server.app.server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

interface Exchange {
  readonly socket: Socket;
  /** Everything the server sent, once it closed the connection. */
  readonly answer: Promise<string>;
}

function open(port: number): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      const answer = new Promise<string>((done) => {
        socket.on('error', () => done(text));
        socket.on('close', () => done(text));
      });
      resolve({ socket, answer });
    });
    socket.once('error', reject);
  });
}

function requestHead(method: string, path: string, headers: Record<string, string>, length: number): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', `Content-Length: ${length}`, 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return lines.join('\r\n') + '\r\n\r\n';
}

/** Sends the body in `pieces` parts, `gapMs` apart, until done or the server closes the connection. */
async function sendSteadily(socket: Socket, body: Buffer, pieces: number, gapMs: number): Promise<void> {
  const size = Math.ceil(body.byteLength / pieces);
  for (let offset = 0; offset < body.byteLength && !socket.destroyed; offset += size) {
    await sleep(gapMs);
    socket.write(body.subarray(offset, offset + size));
  }
}

function status(answer: string): number {
  return Number(/^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1] ?? 0);
}

describe('the body idle limit (BODY_IDLE_TIMEOUT)', () => {
  let server: TestServer;
  let port: number;
  let bob: TestUser;

  before(async () => {
    server = await startTestServer({ BODY_IDLE_TIMEOUT: String(IDLE_SECONDS), UPLOAD_LIMIT: String(4 * 1024 * 1024) });
    port = await listen(server);
    bob = await createUser(server.app, 'bob');
    await publishForm(server.app, bob, formFile(HOUSEHOLD_CSV));
  });
  after(async () => server.close());

  test('an anonymous JSON body that stops halfway is answered 408 and the connection closed', { timeout: 30_000 }, async () => {
    const { socket, answer } = await open(port);
    socket.write(requestHead('POST', '/api/v1/profiles', { 'Content-Type': 'application/json' }, 400) + '{"username": "slo');
    assert.match(await answer, TIMED_OUT);
  });

  test('a submission whose photo stops arriving is answered 408 and nothing is stored', { timeout: 30_000 }, async () => {
    const uuid = randomUUID();
    const body = submissionBody(uuid, 512 * 1024);
    const { socket, answer } = await open(port);
    socket.write(requestHead('POST', '/bob/submission', body.headers, body.payload.byteLength));
    socket.write(body.payload.subarray(0, body.payload.byteLength / 2));
    assert.match(await answer, TIMED_OUT);
    const data = await server.app.inject({ method: 'GET', url: `/api/v1/data?query=${encodeURIComponent(JSON.stringify({ _uuid: uuid }))}`, headers: bob.auth });
    assert.doesNotMatch(data.body, new RegExp(uuid));
  });

  test('an XLSForm upload that stops arriving is answered 408', { timeout: 30_000 }, async () => {
    const body = multipart({}, [formFile(HOUSEHOLD_CSV.replace('household_survey', 'stalled_survey'), 'stalled_survey.csv')]);
    const { socket, answer } = await open(port);
    socket.write(requestHead('POST', '/api/v1/forms', { ...body.headers, Authorization: bob.auth.authorization }, body.payload.byteLength));
    socket.write(body.payload.subarray(0, 100));
    assert.match(await answer, TIMED_OUT);
  });

  test('a photo sent slowly but steadily, for three times the idle limit, is stored', { timeout: 30_000 }, async () => {
    const uuid = randomUUID();
    const body = submissionBody(uuid, 256 * 1024);
    const { socket, answer } = await open(port);
    socket.write(requestHead('POST', '/bob/submission', body.headers, body.payload.byteLength));
    await sendSteadily(socket, body.payload, 15, (IDLE_SECONDS * 1000) / 5);
    const text = await answer;
    assert.equal(status(text), 201, text);
  });

  test('a JSON body sent a few bytes at a time is received', { timeout: 30_000 }, async () => {
    const payload = Buffer.from(JSON.stringify({ username: 'steady', first_name: 'S', last_name: 'T', email: 'steady@example.org', password: 'Steady-pw-123!' }));
    const { socket, answer } = await open(port);
    socket.write(requestHead('POST', '/api/v1/profiles', { 'Content-Type': 'application/json' }, payload.byteLength));
    await sendSteadily(socket, payload, 12, (IDLE_SECONDS * 1000) / 4);
    assert.equal(status(await answer), 201);
  });

  test('a kept-alive connection idle for longer than the body limit still serves the next request', { timeout: 30_000 }, async () => {
    const { socket, answer } = await open(port);
    const payload = '{}';
    const head = requestHead('POST', '/api/v1/profiles', { 'Content-Type': 'application/json' }, payload.length).replace('Connection: close', 'Connection: keep-alive');
    socket.write(head + payload);
    await sleep(IDLE_SECONDS * 2500);
    socket.write('GET /api/v1/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    const text = await answer;
    assert.match(text, /^HTTP\/1\.1 400 /);
    assert.match(text, /\r\n\r\n[^]*HTTP\/1\.1 200 OK\r\n/);
  });

  test('the server still answers after stalled clients were cut off', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/`);
    assert.equal(res.status, 200);
  });
});

describe('the headers and whole-request limits (HEADERS_TIMEOUT, REQUEST_TIMEOUT)', () => {
  let server: TestServer;
  let port: number;

  before(async () => {
    server = await startTestServer({ HEADERS_TIMEOUT: '1', REQUEST_TIMEOUT: '2', BODY_IDLE_TIMEOUT: '60' });
    port = await listen(server);
  });
  after(async () => server.close());

  test('headers that stop arriving are answered 408', { timeout: 30_000 }, async () => {
    const { socket, answer } = await open(port);
    socket.write('GET /api/v1/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    assert.match(await answer, TIMED_OUT);
  });

  test('a body still arriving after the whole-request limit is answered 408, however steady', { timeout: 30_000 }, async () => {
    const payload = Buffer.from(JSON.stringify({ username: 'tortoise', password: 'x'.repeat(200) }));
    const { socket, answer } = await open(port);
    socket.write(requestHead('POST', '/api/v1/profiles', { 'Content-Type': 'application/json' }, payload.byteLength + 1000));
    // Steady pieces for longer than the limit (Node checks it every half second here).
    const sending = sendSteadily(socket, Buffer.concat([payload, Buffer.alloc(1000, 0x20)]), 25, 200);
    assert.match(await answer, TIMED_OUT);
    await sending;
  });
});

function submissionBody(uuid: string, photoBytes: number): { payload: Buffer; headers: Record<string, string> } {
  return multipart({}, [
    { name: 'xml_submission_file', fileName: 'submission.xml', content: householdXml({ uuid, photo: 'photo.png' }), contentType: 'text/xml' },
    { name: 'photo.png', fileName: 'photo.png', content: Buffer.alloc(photoBytes, 0xab), contentType: 'image/png' },
  ]);
}
