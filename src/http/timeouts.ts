// Time limits on receiving a request, so that a client sending nothing (or next to nothing) cannot
// hold a connection and the memory behind it indefinitely. Node enforces the headers' and the whole
// request's limits; a pause in the body is watched here, and only while the body is arriving: a
// handler's own work (a slow query, an export being built) is never cut short by these limits.
import type { IncomingMessage, ServerOptions, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { ConnectionError, FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';

type TimeoutSettings = Pick<Config, 'headersTimeoutMs' | 'bodyIdleTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs'>;

/** Node checks the headers' and the whole request's limits on this period; at most 30 s (its default). */
function checkingInterval(settings: TimeoutSettings): number {
  const limits = [settings.headersTimeoutMs, settings.requestTimeoutMs].filter((ms) => ms > 0);
  return Math.min(30_000, Math.max(100, Math.floor(Math.min(...limits) / 4)));
}

/** The Fastify server options that carry the limits. */
export interface ServerTimeoutOptions {
  readonly connectionTimeout: number;
  readonly keepAliveTimeout: number;
  readonly requestTimeout: number;
  readonly http: ServerOptions;
  readonly clientErrorHandler: (error: ConnectionError, socket: Socket) => void;
}

export function serverTimeoutOptions(settings: TimeoutSettings): ServerTimeoutOptions {
  return {
    // No idle limit on the connection as a whole: it would also count a handler's own work.
    connectionTimeout: 0,
    keepAliveTimeout: settings.keepAliveTimeoutMs,
    requestTimeout: settings.requestTimeoutMs,
    http: {
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
      connectionsCheckingInterval: checkingInterval(settings),
    },
    clientErrorHandler: answerClientError,
  };
}

const REQUEST_TIMEOUT_BODY = JSON.stringify({ detail: 'The request was not received in time.' });

function rawResponse(status: number, reason: string, body: string): string {
  return (
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * Errors Node raises before a request reaches Fastify (unparsable request, headers too large, the
 * headers' or whole request's limit passed): answered in the API's `{"detail": …}` shape.
 */
function answerClientError(error: ConnectionError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') socket.write(rawResponse(408, 'Request Timeout', REQUEST_TIMEOUT_BODY));
    else if (error.code === 'HPE_HEADER_OVERFLOW') {
      socket.write(rawResponse(431, 'Request Header Fields Too Large', JSON.stringify({ detail: 'Request headers are too large.' })));
    } else socket.write(rawResponse(400, 'Bad Request', JSON.stringify({ detail: 'Malformed HTTP request.' })));
  }
  socket.destroy(error);
}

function hasBody(request: IncomingMessage): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
}

/**
 * Arms the socket's idle timer while the request's body is arriving. When it fires: a complete
 * body means the handler is at work (disarm); unread bytes waiting in the request mean the server
 * is behind, not the client (re-arm); otherwise the client has sent nothing for the whole period,
 * and gets a 408 and a closed connection, which also ends the handler's read of the body.
 */
function watchBody(request: IncomingMessage, response: ServerResponse, idleMs: number, log: FastifyBaseLogger): void {
  const socket = request.socket;
  socket.setTimeout(idleMs);
  response.on('timeout', () => {
    if (request.complete) {
      socket.setTimeout(0);
      return;
    }
    if (request.readableLength > 0) {
      socket.setTimeout(idleMs);
      return;
    }
    log.info(`no byte of the request body for ${idleMs / 1000} s: answered 408 and closed`);
    if (!response.headersSent && socket.writable) socket.write(rawResponse(408, 'Request Timeout', REQUEST_TIMEOUT_BODY));
    socket.destroySoon();
  });
}

export function installBodyIdleTimeout(app: FastifyInstance, idleMs: number): void {
  app.addHook('onRequest', (request, reply, done) => {
    // Requests injected in tests have no real socket to watch.
    if (request.raw.socket instanceof Socket && hasBody(request.raw) && !request.raw.complete) watchBody(request.raw, reply.raw, idleMs, request.log);
    done();
  });
}
