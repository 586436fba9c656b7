// Cross-cutting HTTP behaviour shared by every route: authentication and route access,
// onadata's headers (Allow, Vary, Cache-Control, ETag, security headers), error bodies,
// 404/405 answers and the `.json` format suffix.
import { hash } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import type { AppDeps, RequestContext } from '../context.ts';
import type {} from '@fastify/swagger';
import { AppError, errors, isAppError, type FieldErrors } from '../errors.ts';
import { checkRouteAccess, ROUTE_ACCESS_VALUES } from '../access/index.ts';
import type { AuthenticatorRegistry } from './authenticate.ts';
import './fastify-types.ts';
import { readMultipartFields } from './multipart.ts';

const ALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
const ETAG_MAX_BYTES = 256 * 1024;

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** OpenRosa's response envelope around one message (errors, and plain notices like duplicates). */
export function openRosaMessage(message: string, nature = ''): string {
  return `<?xml version='1.0' encoding='UTF-8' ?>\n<OpenRosaResponse xmlns="http://openrosa.org/http/response"><message nature="${escapeXml(nature)}">${escapeXml(message)}</message></OpenRosaResponse>`;
}

/**
 * An attachment's Content-Disposition (RFC 6266): a plain-ASCII `filename` for old clients and the
 * real name, percent-encoded UTF-8, in `filename*` (raw UTF-8 in a header reads as Latin-1).
 * `fallback` replaces the plain name, e.g. onadata's `download.csv` for exports.
 */
export function attachmentDisposition(fileName: string, fallback?: string): string {
  const plain = fallback ?? fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${plain}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

/** `/api/v1/forms.json` and `/api/v1/forms/1.json/` are the same resources without the suffix. */
export function stripFormatSuffix(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const match = /^(\/api\/v1\/.+?)\.json\/?$/.exec(path);
  if (!match?.[1]) return url;
  return match[1] + (q < 0 ? '' : url.slice(q));
}

export function requestBaseUrl(deps: AppDeps, request: FastifyRequest): string {
  return deps.config.baseUrl ?? `${request.protocol}://${request.host}`;
}

function validationToFieldErrors(error: FastifyError): FieldErrors {
  const fields: FieldErrors = {};
  for (const item of error.validation ?? []) {
    const params = item.params as Record<string, unknown>;
    const missing = typeof params['missingProperty'] === 'string' ? params['missingProperty'] : undefined;
    const field = missing ?? (item.instancePath.replace(/^\//, '').split('/')[0] || 'non_field_errors');
    let message = item.message ?? 'Invalid value.';
    if (item.keyword === 'required') message = 'This field is required.';
    else if (item.keyword === 'type' && params['type'] === 'boolean') message = 'Must be a valid boolean.';
    else if (item.keyword === 'type' && params['type'] === 'integer') message = 'A valid integer is required.';
    else if (item.keyword === 'type' && params['type'] === 'string') message = 'Not a valid string.';
    (fields[field] ??= []).push(message);
  }
  return fields;
}

/**
 * PostgreSQL refuses some input that passed our checks (NUL characters, numbers out of range,
 * over-long values in an index): that is the client's input, so a 400, never a 500.
 */
function databaseInputProblem(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : '';
  switch (code) {
    case '22P05':
    case '22021':
      return 'Null characters are not allowed.';
    case '22003':
      return 'A number in the request is out of range.';
    case '22001':
    case '54000':
      return 'A value in the request is too long.';
    case '22P02':
    case '22007':
    case '22008':
      return 'A value in the request has the wrong format.';
    default:
      return undefined;
  }
}

const WRITE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);

const MULTIPART_PROBLEM = /^(Multipart: Boundary not found|Unexpected end of (form|file|multipart data)|Part terminated early|Malformed (part header|urlencoded form)|Malformed multipart)/;

/** Any thrown error → the onadata-compatible status and body. Unknown errors become a bare 500. */
export function toAppError(error: unknown, request: FastifyRequest): AppError {
  if (isAppError(error)) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) return errors.invalidFields(validationToFieldErrors(fastifyError));
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType(String(request.headers['content-type'] ?? '').split(';')[0] ?? '');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.jsonParseError(fastifyError.message);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
      return errors.bodyTooLarge();
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errors.contentLengthMismatch();
  }
  // busboy's complaints about a broken multipart body (a client that dropped off mid-upload, or no
  // boundary) are plain Errors: the request was bad, not the server.
  if (error instanceof Error && MULTIPART_PROBLEM.test(error.message)) return errors.multipartParseError(error.message);
  const dbProblem = databaseInputProblem(error);
  if (dbProblem) return errors.unusableValue(dbProblem);
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) return errors.jsonParseError(error.message);
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return errors.requestRefused(fastifyError.statusCode, fastifyError.message);
  }
  return errors.serverError();
}

