// Browser sessions on the API. The web app signs in once (POST /api/v1/session, or the /o/login/
// page) and its /api/ calls then carry the sealed session cookie instead of an Authorization
// header, so no token is ever handed to page scripts. A cookie is sent by the browser on its own,
// so every unsafe request it authenticates must prove it comes from our pages: the same origin
// (Origin, or Sec-Fetch-Site when Origin is absent) and an X-CSRFToken header equal to the
// HttpOnly CSRF cookie (double submission; the app reads the value from GET /api/v1/session).
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../context.ts';
import { errors } from '../errors.ts';
import { anonymous, type Principal } from '../access/principal.ts';
import { browserCookies } from '../lib/browser-cookies.ts';
import type { CredentialChecks } from './credentials.ts';
import { constantTimeEqual } from '../platform/secrets.ts';

export interface SessionAttempt {
  readonly method: string;
  /** The request target as sent (path and query). */
  readonly uri: string;
  readonly headers: IncomingHttpHeaders;
  /** The server's public address (BASE_URL, or the request's own scheme and host). */
  readonly baseUrl: string;
}

const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The OpenRosa addresses a web form uses (web/src/webform): its form list, XForm, manifest and
 * media (the form-scoped ones too), and its form-scoped submission. Devices never hold the
 * cookie, so for them nothing changes.
 */
const WEB_FORM_OPENROSA = [/^\/forms\/\d+\/(?:formList|form\.xml|xformsManifest|submission)(?:[?#]|$)/, /^\/[^/?#]+\/(?:forms\/\d+\/form\.xml|xformsManifest\/\d+|xformsMedia\/\d+\/[^/?#]+)(?:[?#]|$)/];

/** Only the API and the web forms' OpenRosa calls take the session: the /o/ pages check their own form fields. */
export function sessionApplies(uri: string): boolean {
  return uri === '/api/v1' || uri.startsWith('/api/v1/') || uri.startsWith('/api/v1?') || WEB_FORM_OPENROSA.some((pattern) => pattern.test(uri));
}

/**
 * Whether a page at `origin` is this server: its public address (BASE_URL), or the host the
 * browser sent the request to (the server reached by another name or address than BASE_URL's).
 */
function sameOrigin(origin: string, attempt: SessionAttempt): boolean {
  if (origin === new URL(attempt.baseUrl).origin) return true;
  const host = single(attempt.headers['host']);
  try {
    return host !== undefined && new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

/** Throws 403 for an unsafe request that did not come from one of our own pages. */
export function checkCsrf(attempt: SessionAttempt): void {
  if (SAFE_METHODS.has(attempt.method.toUpperCase())) return;
  const origin = single(attempt.headers['origin']);
  if (origin !== undefined && !sameOrigin(origin, attempt)) {
    throw errors.csrfOriginRejected(origin);
  }
  // Browsers that send no Origin still say where a request came from.
  const site = single(attempt.headers['sec-fetch-site']);
  if (origin === undefined && site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw errors.csrfCrossSite();
  }
  const cookie = browserCookies(single(attempt.headers['cookie'])).csrf;
  if (!cookie) throw errors.csrfCookieMissing();
  const token = single(attempt.headers['x-csrftoken']);
  if (!token) throw errors.csrfTokenMissing();
  if (!constantTimeEqual(cookie, token)) throw errors.csrfTokenIncorrect();
}

/**
 * The caller of an /api/ request that has no Authorization header: the session cookie's user, or
 * anonymous when there is no cookie or it is forged, expired, or outlived a password change (as
 * Django treats a stale session). An unsafe request with a genuine session must pass the CSRF checks.
 */
export async function authenticateSession(deps: AppDeps, checks: CredentialChecks, attempt: SessionAttempt): Promise<Principal> {
  if (!sessionApplies(attempt.uri)) return anonymous;
  const sealed = browserCookies(single(attempt.headers['cookie'])).session;
  if (!sealed) return anonymous;
  const user = await checks.sessionUser(deps, sealed);
  if (!user) return anonymous;
  checkCsrf(attempt);
  // A session is a password sign-in kept in a cookie: no scheme of its own is needed downstream.
  return { kind: 'user', user, scheme: 'basic' };
}

/**
 * What a session-authenticated answer adds. It depends on the cookie, so no shared cache may keep
 * it and the browser revalidates it (the app's own writes change it); and a 401 to the app's own
 * calls (X-Requested-With) challenges with a scheme for which browsers open no password dialog.
 */
export function installSessionReplies(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.headers.authorization !== undefined || !sessionApplies(request.originalUrl)) return payload;
    if (browserCookies(request.headers.cookie).session) {
      const vary = reply.getHeader('vary');
      reply.header('vary', vary ? `${String(vary)}, Cookie` : 'Cookie');
      if (request.method === 'GET' || request.method === 'HEAD') reply.header('cache-control', 'private, no-cache');
    }
    if (reply.statusCode === 401 && request.headers['x-requested-with'] === 'XMLHttpRequest') {
      reply.header('www-authenticate', 'Session realm="Gather"');
    }
    return payload;
  });
}
