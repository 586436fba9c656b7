// Refusals of record imports (CSV, XLS, XLSX), in onadata's bodies for them.
import { body, error } from './shapes.ts';

export const importErrors = {
  /** A refused record import: onadata's async_status body, with the rows' errors when there are some. */
  importFailed: (problem: string, extra: Record<string, unknown> = {}) => body(400, { job_status: 'FAILURE', error: problem, ...extra }),
  importFileNotValidated: (fileName: string) => error(`The uploaded file '${fileName}' could not be validated.`),
  /** No file in the upload; `xlsAccepted`: the endpoint also takes xls_file. */
  importFileMissing: (xlsAccepted: boolean) => error(xlsAccepted ? 'csv_file and xls_file field empty' : 'csv_file field empty'),
} as const;
