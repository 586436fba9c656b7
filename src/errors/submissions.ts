// Refusals of submissions (OpenRosa and JSON) and of the data API.
import { body, detail, error, list } from './shapes.ts';

export const submissionErrors = {
  /** onadata turns a duplicate JSON submission into a validation error. */
  duplicateSubmission: () => list(['Duplicate submission']),
  /** A JSON submission body that is not `{"id": …, "submission": {…}}`, in onadata's body for the problem. */
  jsonSubmissionInvalid: (problem: { submission: string[] } | string[]) => (Array.isArray(problem) ? list(problem) : body(400, problem)),
  formInactive: () => detail(405, 'Form is inactive'),
  /** An edit whose record changed since the client read it. */
  submissionModified: () => detail(409, 'Submission has been modified since it was last fetched.'),
  permanentDeleteDisabled: () => error('Permanent submission deletion is not enabled for this server.'),
} as const;
