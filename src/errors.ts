// The one error catalogue: everything the API can refuse. Each entry is named by what went wrong
// and fixes its status, onadata's body shape and its message, so services and routes never shape
// error responses themselves. Entries are grouped by area in src/errors/; the body shapes
// (src/errors/shapes.ts) are private to the catalogue, and only it makes an AppError (lint
// refuses both elsewhere).
import { accountErrors } from './errors/accounts.ts';
import { commonErrors } from './errors/common.ts';
import { exportErrors } from './errors/exports.ts';
import { formErrors } from './errors/forms.ts';
import { formExtraErrors } from './errors/form-extras.ts';
import { importErrors } from './errors/imports.ts';
import { odataErrors } from './errors/odata.ts';
import { projectErrors } from './errors/projects.ts';
import { requestErrors } from './errors/requests.ts';
import { submissionErrors } from './errors/submissions.ts';

export { AppError, isAppError, type ErrorBody, type FieldErrors, type PublishIssue } from './errors/app-error.ts';
export { importRefusals } from './errors/imports.ts';

const areas = [
  commonErrors, requestErrors, accountErrors, projectErrors, formErrors, formExtraErrors,
  submissionErrors, exportErrors, importErrors, odataErrors,
] as const;

export const errors = Object.assign({}, ...areas) as typeof commonErrors &
  typeof requestErrors &
  typeof accountErrors &
  typeof projectErrors &
  typeof formErrors &
  typeof formExtraErrors &
  typeof submissionErrors &
  typeof exportErrors &
  typeof importErrors &
  typeof odataErrors;

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
