// Refusals of forms: publishing, replacing, sharing, cloning, downloads and form jobs.
import { body, detail, field, list } from './shapes.ts';
import type { FieldErrors } from './app-error.ts';

export const formErrors = {
  formFormatUnsupported: (format: string) => detail(400, `Unsupported format "${format}": use json, xml, xls or xlsx.`),
  shareUsernameMissing: () => field('username', 'This field is required.'),
  /** A share naming several users, some refused: one field-error object per name, `{}` for good ones. */
  shareRefused: (perName: FieldErrors[]) => list(perName),
  /** onadata answers a job status request without a job id with a 202. */
  jobUuidMissing: () => body(202, { error: 'Empty job uuid' }),
} as const;
