// Refusals of exports: formats, options, Google Sheets, custom XLS reports and stored exports.
import { body, detail } from './shapes.ts';

export const exportErrors = {
  /** export_async for a format this build does not make (onadata's 403 and body). */
  exportFormatNotSupported: () => body(403, { details: 'Export format not supported' }),
  /** A Google Sheets export before the account authorised the provider: where to authorise. */
  spreadsheetAuthorizationNeeded: (url: string) => body(403, { url, details: 'Google authorization needed' }),
  googleCodeMissing: () => detail(400, 'code is required.'),
  /** The spreadsheet provider refused the authorization code, in its words. */
  spreadsheetProviderRefused: (problem: string) => detail(400, problem),
  tooManyColumns: (format: string, maxColumns: number, sheetName: string, columns: number) =>
    detail(400, `The ${format} format holds at most ${maxColumns} columns; sheet "${sheetName}" has ${columns}. Use xlsx or csv.`),
  repeatIndexTagsInvalid: (raw: string) =>
    detail(400, `Invalid option for repeat_index_tags: ${raw} expecting a tuple with opening and closing tags e.g repeat_index_tags=('[', ']')`),
  exportDateInvalid: () => detail(400, 'Dates must be in the format YY_MM_DD_hh_mm_ss'),
  exportFormIdInvalid: () => detail(400, 'Invalid value for formid. It must be a positive integer.'),
  reportDataIdInvalid: () => detail(400, 'Invalid data_id'),
  reportMetadataIdInvalid: () => detail(400, 'Invalid metadata pk'),
  reportTemplateUrlEmpty: () => detail(400, 'The report template URL is empty.'),
  reportTemplateDownloadFailed: (url: string, reason: string) => detail(400, `Could not download the report template from ${url}: ${reason}.`),
  reportTemplateUnusable: (problem: string) => detail(400, `The report template cannot be used: ${problem}.`),
  reportTemplateNotFound: (metadataId: number) => detail(404, `The form has no report template with metadata id ${metadataId}.`),
  reportRecordNotFound: (dataId: number) => detail(404, `No record with _id ${dataId}.`),
} as const;
