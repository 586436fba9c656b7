// The body's idle limit over real TCP on a bare Fastify app: a stalled body is answered 408, while
// the server's own delays (before reading the body, or after it) never count against the client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyInstance } from 'fastify';
import { installBodyIdleTimeout, serverTimeoutOptions } from './timeouts.ts';

const IDLE_MS = 1000;

async function readBody(stream: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

async function startApp(): Promise<{ app: FastifyInstance; port: number }> {
  const app = Fastify(
    serverTimeoutOptions({ headersTimeoutMs: 30_000, bodyIdleTimeoutMs: IDLE_MS, requestTimeoutMs: 600_000, keepAliveTimeoutMs: 72_000 }),
  );
  installBodyIdleTimeout(app, IDLE_MS);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));
  // Reads the body only after a pause longer than the idle limit: the server is behind, not the client.
  app.post('/late-reader', async (request) => {
    await sleep(IDLE_MS * 2.5);
    return { received: (await readBody(request.raw)).length };
  });
  // Works longer than the idle limit after the whole body is in.
  app.post('/slow-handler', async (request) => {
    const body = await readBody(request.raw);
    await sleep(IDLE_MS * 2.5);
    return { received: body.length };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  return { app, port: typeof address === 'object' && address ? address.port : 0 };
}

/** Collects what the server sends until it closes the connection. */
function collect(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('error', () => resolve(text));
    socket.on('close', () => resolve(text));
  });
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

function head(path: string, length: number): string {
  return `POST ${path} HTTP/1.1\r\nHost: test\r\nContent-Type: application/octet-stream\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`;
}

test('a body that stops arriving is answered 408 and the connection closed', { timeout: 20_000 }, async () => {
  const { app, port } = await startApp();
  try {
    const socket = await open(port);
    const answer = collect(socket);
    socket.write(head('/slow-handler', 1000) + 'x'.repeat(100));
    const text = await answer;
    assert.match(text, /^HTTP\/1\.1 408 /);
    assert.match(text, /\{"detail":"The request was not received in time\."\}$/);
  } finally {
    await app.close();
  }
});

test('a body that keeps arriving in small pieces is received whole', { timeout: 20_000 }, async () => {
  const { app, port } = await startApp();
  try {
    const socket = await open(port);
    const answer = collect(socket);
    socket.write(head('/slow-handler', 100));
    // 10 pieces, a fifth of the idle limit apart: twice the idle limit in all.
    for (let i = 0; i < 10; i++) {
      await sleep(IDLE_MS / 5);
      socket.write('y'.repeat(10));
    }
    const text = await answer;
    assert.match(text, /^HTTP\/1\.1 200 /);
    assert.match(text, /\{"received":100\}$/);
  } finally {
    await app.close();
  }
});

test('a server that reads the body late does not time the client out', { timeout: 20_000 }, async () => {
  const { app, port } = await startApp();
  try {
    const socket = await open(port);
    const answer = collect(socket);
    // Larger than the socket buffers, so the client is held back until the server reads.
    const size = 8 * 1024 * 1024;
    socket.write(head('/late-reader', size));
    socket.write(Buffer.alloc(size, 'z'));
    const text = await answer;
    assert.match(text, /^HTTP\/1\.1 200 /);
    assert.match(text, new RegExp(`\\{"received":${size}\\}$`));
  } finally {
    await app.close();
  }
});

test('a handler working longer than the idle limit after the body is in still answers', { timeout: 20_000 }, async () => {
  const { app, port } = await startApp();
  try {
    const socket = await open(port);
    const answer = collect(socket);
    socket.write(head('/slow-handler', 10) + '0123456789');
    const text = await answer;
    assert.match(text, /^HTTP\/1\.1 200 /);
    assert.match(text, /\{"received":10\}$/);
  } finally {
    await app.close();
  }
});
