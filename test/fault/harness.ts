// Shared by the fault suite (test/fault): an account and a form on a server process, requests over
// real HTTP, the server's peak memory from /proc, and the one-line reports each scenario prints.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { multipart, type MultipartFile } from '../helpers.ts';

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

/** Prints one scenario's figures on one line, e.g. `fault ingest: sent 400, acknowledged 213, …`. */
export function report(scenario: string, figures: Record<string, number | string>): void {
  const database = process.env['DATABASE_URL'] ? 'PostgreSQL' : 'PGlite';
  console.log(`fault ${scenario} [${database}]: ${Object.entries(figures).map(([name, value]) => `${name} ${value}`).join(', ')}`);
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
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** Body bytes the client handed to its socket before the exchange ended. */
  readonly sentBytes: number;
  /** Why sending stopped early: the connection's error, if any. */
  readonly error: string | undefined;
}

/**
 * Sends a request whose body is produced piece by piece (never held whole), with backpressure, and
 * keeps sending after an early answer, as a hostile client would, until the body ends or the
 * server closes the connection. Without `contentLength` the body goes chunked.
 */
export function streamRequest(url: string, options: { method?: string; headers?: Record<string, string>; contentLength?: number; body: Iterable<Buffer> | AsyncIterable<Buffer> }): Promise<StreamedAnswer> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.contentLength !== undefined) headers['content-length'] = String(options.contentLength);
    const req = httpRequest(url, { method: options.method ?? 'POST', headers, agent: false });
    let sentBytes = 0;
    let status = 0;
    let responseHeaders: IncomingHttpHeaders = {};
    let body = '';
    let error: string | undefined;
    let closed = false;
    let settled = false;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      resolve({ status, headers: responseHeaders, body, sentBytes, error });
    };
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      responseHeaders = res.headers;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        // An answer before the whole body was sent: stop once the server closes the connection.
        if (!req.writableFinished) req.destroy();
        settle();
      });
      res.on('error', settle);
    });
    req.on('error', (err) => {
      error = (err as NodeJS.ErrnoException).code ?? err.message;
      closed = true;
      // An answer may still be on its way in when the socket was reset by the server.
      setTimeout(settle, 200);
    });
    req.on('close', () => {
      closed = true;
      setTimeout(settle, 200);
    });
    void (async () => {
      for await (const chunk of options.body) {
        if (closed || req.destroyed) return;
        sentBytes += chunk.byteLength;
        if (!req.write(chunk)) {
          await new Promise<void>((drained) => {
            const done = (): void => {
              req.off('drain', done);
              req.off('close', done);
              drained();
            };
            req.on('drain', done);
            req.on('close', done);
          });
        }
      }
      if (!closed && !req.destroyed) req.end();
    })();
  });
}
