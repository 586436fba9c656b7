// The browser's cookies: a sealed session, and a CSRF token checked by double submission (the
// /o/ forms carry the cookie's value, the web app sends it as X-CSRFToken; another site can neither
// read nor set it). Both are HttpOnly, SameSite=Lax, Secure when the public address is https, and
// scoped to the whole site: the /o/ pages and the web app's /api/v1 calls share one sign-in.
import { randomBytes } from 'node:crypto';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { constantTimeEqual } from '../../platform/secrets.ts';
import { CSRF_COOKIE, SESSION_COOKIE } from '../../lib/browser-cookies.ts';
import { SESSION_SECONDS } from './service.ts';

const CSRF_SECONDS = 7 * 86400;

function cookiesOf(request: FastifyRequest): Record<string, string | undefined> {
  return parseCookie(request.headers.cookie ?? '');
}

function setCookie(request: FastifyRequest, reply: FastifyReply, name: string, value: string, maxAge: number, path = '/'): void {
  const cookie = stringifySetCookie({
    name,
    value,
    maxAge,
    path,
    httpOnly: true,
    sameSite: 'lax',
    secure: request.ctx.baseUrl.startsWith('https:'),
  });
  // Fastify adds each Set-Cookie to those already set.
  reply.header('set-cookie', cookie);
}

export function sessionCookie(request: FastifyRequest): string | undefined {
  return cookiesOf(request)[SESSION_COOKIE];
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, sealed: string): void {
  clearLegacySession(request, reply);
  setCookie(request, reply, SESSION_COOKIE, sealed, SESSION_SECONDS);
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  clearLegacySession(request, reply);
  setCookie(request, reply, SESSION_COOKIE, '', 0);
}

/** Sessions were once scoped to /o/: such a cookie would shadow the site-wide one there. */
function clearLegacySession(request: FastifyRequest, reply: FastifyReply): void {
  setCookie(request, reply, SESSION_COOKIE, '', 0, '/o/');
}

/** The browser's CSRF token, set now if it has none; forms embed it. */
export function csrfToken(request: FastifyRequest, reply: FastifyReply): string {
  const existing = cookiesOf(request)[CSRF_COOKIE];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomBytes(32).toString('base64url');
  setCookie(request, reply, CSRF_COOKIE, token, CSRF_SECONDS);
  return token;
}

/** Whether a form post carries the same CSRF token as its cookie. */
export function csrfValid(request: FastifyRequest, submitted: string | undefined): boolean {
  const cookie = cookiesOf(request)[CSRF_COOKIE];
  return cookie !== undefined && cookie !== '' && submitted !== undefined && constantTimeEqual(cookie, submitted);
}
