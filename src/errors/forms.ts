// Refusals of forms: publishing, replacing, sharing, cloning, previews, downloads and form jobs.
// A refused publish answers onadata's alert body: `{"type": "alert-error", "text": "…"}`.
import { body, detail, field, list, message } from './shapes.ts';
import type { FieldErrors, PublishIssue } from './app-error.ts';

const alert = (text: string, located?: readonly PublishIssue[]) =>
  body(400, { type: 'alert-error', text, ...(located?.length ? { errors: located } : {}) });

export const formErrors = {
  // Publishing and replacing.
  xlsFormMissing: () =>
    alert('XLSForm not provided, expecting either of these params: xls_file, xls_url, dropbox_xls_url, floip_file, text_xls_form'),
  notAnXlsForm: (fileName: string) => alert(`The file "${fileName}" is not an XLSForm: expected a .xls, .xlsx, .xlsm or .csv file.`),
  xlsFormEmpty: () => alert('The uploaded XLSForm is empty.'),
  /** The converter's errors: `text` is onadata's one message, `errors` each one's sheet, row and column. */
  xlsFormInvalid: (text: string, located: readonly PublishIssue[]) => alert(text, located),
  idStringNotSlug: () =>
    alert(
      'In strict mode, the XForm ID must be a valid slug and contain no spaces. Please ensure that you have set an id_string in the settings sheet or have modified the filename to not contain any spaces.',
    ),
  versionHasXmlCharacters: () => alert("Version shouldn't have any invalid characters ('>' '&' '<')"),
  /** A title with XML characters or that is a URL (publish.ts titleProblem's words). */
  titleInvalid: (problem: string) => alert(problem),
  /** The same problem when a form's title is changed (PATCH), in DRF's body. */
  titleChangeInvalid: (problem: string) => detail(400, problem),
  floipInvalid: (problem: string) => alert(problem),
  xlsFormDownloadFailed: (url: string, reason: string) => alert(`Could not download the XLSForm from ${url}: ${reason}.`),
  formEncryptedCannotReplace: () => message('This form is encrypted and cannot be replaced.'),
  formHasSubmissions: () =>
    alert('This form has submissions: it cannot be replaced. Publish the new version as a new form, or delete the submissions first.'),
  idStringMismatch: (uploaded: string, existing: string) =>
    alert(`Your updated form's id_string '${uploaded}' must match the existing forms' id_string '${existing}'.`),
  xlsFileEmpty: () => message('xls_file field empty'),
  ownerDoesNotExist: (username: string) => message(`User with username ${username} does not exist.`),
  noRightToAddForms: (actor: string, owner: string) => detail(403, `User ${actor} has no permission to add xforms to account ${owner}`),
  projectDoesNotExist: (id: string | number) => field('project', `Project with id '${id}' does not exist.`),
  projectIdNotNumber: (value: string) => field('project', `Field 'id' expected a number but got '${value}'.`),
  noManagerRole: (actor: string, idString: string) => detail(403, `${actor} has no manager/owner role to the form ${idString}`),
  idStringExistsInAccount: () => detail(400, 'Form with the same id_string already exists in this account'),

  // Sharing and cloning.
  shareUsernameMissing: () => field('username', 'This field is required.'),
  /** A share naming several users, some refused: one field-error object per name, `{}` for good ones. */
  shareRefused: (perName: FieldErrors[]) => list(perName),
  ownerRoleUnchangeable: (owner: string) => field('username', `Cannot change the role of the form's owner (${owner}).`),
  roleAboveOwn: () => detail(403, 'You cannot give a role higher than your own.'),
  roleOfHigherUser: () => detail(403, 'You cannot change the role of a user whose role is higher than your own.'),
  usernameNull: () => field('username', 'This field may not be null.'),
  userDoesNotExist: (username: string) => field('username', `User '${username}' does not exist.`),
  noXlsFormToClone: () => detail(400, 'This form has no XLSForm file to clone.'),
  cloneExists: () => detail(400, 'A clone with the same id_string has already been created'),

  // Previews, downloads and jobs.
  previewBodyMissing: () => detail(400, 'Missing body'),
  /** The converter's errors for a preview, one per line. */
  previewInvalid: (text: string) => detail(400, text),
  previewUsernameMissing: () => detail(400, 'Username not provided'),
  previewFilenameMissing: () => detail(400, 'Filename MUST be provided'),
  previewPublishFailed: () => detail(400, 'An error occurred while publishing the form. Please try again.'),
  formFormatUnsupported: (format: string) => detail(400, `Unsupported format "${format}": use json, xml, xls or xlsx.`),
  /** onadata answers a job status request without a job id with a 202. */
  jobUuidMissing: () => body(202, { error: 'Empty job uuid' }),
  /** Unknown ids and other people's jobs look the same. */
  unknownJob: (jobUuid: string) => detail(400, `Unknown job_uuid "${jobUuid}".`),
} as const;
