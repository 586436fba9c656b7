// Refusals of submissions (OpenRosa and JSON) and of the data API.
import { body, detail, error, list } from './shapes.ts';

export const submissionErrors = {
  // Receiving a submission.
  noXmlSubmissionFile: () => detail(400, 'No XML submission file.'),
  /** A submission without a form id on its root: onadata's wording for XML it cannot place. */
  submissionXmlMalformed: () => detail(400, 'Improperly formatted XML.'),
  /** The parser's refusal of the instance XML (malformed, empty, too deep), in its words. */
  submissionUnreadable: (problem: string) => detail(400, problem),
  /** The instance's bytes do not match the checksum its sender gave. */
  submissionCorrupted: () => detail(400, 'File likely corrupted during transmission, please try later.'),
  unencryptedSubmission: () => detail(400, 'Unencrypted submissions are not allowed for encrypted forms.'),
  attachmentNameTooLong: () => detail(400, 'Attachment file name exceeds 100 chars'),
  submissionNotAllowed: (username: string, owner: string, formTitle: string) =>
    detail(403, `${username} is not allowed to make submissions to ${owner}'s ${formTitle} form.`),
  editNotAllowed: (username: string, owner: string, formTitle: string) =>
    detail(403, `${username} is not allowed to make edit submissions to ${owner}'s ${formTitle} form.`),
  filesToOthersRecord: (username: string) => detail(403, `${username} is not allowed to add files to another submitter's record.`),
  /** onadata turns a duplicate JSON submission into a validation error. */
  duplicateSubmission: () => list(['Duplicate submission']),
  /** A JSON submission body that is not `{"id": …, "submission": {…}}`, in onadata's body for the problem. */
  jsonSubmissionInvalid: (problem: { submission: string[] } | string[]) => (Array.isArray(problem) ? list(problem) : body(400, problem)),
  formInactive: () => detail(405, 'Form is inactive'),
  /** An edit whose record changed since the client read it. */
  submissionModified: () => detail(409, 'Submission has been modified since it was last fetched.'),

  // The data API.
  invalidDataId: () => detail(400, 'Invalid data ID. It must be a positive integer'),
  dataIdsMissing: () => detail(400, 'Data id(s) not provided.'),
  noDeletePermission: () => detail(403, 'You do not have delete permissions.'),
  permanentDeleteDisabled: () => error('Permanent submission deletion is not enabled for this server.'),
  fieldsNotAList: () => detail(400, 'fields must be a JSON list of field names, e.g. ["_id", "name"].'),
  queryNotJson: (problem: string) => detail(400, `Invalid query: ${problem}`),
  queryNotObject: () => detail(400, 'The query must be a JSON object.'),
  queryDateInvalid: (value: unknown, field: string) => detail(400, `Invalid date value "${String(value)}" for the field ${field}.`),
  queryValueInvalid: (value: unknown, field: string) => detail(400, `Invalid value "${String(value)}" for the field ${field}.`),
  queryInNeedsList: (field: string) => detail(400, `$in needs a list for the field ${field}.`),
  queryOperatorUnsupported: (operator: string, field: string) => detail(400, `Unsupported query operator "${operator}" for the field ${field}.`),
  queryNeedsList: (key: string) => detail(400, `${key} needs a non-empty list of queries.`),
  queryNeedsObjects: (key: string) => detail(400, `${key} needs a list of query objects.`),
  /** `sort` that is not JSON, in the JSON parser's words. */
  sortNotJson: (problem: string) => detail(400, problem),
  sortNotObject: () => detail(400, 'sort must be a JSON object like {"field": 1}.'),
  filterYearInvalid: (key: string) => detail(400, `Enter a whole year for ${key}.`),
  filterUnknown: (key: string) => detail(400, `Unknown filter ${key}.`),
  mediaAllReceivedNotBoolean: () => detail(400, 'media_all_received must be true or false.'),
} as const;
