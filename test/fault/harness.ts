// Shared by the fault suite (test/fault): an account and a form on a server process, requests over
// real HTTP, the server's peak memory from /proc, and the one-line reports each scenario prints.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { multipart, type MultipartFile } from '../helpers.ts';
import type { ServerProcess } from '../server-process.ts';

export const MB = 1024 * 1024;
export const PASSWORD = 'Fault-suite-pw-42';

/** Registers `username` and answers the `Token …` header value (Basic would hash on every request). */
export async function registerUser(baseUrl: string, username: string): Promise<string> {
  const registered = await fetch(`${baseUrl}/api/v1/profiles`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, email: `${username}@example.org`, first_name: username, password: PASSWORD }),
  });
  assert.equal(registered.status, 201, await registered.text());
  const me = await fetch(`${baseUrl}/api/v1/user`, { headers: { authorization: `Basic ${Buffer.from(`${username}:${PASSWORD}`).toString('base64')}` } });
  assert.equal(me.status, 200);
  return `Token ${((await me.json()) as { api_token: string }).api_token}`;
}

export async function postMultipart(baseUrl: string, path: string, auth: string | undefined, files: MultipartFile[], fields: Record<string, string> = {}): Promise<Response> {
  const body = multipart(fields, files);
  return fetch(`${baseUrl}${path}`, { method: 'POST', headers: { ...body.headers, ...(auth ? { authorization: auth } : {}) }, body: body.payload });
}

/** Publishes an XLSForm and answers its form id. */
export async function publish(baseUrl: string, auth: string, file: MultipartFile): Promise<number> {
  const res = await postMultipart(baseUrl, '/api/v1/forms', auth, [file]);
  const text = await res.text();
  assert.equal(res.status, 201, text);
  return Number((JSON.parse(text) as { formid: number }).formid);
}

export async function getJson<T>(baseUrl: string, path: string, auth: string): Promise<T> {
  const res = await fetch(`${baseUrl}${path}`, { headers: { authorization: auth } });
  const text = await res.text();
  assert.equal(res.status, 200, `${path}: ${text}`);
  return JSON.parse(text) as T;
}

/** The form's records, with only the given fields. */
export async function records<T>(baseUrl: string, auth: string, formId: number, fields: string[]): Promise<T[]> {
  return getJson<T[]>(baseUrl, `/api/v1/data/${formId}?fields=${encodeURIComponent(JSON.stringify(fields))}`, auth);
}

const IMPORT_FIXTURES = join(import.meta.dirname, '../fixtures/imports');

/** The form the record imports go to (test/fixtures/imports/tutorial.xlsx). */
export function tutorialForm(): MultipartFile {
  return { name: 'xls_file', fileName: 'tutorial.xlsx', content: readFileSync(join(IMPORT_FIXTURES, 'tutorial.xlsx')) };
}

/**
 * A CSV of records for the tutorial form: good.csv's rows over and over, one a uuid of `rows`
 * (its instanceID), or `rows` new records without one.
 */
export function tutorialCsv(rows: readonly string[] | number): string {
  const [header = '', ...lines] = readFileSync(join(IMPORT_FIXTURES, 'good.csv'), 'utf8').trim().split('\n');
  const columns = header.split(',');
  const instanceId = columns.indexOf('meta/instanceID');
  const uuidColumn = columns.indexOf('_uuid');
  const uuids = typeof rows === 'number' ? Array.from({ length: rows }, () => '') : rows;
  const body = uuids.map((uuid, i) =>
    (lines[i % lines.length] ?? '')
      .split(',')
      .map((value, c) => (c === instanceId ? (uuid ? `uuid:${uuid}` : '') : c === uuidColumn ? uuid : value))
      .join(','),
  );
  return `${header}\n${body.join('\n')}\n`;
}

/** Polls until `check` answers a value (not undefined), or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** The database the suite runs on, as the printed reports name it. */
function databaseName(): string {
  return process.env['DATABASE_URL'] ? 'PostgreSQL' : 'PGlite';
}

/** Prints one scenario's figures on one line, e.g. `fault ingest: sent 400, acknowledged 213, …`. */
export function report(scenario: string, figures: Record<string, number | string>): void {
  console.log(`fault ${scenario} [${databaseName()}]: ${Object.entries(figures).map(([name, value]) => `${name} ${value}`).join(', ')}`);
}

/** One printed row of a memory scenario: the peak rise an input caused, against its limit. */
export function memoryRow(limitBytes: number, input: string, answer: string, riseBytes: number): string {
  return `fault memory [${databaseName()}] peak memory +${megabytes(riseBytes)} (limit ${megabytes(limitBytes)}), ${input}: ${answer}`;
}

