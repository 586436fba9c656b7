// The names of the browser's two cookies and how a Cookie header is read into them: the session
// check (src/http/session-auth.ts) reads them, the OAuth module (modules/oauth/cookies.ts) sets them.
import { parseCookie } from 'cookie';

export const SESSION_COOKIE = 'gather_session';
export const CSRF_COOKIE = 'gather_csrf';

/** The session and CSRF cookies of a Cookie header. */
export function browserCookies(header: string | undefined): { session: string | undefined; csrf: string | undefined } {
  const cookies = parseCookie(header ?? '');
  return { session: cookies[SESSION_COOKIE], csrf: cookies[CSRF_COOKIE] };
}
