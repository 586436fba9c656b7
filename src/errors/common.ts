// Refusals every area answers the same way: not found, not allowed, fields that fail their checks.
import { detail, fields, list } from './shapes.ts';
import type { FieldErrors } from './app-error.ts';

export const commonErrors = {
  notFound: (text = 'Not found.') => detail(404, text),
  /** Django's get_object_or_404 wording for a model: `No XForm matches the given query.` */
  noMatch: (model: string) => detail(404, `No ${model} matches the given query.`),
  permissionDenied: (text = 'You do not have permission to perform this action.') => detail(403, text),
  /** Fields of a request that fail their checks, collected: `{"field": ["…"]}`. */
  invalidFields: (errors: FieldErrors) => fields(errors),
  /** A list body (bulk create) with a bad item: one field-error object per item, `{}` for good ones (DRF's ListSerializer). */
  invalidItems: (items: FieldErrors[]) => list(items),
} as const;