/** A non-empty `temp_token` query parameter (the first, when repeated). */
function tempTokenParameter(query: unknown): string | undefined {
  if (typeof query !== 'object' || query === null) return undefined;
  const raw = (query as Record<string, unknown>)['temp_token'];
  const value = Array.isArray(raw) ? (raw as unknown[])[0] : raw;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function installConventions(app: FastifyInstance, deps: AppDeps, authenticators: AuthenticatorRegistry): void {
  const allowed = new Map<string, Set<string>>();

  app.addHook('onRoute', (route) => {
    if (route.url === '*' || route.url.startsWith('/api/docs')) return;
    const access = route.config?.access;
    if (!access || !ROUTE_ACCESS_VALUES.includes(access)) {
      throw new Error(`route ${String(route.method)} ${route.url} declares no access rule`);
    }
    if (route.config?.methodNotAllowed || route.config?.optionsRoute) return;
    const methods = allowed.get(route.url) ?? new Set<string>();
    for (const method of [route.method].flat()) {
      methods.add(method);
      if (method === 'GET') methods.add('HEAD');
    }
    methods.add('OPTIONS');
    allowed.set(route.url, methods);
  });

  app.decorateRequest('ctx', null as unknown as RequestContext);

  app.addHook('onRequest', async (request) => {
    const ip = request.ip;
    const base = { ...deps, baseUrl: requestBaseUrl(deps, request), ip, challenge: authenticators.challengeFor(request.headers.authorization) };
    const config = request.routeOptions.config;
    // Routes that only answer 404/405 never look at credentials; OAuth client endpoints read
    // their own (a client's Basic credentials are no user's password).
    if (!config.access || config.methodNotAllowed || config.optionsRoute || config.clientAuthentication) {
      request.ctx = { ...base, actor: { kind: 'anonymous' } };
      return;
    }
    let actor = await authenticators.authenticate(deps, request.headers.authorization, ip, {
      method: request.method,
      uri: request.originalUrl,
      headers: request.headers,
      baseUrl: base.baseUrl,
    });
    const urlKey = config.urlTempToken && actor.kind === 'anonymous' ? tempTokenParameter(request.query) : undefined;
    if (urlKey !== undefined) actor = await authenticators.authenticateTempTokenParameter(deps, urlKey);
    request.ctx = { ...base, actor };
    checkRouteAccess(config.access, actor, base.challenge);
  });

  // Routes that take fields read a multipart form like a urlencoded one, and an absent body on a
  // write as an empty one, as DRF does; upload routes read their multipart bodies themselves.
  app.addHook('preValidation', async (request) => {
    const config = request.routeOptions.config;
    if (config.upload || config.methodNotAllowed || config.optionsRoute) return;
    if (request.isMultipart()) request.body = await readMultipartFields(request, deps.config.bodyLimitBytes);
    else if (request.body === undefined && WRITE_METHODS.has(request.method)) request.body = {};
  });

  // The Allow value of each route, worked out once (routes are all registered before serving).
  const allowHeaders = new Map<string, string>();
  const allowHeaderOf = (url: string): string | undefined => {
    let header = allowHeaders.get(url);
    if (header === undefined) {
      const methods = allowed.get(url);
      if (!methods) return undefined;
      header = ALL_METHODS.flatMap((m) => (methods.has(m) ? (m === 'GET' ? ['GET', 'HEAD'] : [m]) : [])).join(', ');
      allowHeaders.set(url, header);
    }
    return header;
  };
  const maxAge = `max-age=${deps.config.cacheMaxAgeSeconds}`;
  const privateMaxAge = `private, ${maxAge}`;
  // Devices split a submission whose files add up to more into several requests.
  const submissionLimit = String(deps.config.submissionLimitBytes);

  app.addHook('onSend', async (request, reply, payload) => {
    // routeOptions is rebuilt on every access: read it once.
    const { url, config } = request.routeOptions;
    const allow = url ? allowHeaderOf(url) : undefined;
    if (allow) reply.header('allow', allow);
    const vary = reply.getHeader('vary');
    reply.headers({
      vary: vary ? `${String(vary)}, Accept` : 'Accept',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'SAMEORIGIN',
      'referrer-policy': 'same-origin',
    });
    if (config.openrosa) reply.headers({ 'x-openrosa-version': '1.0', 'x-openrosa-accept-content-length': submissionLimit });

    const isGet = request.method === 'GET' || request.method === 'HEAD';
    // A write has committed by now: cached list responses computed before it are stale.
    if (!isGet && request.method !== 'OPTIONS') deps.responseCache.invalidate();
    const status = reply.statusCode;
    const cache = config.cache ?? 'none';
    if (isGet && status >= 200 && status <= 202 && cache !== 'none' && !reply.hasHeader('cache-control')) {
      reply.header('cache-control', cache === 'private' ? privateMaxAge : maxAge);
    }
    // Hashing a body costs as much as writing it: large bodies (long lists, files) go without.
    const size = typeof payload === 'string' ? payload.length : Buffer.isBuffer(payload) ? payload.byteLength : Infinity;
    if (isGet && status === 200 && size <= ETAG_MAX_BYTES && !reply.hasHeader('etag')) {
      const etag = `"${hash('md5', payload as string | Buffer)}"`;
      reply.header('etag', etag);
      const match = request.headers['if-none-match'];
      if (match && match.split(',').some((tag) => tag.trim() === etag || tag.trim() === `W/${etag}`)) {
        reply.code(304);
        return '';
      }
    }
    return payload;
  });

  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error, request);
    if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
    // OpenRosa clients read XML; JSON submissions to the same routes get JSON errors.
    const jsonRequest = String(request.headers['content-type'] ?? '').startsWith('application/json');
    if (request.routeOptions.config.openrosa && !jsonRequest) {
      const body = appError.body as Record<string, unknown>;
      const message = String(body['detail'] ?? body['message'] ?? body['error'] ?? JSON.stringify(body));
      reply.code(appError.status).headers(appError.headers).type('text/xml; charset=utf-8').send(openRosaMessage(message));
      return;
    }
    // A download that failed before its first byte has its file's type and name set already.
    reply.removeHeader('content-disposition');
    reply.code(appError.status).headers(appError.headers).type('application/json; charset=utf-8').send(appError.body);
  });

  app.setNotFoundHandler((_request, reply) => {
    reply.code(404).send({ detail: 'Not found.' });
  });

  /**
   * Call after every route is registered: answers other methods on known paths with 405, and
   * OPTIONS on each with 200, its Allow header and a short description as DRF gives (a CORS
   * preflight gets its headers from the CORS plugin's hook on the way).
   */
  app.decorate('addMethodNotAllowedRoutes', () => {
    for (const [url, methods] of allowed) {
      app.route({
        method: 'OPTIONS',
        url,
        config: { access: 'anyone', optionsRoute: true },
        schema: { hide: true },
        handler: async () => ({
          name: url,
          renders: ['application/json'],
          parses: ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'],
        }),
      });
      for (const method of ALL_METHODS) {
        if (methods.has(method)) continue;
        app.route({
          method,
          url,
          config: { access: 'anyone', methodNotAllowed: true },
          schema: { hide: true },
          handler: async (request: FastifyRequest) => {
            throw errors.methodNotAllowed(request.method);
          },
        });
      }
    }
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    addMethodNotAllowedRoutes(): void;
  }
}
