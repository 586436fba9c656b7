// The error every refusal is: a status, onadata's body for it, and any headers. Only the
// catalogue (src/errors.ts and src/errors/) makes them; everything else throws its entries.
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

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
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
