// THE entry point for producing an export file: direct downloads and export jobs call
// renderExport. Each format is one case below; a bad request throws its AppError before the
// first chunk exists, so a download can still answer a proper 4xx.
import type { AppDeps, RequestContext } from '../../context.ts';
import { requireForm } from '../../access/load.ts';
import { findFormDefinition } from '../forms/repository.ts';
import { flatCsvChunks, type CsvThreading } from './flat-csv.ts';
import { parseExportOptions, type ExportOptions, type RawQuery } from './options.ts';
import { isReviewEnabled } from '../reviews/repository.ts';
import { openExportSource, type ExportSource, type ExportTarget } from './source.ts';
import { csvZip, savZip } from './zipped.ts';
import { xlsExport, xlsxExport } from './spreadsheets.ts';
import { fileSpools } from './xls-spool.ts';
import { kmlExport } from './kml.ts';
import { osmExport } from './osm.ts';
import { attachmentsZip } from './attachments-zip.ts';

export type { ExportTarget } from './source.ts';
export type { ExportOptions } from './options.ts';

export type ExportFormat = 'csv' | 'xls' | 'xlsx' | 'csvzip' | 'savzip' | 'kml' | 'osm' | 'zip';

export const EXPORT_FORMATS: readonly ExportFormat[] = ['csv', 'xls', 'xlsx', 'csvzip', 'savzip', 'kml', 'osm', 'zip'];

export function isExportFormat(value: string): value is ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(value);
}

export interface ExportFile {
  contentType: string;
  /** `<id_string>[-group-name-removed]-<YYYY-MM-DD-HH-MM-SS>.<extension>` */
  fileName: string;
  extension: string;
  chunks: AsyncIterable<Uint8Array>;
}

const FILE_TYPES: Record<ExportFormat, { contentType: string; extension: string }> = {
  csv: { contentType: 'application/csv', extension: 'csv' },
  xls: { contentType: 'application/vnd.ms-excel', extension: 'xls' },
  xlsx: { contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', extension: 'xlsx' },
  csvzip: { contentType: 'application/zip', extension: 'zip' },
  savzip: { contentType: 'application/zip', extension: 'zip' },
  kml: { contentType: 'application/vnd.google-earth.kml+xml', extension: 'kml' },
  osm: { contentType: 'application/osm', extension: 'osm' },
  zip: { contentType: 'application/zip', extension: 'zip' },
};

function stamp(now: Date): string {
  return now.toISOString().slice(0, 19).replace(/[T:]/g, '-');
}

export function exportFileName(idString: string, options: ExportOptions, now: Date, extension: string): string {
  return `${idString}${options.removeGroupName ? '-group-name-removed' : ''}-${stamp(now)}.${extension}`;
}

/** Records read between two progress reports (onadata's EXPORT_TASK_PROGRESS_UPDATE_BATCH). */
export const PROGRESS_EVERY = 1000;

export interface RenderOptions {
  /**
   * Told the records written so far and the total, every PROGRESS_EVERY records (export jobs). An
   * export that reads the records more than once (a custom report's record blocks) reports the
   * records read over all passes divided by the number of passes.
   */
  readonly onProgress?: (records: number, total: number) => Promise<void>;
}

/** The source with its passes counted for `onProgress`; one count query for the total first. */
export async function countedSource(source: ExportSource, passes: number, onProgress: NonNullable<RenderOptions['onProgress']>): Promise<ExportSource> {
  const total = await source.countRecords();
  let read = 0;
  let reported = 0;
  /** Counts `n` more records read, reporting the progress when a report is due. */
  const note = async (n: number): Promise<void> => {
    read += n;
    const done = Math.min(total, Math.floor(read / passes));
    if (done - reported < PROGRESS_EVERY) return;
    reported = done - (done % PROGRESS_EVERY);
    await onProgress(reported, total);
  };
  async function* countedPages<Page extends { readonly count: number }>(pages: AsyncIterable<Page>): AsyncGenerator<Page> {
    for await (const page of pages) {
      yield page;
      await note(page.count);
    }
  }
  return {
    ...source,
    async *records() {
      for await (const page of countedPages(source.serialPages())) yield* page.records;
    },
    pages: () => countedPages(source.pages()),
    serialPages: () => countedPages(source.serialPages()),
    attachmentPages: () => countedPages(source.attachmentPages()),
    noteWritten: note,
  };
}

export async function renderExport(
  deps: AppDeps,
  target: ExportTarget,
  format: ExportFormat,
  options: ExportOptions,
  baseUrl: string,
  render: RenderOptions = {},
): Promise<ExportFile> {
  const now = deps.clock.now();
  const type = FILE_TYPES[format];
  const file = (chunks: AsyncIterable<Uint8Array>): ExportFile => ({
    ...type,
    fileName: exportFileName(target.idString, options, now, type.extension),
    chunks,
  });
  const open = async (): Promise<ExportSource> => {
    const source = await openExportSource(deps, target, options, baseUrl);
    if (!render.onProgress) return source;
    return countedSource(source, 1, render.onProgress);
  };
  // Helper threads for CSV, XLSX and savzip (csv-threads.ts); the same for each.
  const threading: CsvThreading = {
    threads: deps.config.exportThreads,
    minRecords: deps.config.exportThreadMinRecords,
    databaseUrl: deps.config.databaseUrl,
    target,
  };
  switch (format) {
    case 'csv':
      return file(await flatCsvChunks(await open(), threading));
    case 'csvzip':
      return file(await csvZip(await open(), now, fileSpools(deps.config.dataDir)));
    case 'savzip':
      return file(await savZip(await open(), now, fileSpools(deps.config.dataDir), threading));
    case 'kml':
      return file(kmlExport(await open()));
    case 'osm':
      return file(osmExport(deps, await open()));
    case 'xlsx':
      return file(await xlsxExport(await open(), now, fileSpools(deps.config.dataDir), threading));
    case 'xls':
      return file(await xlsExport(await open(), fileSpools(deps.config.dataDir)));
    case 'zip':
      return file(attachmentsZip(deps, await open(), target.idString, now));
  }
}

/**
 * The form to export, if the caller may export it (access requireForm's can_export_xform_data:
 * public data to anyone, else a role that exports), with the records they export.
 */
export async function loadExportTarget(ctx: RequestContext, rawFormId: string): Promise<ExportTarget> {
  const { form, submittedBy } = await requireForm(ctx, rawFormId, 'can_export_xform_data');
  const definition = await findFormDefinition(ctx.db, form.id);
  return { formId: form.id, idString: form.id_string, title: form.title, formJson: definition.json, submittedBy };
}

/** A request's export options for this form: review columns by default where the form has review enabled. */
export async function exportOptionsFor(ctx: AppDeps, target: ExportTarget, query: RawQuery): Promise<ExportOptions> {
  return parseExportOptions(query, { includeReviews: await isReviewEnabled(ctx.db, target.formId) });
}
