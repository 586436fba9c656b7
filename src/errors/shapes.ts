// The bodies onadata answers refusals with, one builder per shape. Only the catalogue's area
// files use them (a lint rule refuses them elsewhere): services name the failure, not its shape.
import { AppError, type FieldErrors } from './app-error.ts';

/** DRF's usual body: `{"detail": "…"}`. */
export const detail = (status: number, text: string, headers: Readonly<Record<string, string>> = {}): AppError =>
  new AppError(status, { detail: text }, headers);

/** Field errors: `{"field": ["…"]}`. */
export const fields = (errors: FieldErrors): AppError => new AppError(400, errors);

/** One field's error. */
export const field = (name: string, message: string): AppError => fields({ [name]: [message] });

/** Errors raised inside a serializer's save(), or a list of per-item field errors: a bare list. */
export const list = (items: unknown[]): AppError => new AppError(400, items);

/** Endpoints that answer `{"message": "…"}`. */
export const message = (text: string, status = 400): AppError => new AppError(status, { message: text });

/** Endpoints that answer `{"error": "…"}`. */
export const error = (text: string, status = 400): AppError => new AppError(status, { error: text });

/** Any other body. */
export const body = (status: number, content: Record<string, unknown>, headers: Readonly<Record<string, string>> = {}): AppError =>
  new AppError(status, content, headers);
