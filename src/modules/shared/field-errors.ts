// A service's field errors for one request: those a route's input carries (found while reading the
// body), to which the service adds those of its own checks and lookups before answering one 400.
import type { FieldErrors } from '../../errors.ts';

/** A copy of the input's field errors, for the service to add to. */
export function fieldErrorsOf(input: { readonly fieldErrors: FieldErrors }): FieldErrors {
  return Object.fromEntries(Object.entries(input.fieldErrors).map(([field, messages]) => [field, [...messages]]));
}
