// The /o/ pages' cookies: a sealed session, and a CSRF token checked by double submission (the
// form carries the cookie's value; another site can neither read nor set it). Both are HttpOnly,
// SameSite=Lax, scoped to /o/, and Secure when the public address is https.
import { randomBytes } from 'node:crypto';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { constantTimeEqual } from '../../platform/secrets.ts';
import { SESSION_SECONDS } from './service.ts';

const SESSION_COOKIE = 'gather_session';
const CSRF_COOKIE = 'gather_csrf';
const CSRF_SECONDS = 7 * 86400;

function cookiesOf(request: FastifyRequest): Record<string, string | undefined> {
  return parseCookie(request.headers.cookie ?? '');
}

function setCookie(request: FastifyRequest, reply: FastifyReply, name: string, value: string, maxAge: number): void {
  const cookie = stringifySetCookie({
    name,
    value,
    maxAge,
    path: '/o/',
    httpOnly: true,
    sameSite: 'lax',
    secure: request.ctx.baseUrl.startsWith('https:'),
  });
  const existing = reply.getHeader('set-cookie');
  const list = existing === undefined ? [] : [existing].flat().map(String);
  reply.header('set-cookie', [...list, cookie]);
}

export function sessionCookie(request: FastifyRequest): string | undefined {
  return cookiesOf(request)[SESSION_COOKIE];
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, sealed: string): void {
  setCookie(request, reply, SESSION_COOKIE, sealed, SESSION_SECONDS);
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  setCookie(request, reply, SESSION_COOKIE, '', 0);
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
