// Refusals of record imports (CSV, XLS, XLSX), in onadata's bodies for them.
import { body, error } from './shapes.ts';

/**
 * Why a record import is refused: the `error` of importFailed's body, or the error of a failed
 * import job. (Problems of a column or of a row's value are the import's row errors, listed with
 * them; see src/lib/import-rows.)
 */
export const importRefusals = {
  fileEmpty: 'The file is empty.',
  encryptedForm: 'Unencrypted submissions are not allowed for encrypted forms.',
  editedRecordGone: 'Some records this file edits were changed or deleted while it was being imported; nothing was imported. Please try again.',
  rowNotStored: (row: number, reason: string) => `Row ${row} could not be stored: ${reason}`,
} as const;

export const importErrors = {
  /** A refused record import: onadata's async_status body, with the rows' errors when there are some. */
  importFailed: (problem: string, extra: Record<string, unknown> = {}) => body(400, { job_status: 'FAILURE', error: problem, ...extra }),
  importFileNotValidated: (fileName: string) => error(`The uploaded file '${fileName}' could not be validated.`),
  /** No file in the upload; `xlsAccepted`: the endpoint also takes xls_file. */
  importFileMissing: (xlsAccepted: boolean) => error(xlsAccepted ? 'csv_file and xls_file field empty' : 'csv_file field empty'),
} as const;
