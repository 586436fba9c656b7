// The one error catalogue. Each entry fixes the status and the onadata-compatible body, so
// handlers and services never shape error responses themselves.
export type ErrorBody = Record<string, unknown> | unknown[];

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(typeof body === 'object' && body !== null && 'detail' in body ? String(body.detail) : JSON.stringify(body));
  }
}

/** Field errors as DRF renders them: `{"field": ["message", …]}`. */
export type FieldErrors = Record<string, string[]>;

/** One converter error with where it is in the XLSForm, when the converter knows (publish refusals' `errors`). */
export interface PublishIssue {
  message: string;
  sheet?: string;
  row?: number;
  column?: string;
}

export const errors = {
  notAuthenticated: (challenge: string) =>
    new AppError(401, { detail: 'Authentication credentials were not provided.' }, { 'www-authenticate': challenge }),
  authenticationFailed: (detail: string, challenge: string) =>
    new AppError(401, { detail }, { 'www-authenticate': challenge }),
  permissionDenied: (detail = 'You do not have permission to perform this action.') =>
    new AppError(403, { detail }),
  /** A browser-session write without the CSRF token of its cookie, or from another site (DRF's wording). */
  csrfFailed: (reason: string) => new AppError(403, { detail: `CSRF Failed: ${reason}` }),
  /** The web app's files are missing: its build failed or never ran. */
  webAppNotBuilt: () => new AppError(503, { detail: 'The web app is not built: run npm run build:web.' }),
  notFound: (detail = 'Not found.') => new AppError(404, { detail }),
  noMatch: (model: string) => new AppError(404, { detail: `No ${model} matches the given query.` }),
  methodNotAllowed: (method: string) => new AppError(405, { detail: `Method "${method}" not allowed.` }),
  unsupportedMediaType: (type: string) =>
    new AppError(415, { detail: `Unsupported media type "${type}" in request.` }),
  parseError: (detail: string) => new AppError(400, { detail }),
  badRequest: (detail: string) => new AppError(400, { detail }),
  validation: (fields: FieldErrors) => new AppError(400, fields),
  /** A list body (bulk create) with a bad item: one field-error object per item, `{}` for good ones, as DRF's ListSerializer answers. */
  listValidation: (items: FieldErrors[]) => new AppError(400, items),
  /** Errors onadata raises inside a serializer's save(): a bare list of messages. */
  saveFailed: (...messages: string[]) => new AppError(400, messages),
  /** Endpoints that answer `{"error": "…"}` (change_password). */
  errorKey: (message: string) => new AppError(400, { error: message }),
  /** change_password's validator failures: `{"errors": [...]}`. */
  passwordRejected: (problems: string[]) => new AppError(400, { errors: problems }),
  /** A form that could not be published (XLSForm errors): onadata's alert body. */
  publishFailed: (text: string, located?: readonly PublishIssue[]) =>
    new AppError(400, { type: 'alert-error', text, ...(located?.length ? { errors: located } : {}) }),
  /** Some form endpoints answer `{"message": "…"}`. */
  message: (text: string, status = 400) => new AppError(status, { message: text }),
  throttled: (seconds: number) =>
    new AppError(
      429,
      { detail: `Request was throttled. Expected available in ${seconds} second${seconds === 1 ? '' : 's'}.` },
      { 'retry-after': String(seconds) },
    ),
  /** export_async for a format this build does not make (onadata's 403 and body). */
  exportFormatNotSupported: () => new AppError(403, { details: 'Export format not supported' }),
  /** A Google Sheets export before the account authorised the provider: where to authorise. */
  spreadsheetAuthorizationNeeded: (url: string) => new AppError(403, { url, details: 'Google authorization needed' }),
  /** A refused record import: onadata's async_status body. */
  importFailed: (error: string, extra: Record<string, unknown> = {}) => new AppError(400, { job_status: 'FAILURE', error, ...extra }),
  payloadTooLarge: (limit: number) => new AppError(413, { detail: `Request body is larger than ${limit} bytes.` }),
  fileTooLarge: (fileName: string, limit: number) => new AppError(413, { detail: `The file "${fileName}" is too large: the limit is ${limit} bytes.` }),
  /** A multipart body with more parts (files or fields) than a request may carry. */
  tooManyParts: () => new AppError(413, { detail: 'Request body is too large: it has too many parts.' }),
} as const;

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
