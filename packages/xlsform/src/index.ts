// @gather/xlsform: XLSForm (.xlsx, .xls, .xlsm, .csv, .md) -> ODK XForm.
export { convert, convertAsync, fileStem } from './convert.ts';
export { WORKBOOK_ZIP_LIMITS, ZipArchive, ZipError, ZipTooLargeError, type ZipLimits } from './workbook/zip.ts';
export type { ConversionIssue, ConvertFailure, ConvertOptions, ConvertSuccess, Json, JsonObject } from './types.ts';
export type { Question, Section, SurveyElement, SurveyTree, Itemset, Option } from './survey/tree.ts';