/** The server process a memory scenario measures, which must be running. */
export function runningServer(server: ServerProcess | undefined): { server: ServerProcess; pid: number } {
  assert.ok(server, 'the server is running');
  assert.ok(server.child.pid, 'the server process has a pid');
  return { server, pid: server.child.pid };
}

function statusField(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(match?.[1], `${field} in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

export interface PeakRise<T> {
  readonly result: T;
  /** Resident size when the input was sent. */
  readonly beforeBytes: number;
  /** The highest resident size while it was handled, less `beforeBytes`. */
  readonly riseBytes: number;
}

/**
 * Runs `action` against the server process `pid` and answers how far its resident memory rose at
 * the most: the kernel's high-water mark (VmHWM) is reset to the current size first (clear_refs 5).
 */
export async function peakRise<T>(pid: number, action: () => Promise<T>): Promise<PeakRise<T>> {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  const beforeBytes = statusField(pid, 'VmRSS');
  const result = await action();
  return { result, beforeBytes, riseBytes: Math.max(0, statusField(pid, 'VmHWM') - beforeBytes) };
}

export function megabytes(bytes: number): string {
  return `${(bytes / MB).toFixed(1)} MB`;
}

export interface StreamedAnswer {
  /** The HTTP status, or 0 when the connection ended without an answer. */
  readonly status: number;
  /** The answer after its head, as received (not decoded). */
  readonly body: string;
  /** Body bytes the client handed to its socket before the exchange ended. */
  readonly sentBytes: number;
  /** Why sending stopped early: the connection's error, if any. */
  readonly error: string | undefined;
}

/** The answer's head and body once it is whole (by its Content-Length), else undefined. */
function wholeAnswer(text: string): { status: number; body: string } | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
  const body = text.slice(end + 4);
  if (!length || Buffer.byteLength(body, 'latin1') < Number(length[1])) return undefined;
  return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1] ?? 0), body };
}

/**
 * Sends a request over a raw socket, its body produced piece by piece (never held whole) with
 * backpressure, and goes on sending after an early answer, as a hostile client would, until the
 * body ends or the server closes the connection; whatever the server answered is read throughout,
 * so an answer sent before a reset is not lost. Without `contentLength` the body goes chunked.
 */
export function streamRequest(url: string, options: { method?: string; headers?: Record<string, string>; contentLength?: number; body: Iterable<Buffer> | AsyncIterable<Buffer> }): Promise<StreamedAnswer> {
  const target = new URL(url);
  const chunked = options.contentLength === undefined;
  const lines = [`${options.method ?? 'POST'} ${target.pathname}${target.search} HTTP/1.1`, `Host: ${target.host}`, 'Connection: close'];
  lines.push(chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${options.contentLength}`);
  for (const [name, value] of Object.entries(options.headers ?? {})) lines.push(`${name}: ${value}`);
  return new Promise((resolve) => {
    let received = '';
    let sentBytes = 0;
    let error: string | undefined;
    let closed = false;
    let settled = false;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      closed = true;
      socket.destroy();
      const whole = wholeAnswer(received);
      const end = received.indexOf('\r\n\r\n');
      resolve({
        status: whole?.status ?? Number(/^HTTP\/1\.1 (\d{3}) /.exec(received)?.[1] ?? 0),
        body: whole?.body ?? (end < 0 ? '' : received.slice(end + 4)),
        sentBytes,
        error,
      });
    };
    const socket = connect(Number(target.port), target.hostname);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error ??= err.code ?? err.message;
      closed = true;
    });
    socket.on('close', settle);
    const write = async (bytes: Buffer | string): Promise<void> => {
      // Node drops the socket, and an answer already received but not yet read, on a failed write:
      // letting pending reads run before each write keeps an answer sent just before a reset.
      await new Promise((r) => setImmediate(r));
      if (closed || socket.destroyed) return;
      if (!socket.write(bytes)) {
        await new Promise<void>((drained) => {
          const done = (): void => {
            socket.off('drain', done);
            socket.off('close', done);
            drained();
          };
          socket.on('drain', done);
          socket.on('close', done);
        });
      }
    };
    socket.once('connect', () => {
      void (async () => {
        await write(`${lines.join('\r\n')}\r\n\r\n`);
        for await (const chunk of options.body) {
          if (closed || socket.destroyed) return;
          sentBytes += chunk.byteLength;
          await write(chunked ? Buffer.concat([Buffer.from(`${chunk.byteLength.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk);
        }
        if (chunked) await write('0\r\n\r\n');
        // The whole body is sent: wait for the answer, then hang up.
        const deadline = Date.now() + 120_000;
        while (!closed && !wholeAnswer(received) && Date.now() < deadline) await sleep(20);
        settle();
      })();
    });
  });
}
