// A `floip_file` upload as a publishable form source: the package becomes a CSV XLSForm, which
// the normal publish path converts, checks and stores like any uploaded spreadsheet.
import { errors } from '../../errors.ts';
import type { UploadedFile } from '../../lib/uploaded-body.ts';
import { floipToXlsForm } from './floip.ts';
import type { FormSource } from './publish.ts';

export function floipFormSource(file: UploadedFile): FormSource {
  const result = floipToXlsForm(file.bytes);
  if (!result.ok) throw errors.floipInvalid(result.message);
  return { fileName: result.fileName, bytes: new TextEncoder().encode(result.csv), contentType: 'text/csv' };
}
