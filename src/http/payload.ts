// Reading fields from a request body that may be JSON, form-encoded or multipart, with DRF's
// coercions and messages. Each reader records a field error and returns undefined on bad input.
import type { FieldErrors } from '../errors.ts';

export type Payload = Readonly<Record<string, unknown>>;

export function asPayload(body: unknown): Payload {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Payload) : {};
}

function fail(errors: FieldErrors, field: string, message: string): undefined {
  (errors[field] ??= []).push(message);
  return undefined;
}

export function has(payload: Payload, field: string): boolean {
  return Object.prototype.hasOwnProperty.call(payload, field) && payload[field] !== undefined;
}

/** A text field; numbers are accepted and turned into text, as DRF's CharField does. */
export function readString(payload: Payload, field: string, errors: FieldErrors, opts: { allowBlank?: boolean; required?: boolean } = {}): string | undefined {
  if (!has(payload, field) || payload[field] === null) {
    if (opts.required) return fail(errors, field, payload[field] === null ? 'This field may not be null.' : 'This field is required.');
    return undefined;
  }
  const value = payload[field];
  if (typeof value !== 'string' && typeof value !== 'number') return fail(errors, field, 'Not a valid string.');
  const text = String(value).trim();
  if (text === '' && opts.allowBlank === false) return fail(errors, field, 'This field may not be blank.');
  return text;
}

const TRUE_VALUES = new Set(['true', 'True', 'TRUE', '1', 'yes', 'on', 't', 'T', 'y', 'Y']);
const FALSE_VALUES = new Set(['false', 'False', 'FALSE', '0', 'no', 'off', 'f', 'F', 'n', 'N']);

export function parseBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 1 || value === 0) return value === 1;
  if (typeof value === 'string') {
    if (TRUE_VALUES.has(value)) return true;
    if (FALSE_VALUES.has(value)) return false;
  }
  return undefined;
}

export function readBoolean(payload: Payload, field: string, errors: FieldErrors): boolean | undefined {
  if (!has(payload, field)) return undefined;
  const value = parseBoolean(payload[field]);
  return value === undefined ? fail(errors, field, 'Must be a valid boolean.') : value;
}

/** A JSON object given as an object or as JSON text (form posts send text). */
export function readJsonObject(payload: Payload, field: string, errors: FieldErrors): Record<string, unknown> | undefined {
  if (!has(payload, field)) return undefined;
  let value = payload[field];
  if (typeof value === 'string') {
    try {
      value = value.trim() === '' ? {} : JSON.parse(value);
    } catch {
      return fail(errors, field, 'Value must be valid JSON.');
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail(errors, field, 'Value must be valid JSON.');
  }
  return value as Record<string, unknown>;
}
