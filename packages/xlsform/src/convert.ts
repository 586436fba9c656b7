// convert(): bytes or text of an XLSForm -> XForm, form JSON, itemsets CSV and
// warnings, or the reasons it cannot be converted. Never throws for bad input.
import { XlsFormError } from './errors.ts';
import { text } from './parse/json-helpers.ts';
import { workbookToJson } from './parse/workbook-to-json.ts';
import { TreeBuilder } from './survey/tree.ts';
import type { ConvertFailure, ConvertOptions, ConvertSuccess } from './types.ts';
import { openWorkbookArchive, readWorkbook } from './workbook/read.ts';
import type { ZipArchive } from './workbook/zip.ts';
import { formJson } from './xform/form-json.ts';
import { itemsetsCsv } from './xform/itemsets-csv.ts';
import { languageWarning } from './xform/languages.ts';
import { writeXForm } from './xform/xform.ts';

/** The file name without directories and its last extension. */
export function fileStem(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? fileName;
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}

function failure(err: unknown): ConvertFailure {
  if (err instanceof XlsFormError) return { ok: false, errors: [err.issue] };
  const message = err instanceof Error ? err.message : String(err);
  return { ok: false, errors: [{ code: 'internal_error', message: `The form could not be converted: ${message}` }] };
}

export function convert(input: Uint8Array | string, options: ConvertOptions): ConvertSuccess | ConvertFailure {
  return withFormJson(convertWith(input, options, undefined));
}

/**
 * A conversion whose form JSON is made only when asked for: the command writes it only with
 * --json, and making it is a pass over the whole form.
 */
export type XFormSuccess = Omit<ConvertSuccess, 'formJson'> & { formJson: () => Record<string, unknown> };

/** convert() for the command: the form JSON is made on request. */
export function convertToXForm(input: Uint8Array | string, options: ConvertOptions): XFormSuccess | ConvertFailure {
  return convertWith(input, options, undefined);
}

function withFormJson(result: XFormSuccess | ConvertFailure): ConvertSuccess | ConvertFailure {
  if (!result.ok) return result;
  try {
    return { ...result, formJson: result.formJson() };
  } catch (err) {
    return failure(err);
  }
}

/**
 * convert() for a server: an .xlsx is inflated on zlib's thread pool first, within the workbook
 * size limits, so that a hostile archive neither blocks the event loop nor fills memory.
 */
export async function convertAsync(input: Uint8Array | string, options: ConvertOptions): Promise<ConvertSuccess | ConvertFailure> {
  let archive: ZipArchive | undefined;
  try {
    archive = await openWorkbookArchive(input, options.fileName);
  } catch (err) {
    return failure(err);
  }
  return withFormJson(convertWith(input, options, archive));
}

function convertWith(input: Uint8Array | string, options: ConvertOptions, archive: ZipArchive | undefined): XFormSuccess | ConvertFailure {
  try {
    const warnings: string[] = [];
    const workbook = readWorkbook(input, options.fileName, archive);
    const { json, externalChoicesSheet, usesExternalChoices } = workbookToJson(workbook, {
      rootName: options.rootName ?? 'data',
      fallbackName: fileStem(options.fileName),
      warnings,
    });
    const tree = new TreeBuilder().build(json);
    const { xml, translations } = writeXForm(tree, json);
    const languages = languageWarning(translations);
    if (languages) warnings.push(languages);
    const result: XFormSuccess = {
      ok: true,
      xform: xml,
      formJson: () => formJson(tree, json),
      warnings,
      idString: text(json['id_string']) ?? '',
      title: text(json['title']) ?? '',
      defaultLanguage: text(json['default_language']) ?? 'default',
    };
    if (usesExternalChoices) {
      const csv = itemsetsCsv(externalChoicesSheet);
      if (csv !== undefined) result.itemsetsCsv = csv;
      else warnings.push("Could not export itemsets.csv, the 'external_choices' sheet is missing.");
    }
    const optional: Array<['version' | 'publicKey' | 'submissionUrl' | 'instanceName', string]> = [
      ['version', 'version'],
      ['publicKey', 'public_key'],
      ['submissionUrl', 'submission_url'],
      ['instanceName', 'instance_name'],
    ];
    for (const [field, key] of optional) {
      const value = text(json[key]);
      if (value) result[field] = value;
    }
    return result;
  } catch (err) {
    return failure(err);
  }
}
