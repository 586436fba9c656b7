// Refusals of the HTTP layer: credentials, CSRF, bodies too large or malformed, unknown methods.
import { detail } from './shapes.ts';

export const requestErrors = {
  notAuthenticated: (challenge: string) => detail(401, 'Authentication credentials were not provided.', { 'www-authenticate': challenge }),
  /** A Digest header the server cannot accept (protocol problem, stale nonce), in the checker's words. */
  digestRefused: (problem: string, challenge: string) => detail(401, problem, { 'www-authenticate': challenge }),
  /** An API token (`Token …`) refused; onadata words each reason. */
  apiTokenRefused: (reason: 'unknown' | 'inactive' | 'expired') =>
    detail(401, reason === 'inactive' ? 'User inactive or deleted.' : 'Invalid token.', { 'www-authenticate': 'Token' }),
  /** A temporary token (header or `temp_token` parameter) refused, in onadata's words (no full stops). */
  tempTokenRefused: (reason: 'unknown' | 'inactive' | 'expired') =>
    detail(401, reason === 'inactive' ? 'User inactive or deleted' : reason === 'expired' ? 'Token expired' : 'Invalid token', {
      'www-authenticate': 'TempToken',
    }),
  tokenHeaderEmpty: (challenge: string) => detail(401, 'Invalid token header. No credentials provided.', { 'www-authenticate': challenge }),
  tokenHeaderHasSpaces: (challenge: string) =>
    detail(401, 'Invalid token header. Token string should not contain spaces.', { 'www-authenticate': challenge }),
  tokenHeaderHasInvalidCharacters: (challenge: string) =>
    detail(401, 'Invalid token header. Token string should not contain invalid characters.', { 'www-authenticate': challenge }),
  basicHeaderEmpty: (challenge: string) => detail(401, 'Invalid basic header. No credentials provided.', { 'www-authenticate': challenge }),
  basicHeaderNotBase64: (challenge: string) =>
    detail(401, 'Invalid basic header. Credentials not correctly base64 encoded.', { 'www-authenticate': challenge }),
  wrongPassword: (challenge: string) => detail(401, 'Invalid username/password.', { 'www-authenticate': challenge }),
  /** A Digest login that failed, with the attempts left before the account is locked. */
  wrongPasswordWithAttemptsLeft: (remaining: number, lockoutMinutes: number, challenge: string) =>
    detail(
      401,
      `Invalid username/password. For security reasons, after ${remaining} more failed login attempts you'll have to wait ${lockoutMinutes} minutes before trying again.`,
      { 'www-authenticate': challenge },
    ),
  accessTokenRefused: (inactiveUser: boolean, challenge: string) =>
    detail(401, inactiveUser ? 'User inactive or deleted.' : 'Invalid or expired access token.', { 'www-authenticate': challenge }),
  throttled: (seconds: number) =>
    detail(429, `Request was throttled. Expected available in ${seconds} second${seconds === 1 ? '' : 's'}.`, { 'retry-after': String(seconds) }),
  /** A browser-session write from an origin not trusted (DRF's wording). */
  csrfOriginRejected: (origin: string) => detail(403, `CSRF Failed: Origin checking failed - ${origin} does not match any trusted origins.`),
  csrfCrossSite: () => detail(403, 'CSRF Failed: the request came from another site.'),
  csrfCookieMissing: () => detail(403, 'CSRF Failed: CSRF cookie not set.'),
  csrfTokenMissing: () => detail(403, 'CSRF Failed: CSRF token missing.'),
  csrfTokenIncorrect: () => detail(403, 'CSRF Failed: CSRF token incorrect.'),
  /** The web app's files are missing: its build failed or never ran. */
  webAppNotBuilt: () => detail(503, 'The web app is not built: run npm run build:web.'),
  methodNotAllowed: (method: string) => detail(405, `Method "${method}" not allowed.`),
  unsupportedMediaType: (type: string) => detail(415, `Unsupported media type "${type}" in request.`),
  jsonParseError: (problem: string) => detail(400, `JSON parse error - ${problem}`),
  multipartParseError: (problem: string) => detail(400, `Multipart form parse error - ${problem}`),
  multipartBoundaryMissing: () => detail(400, 'Multipart form parse error - Multipart: Boundary not found'),
  multipartMalformed: () => detail(400, 'The multipart body is malformed.'),
  /** A body over the server's own limit, whose size was not known before it was read. */
  bodyTooLarge: () => detail(413, 'Request body is too large.'),
  bodyLargerThan: (limit: number) => detail(413, `Request body is larger than ${limit} bytes.`),
  fileTooLarge: (fileName: string, limit: number) => detail(413, `The file "${fileName}" is too large: the limit is ${limit} bytes.`),
  /** A multipart body with more parts (files or fields) than a request may carry. */
  tooManyParts: () => detail(413, 'Request body is too large: it has too many parts.'),
  contentLengthMismatch: () => detail(400, 'Request body size did not match Content-Length.'),
  bodyCutShort: () => detail(400, 'The request body was cut short.'),
  /** A value the database cannot take (a number out of range, a NUL in text), in its words. */
  unusableValue: (problem: string) => detail(400, problem),
  /** Any other client error Fastify raised, with its status and message. */
  requestRefused: (status: number, message: string) => detail(status, message),
  serverError: () => detail(500, 'A server error occurred.'),
  invalidPage: () => detail(404, 'Invalid page.'),
} as const;
