// Custom XLS reports: `GET /api/v1/forms/{pk}.xls?meta=<metadata id>|token=<template url>[&data_id=<record id>]`,
// and `export_async?format=xls|xlsx&meta=…|token=…` (an Export of type `external`, made by a job).
// onadata posts the records to an external report service and redirects to its file; we fetch the
// template ourselves and fill it here (src/lib/writers/xls-report), answering the .xls directly or
// storing it as the job's export file. Both paths parse the request here and render with renderReport.
import type { RequestContext } from '../../context.ts';
import type { DbOrTx } from '../../platform/db.ts';
import { errors, type AppError } from '../../errors.ts';
import { planFlatLayout, type FlatColumn } from '../../lib/writers/layout/flat.ts';
import { xlsChunks } from '../../lib/writers/xls/index.ts';
import { fillReport, type RecordValues } from '../../lib/writers/xls-report/fill.ts';
import { readTemplate } from '../../lib/writers/xls-report/read-template.ts';
import { planReport, TemplateError, type ReportPlan } from '../../lib/writers/xls-report/template.ts';
import { fetchRemoteFile, RemoteFetchError } from '../../platform/remote-fetch.ts';
import { findReportTemplateEntry } from '../forms/repository.ts';
import { DEFAULT_EXPORT_OPTIONS, parseExportOptions, single, type ExportOptions, type RawQuery } from './options.ts';
import { countedSource, exportFileName, loadExportTarget, type ExportFile, type ExportTarget, type RenderOptions } from './render.ts';
import { openExportSource, type ExportSource } from './source.ts';
import { fileSpools } from './xls-spool.ts';

/** Templates are small workbooks; this bounds what one report request reads into memory. */
export const MAX_TEMPLATE_BYTES = 10 * 1024 * 1024;
const MAX_ID = 2_147_483_647;

function idParameter(raw: string, refusal: () => AppError): number {
  const trimmed = raw.trim();
  const id = /^\d{1,10}$/.test(trimmed) ? Number(trimmed) : NaN;
  if (!Number.isInteger(id) || id > MAX_ID) throw refusal();
  return id;
}

/** A `.xls` download (or an xls/xlsx export_async) is a custom report when it names a template. */
export function isXlsReportRequest(query: RawQuery): boolean {
  return single(query, 'meta') !== undefined || single(query, 'token') !== undefined;
}

/** What a report request names: its template (a metadata entry, else a URL) and perhaps one record. */
export type ReportRequest = { readonly template: { readonly meta: number } | { readonly url: string }; readonly dataId: number | undefined };

/**
 * The request's report parameters, or the 400 the direct download answers: a non-integer meta
 * ("Invalid metadata pk") or data_id, an empty template URL. meta wins over token, as in onadata.
 */
export function parseReportRequest(query: RawQuery): ReportRequest {
  const rawDataId = single(query, 'data_id');
  const dataId = rawDataId === undefined ? undefined : idParameter(rawDataId, errors.reportDataIdInvalid);
  const meta = single(query, 'meta');
  if (meta !== undefined) return { template: { meta: idParameter(meta, errors.reportMetadataIdInvalid) }, dataId };
  const url = (single(query, 'token') ?? '').trim();
  if (url === '') throw errors.reportTemplateUrlEmpty();
  return { template: { url }, dataId };
}

/** The export options a report is filled with (the CSV export's; review columns only when asked for). */
export function reportExportOptions(query: RawQuery): ExportOptions {
  return parseExportOptions(query);
}

/** The template's URL; a meta id that is not one of the form's live external_export entries is a 404. */
export async function reportTemplateUrl(db: DbOrTx, formId: number, request: ReportRequest): Promise<string> {
  if ('url' in request.template) return request.template.url;
  const value = await findReportTemplateEntry(db, formId, request.template.meta);
  if (value === undefined) throw errors.reportTemplateNotFound(request.template.meta);
  // "<name>|<url>": the URL is everything after the first bar.
  const bar = value.indexOf('|');
  return (bar < 0 ? value : value.slice(bar + 1)).trim();
}

/** The report parameters as an external Export record keeps them in its options (onadata's names). */
export function storedReportRequest(request: ReportRequest): Record<string, string> {
  const stored: Record<string, string> = 'meta' in request.template ? { meta: String(request.template.meta) } : { token: request.template.url };
  if (request.dataId !== undefined) stored['data_id'] = String(request.dataId);
  return stored;
}

/** An external Export record's options → the report request its job renders. */
export function reportRequestFromStored(stored: Readonly<Record<string, unknown>>): ReportRequest {
  const query: Record<string, string> = {};
  for (const key of ['meta', 'token', 'data_id']) {
    const value = stored[key];
    if (typeof value === 'string') query[key] = value;
  }
  return parseReportRequest(query);
}

