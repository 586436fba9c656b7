// The one error catalogue: everything the API can refuse. Each entry is named by what went wrong
// and fixes its status, onadata's body shape and its message, so services and routes never shape
// error responses themselves. Entries are grouped by area in src/errors/; the body shapes
// (src/errors/shapes.ts) are private to the catalogue, and only it makes an AppError (lint
// refuses both elsewhere).
import { AppError, type FieldErrors, type PublishIssue } from './errors/app-error.ts';
import { commonErrors } from './errors/common.ts';
import { requestErrors } from './errors/requests.ts';
import { submissionErrors } from './errors/submissions.ts';
import { formErrors } from './errors/forms.ts';
import { odataErrors } from './errors/odata.ts';

export { AppError, isAppError, type ErrorBody, type FieldErrors, type PublishIssue } from './errors/app-error.ts';

/** Entries named by their body's shape, for the areas not yet given entries of their own. */
const byShape = {
  parseError: (detail: string) => new AppError(400, { detail }),
  badRequest: (detail: string) => new AppError(400, { detail }),
  validation: (fields: FieldErrors) => new AppError(400, fields),
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
  /** export_async for a format this build does not make (onadata's 403 and body). */
  exportFormatNotSupported: () => new AppError(403, { details: 'Export format not supported' }),
  /** A Google Sheets export before the account authorised the provider: where to authorise. */
  spreadsheetAuthorizationNeeded: (url: string) => new AppError(403, { url, details: 'Google authorization needed' }),
  /** A refused record import: onadata's async_status body. */
  importFailed: (error: string, extra: Record<string, unknown> = {}) => new AppError(400, { job_status: 'FAILURE', error, ...extra }),
} as const;

const areas = [commonErrors, requestErrors, submissionErrors, formErrors, odataErrors, byShape] as const;

export const errors = Object.assign({}, ...areas) as typeof commonErrors &
  typeof requestErrors &
  typeof submissionErrors &
  typeof formErrors &
  typeof odataErrors &
  typeof byShape;

/** Entry names given twice across areas (the catalogue test keeps this empty). */
export function duplicateEntryNames(): string[] {
  const seen = new Set<string>();
  const twice: string[] = [];
  for (const area of areas) {
    for (const name of Object.keys(area)) {
      if (seen.has(name)) twice.push(name);
      seen.add(name);
    }
  }
  return twice;
}
