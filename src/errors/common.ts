// Refusals every area answers the same way: not found, not allowed, fields that fail their checks.
import { detail, fields, list } from './shapes.ts';
import type { FieldErrors } from './app-error.ts';

export const commonErrors = {
  notFound: () => detail(404, 'Not found.'),
  /** Django's get_object_or_404 wording for a model: `No XForm matches the given query.` */
  noMatch: (model: string) => detail(404, `No ${model} matches the given query.`),
  permissionDenied: () => detail(403, 'You do not have permission to perform this action.'),
  /** An object id that is not a positive 32-bit integer, to a signed-in caller (src/access/load.ts). */
  formIdInvalid: () => detail(400, 'Invalid form ID. It must be a positive integer'),
  projectIdInvalid: () => detail(400, 'Invalid value for project_id. It must be a positive integer.'),
  /** Fields of a request that fail their checks, collected: `{"field": ["…"]}`. */
  invalidFields: (errors: FieldErrors) => fields(errors),
  /** A list body (bulk create) with a bad item: one field-error object per item, `{}` for good ones (DRF's ListSerializer). */
  invalidItems: (items: FieldErrors[]) => list(items),
} as const;