async function loadPlan(ctx: RequestContext, url: string): Promise<ReportPlan> {
  if (url === '') throw errors.reportTemplateUrlEmpty();
  let bytes: Uint8Array;
  try {
    const file = await fetchRemoteFile(url, {
      maxBytes: Math.min(MAX_TEMPLATE_BYTES, ctx.config.uploadLimitBytes),
      timeoutMs: ctx.config.remoteFetchTimeoutMs,
      allowPrivateAddresses: ctx.config.allowPrivateUrls,
    });
    bytes = file.bytes;
  } catch (error) {
    const reason = error instanceof RemoteFetchError ? error.message : 'the download failed';
    throw errors.reportTemplateDownloadFailed(url, reason);
  }
  try {
    return planReport(await readTemplate(bytes));
  } catch (error) {
    if (error instanceof TemplateError) throw errors.reportTemplateUnusable(error.message);
    throw error;
  }
}

/** Readers of the placeholders' columns: the flat CSV columns, then whole select_multiple answers. */
async function columnReaders(source: ExportSource, fields: readonly string[]): Promise<Map<string, FlatColumn['read']>> {
  const [shape, osmTagKeys] = await Promise.all([source.repeatShape(), source.osmTagKeys()]);
  const links = { baseUrl: source.baseUrl };
  // The report's cells are legacy XLS text cells, never evaluated: values are written as answered.
  const layouts = [planFlatLayout(source.form, source.options, shape, links, osmTagKeys, 'as-answered')];
  if (source.options.splitSelectMultiples) {
    layouts.push(planFlatLayout(source.form, { ...source.options, splitSelectMultiples: false }, shape, links, osmTagKeys, 'as-answered'));
  }
  const wanted = new Set(fields);
  const readers = new Map<string, FlatColumn['read']>();
  for (const layout of layouts) {
    for (const column of layout.columns) {
      if (wanted.has(column.header) && !readers.has(column.header)) readers.set(column.header, column.read);
    }
  }
  return readers;
}

/** How many passes over the records filling the template makes: one per repeated block. */
function recordPasses(plan: ReportPlan): number {
  return plan.sheets.reduce((n, sheet) => n + sheet.segments.filter((segment) => segment.kind !== 'once').length, 0);
}

/**
 * THE report renderer, for the direct download and the export job alike: fetches and checks the
 * template, then fills it with the records (`data_id`: that one record, else a 404) as a legacy XLS file.
 * A job's `onProgress` is told the records filled in so far, over all the template's blocks.
 */
export async function renderReport(
  ctx: RequestContext,
  target: ExportTarget,
  request: ReportRequest,
  exportOptions: ExportOptions,
  render: RenderOptions = {},
): Promise<ExportFile> {
  // data_id names one record; any other query is beside the point then.
  const options = request.dataId === undefined ? exportOptions : { ...exportOptions, query: JSON.stringify({ _id: request.dataId }) };
  const plan = await loadPlan(ctx, await reportTemplateUrl(ctx.db, target.formId, request));
  const source = await openExportSource(ctx, target, options, ctx.baseUrl);
  if (request.dataId !== undefined) {
    let found = false;
    for await (const _record of source.records()) {
      found = true;
      break;
    }
    if (!found) throw errors.reportRecordNotFound(request.dataId);
  }
  const readers = await columnReaders(source, plan.fields);
  const passCount = recordPasses(plan);
  const filling = render.onProgress && passCount > 0 ? await countedSource(source, passCount, render.onProgress) : source;
  async function* passes(): AsyncGenerator<RecordValues> {
    for await (const record of filling.records()) {
      const values: RecordValues = (field) => readers.get(field)?.(record) ?? '';
      yield values;
    }
  }
  const now = ctx.clock.now();
  const sheets = fillReport(plan, { title: target.title, idString: target.idString, formId: target.formId, date: now }, passes);
  return {
    contentType: 'application/vnd.ms-excel',
    fileName: exportFileName(target.idString, DEFAULT_EXPORT_OPTIONS, now, 'xls'),
    extension: 'xls',
    chunks: xlsChunks(sheets, { createSpool: fileSpools(ctx.config.dataDir) }),
  };
}

/** GET /api/v1/forms/{pk}.xls?meta=…|token=…: the report, rendered while the client waits. */
export async function renderXlsReport(ctx: RequestContext, pk: string, query: RawQuery): Promise<ExportFile> {
  const request = parseReportRequest(query);
  const options = reportExportOptions(query);
  const target = await loadExportTarget(ctx, pk);
  return renderReport(ctx, target, request, options);
}
