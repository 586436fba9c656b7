// Custom XLS reports: `GET /api/v1/forms/{pk}.xls?meta=<metadata id>|token=<template url>[&data_id=<record id>]`.
// onadata posts the records to an external report service and redirects to its file; we fetch the
// template ourselves and fill it here (src/exports/xls-report), answering the .xls directly.
import type { RequestContext } from '../../context.ts';
import { errors } from '../../errors.ts';
import { planFlatLayout, type FlatColumn } from '../../exports/layout/flat.ts';
import { xlsChunks } from '../../exports/xls/index.ts';
import { fillReport, type RecordValues } from '../../exports/xls-report/fill.ts';
import { readTemplate } from '../../exports/xls-report/read-template.ts';
import { planReport, TemplateError, type ReportPlan } from '../../exports/xls-report/template.ts';
import { fetchRemoteFile, RemoteFetchError } from '../../platform/remote-fetch.ts';
import { findReportTemplateEntry } from '../forms/repository.ts';
import { DEFAULT_EXPORT_OPTIONS, parseExportOptions, single, type ExportOptions, type RawQuery } from './options.ts';
import { exportFileName, loadExportTarget, type ExportFile } from './render.ts';
import { openExportSource, type ExportSource } from './source.ts';
import { fileSpools } from './xls-spool.ts';

/** Templates are small workbooks; this bounds what one report request reads into memory. */
export const MAX_TEMPLATE_BYTES = 10 * 1024 * 1024;
const MAX_ID = 2_147_483_647;

function idParameter(raw: string, message: string): number {
  const trimmed = raw.trim();
  const id = /^\d{1,10}$/.test(trimmed) ? Number(trimmed) : NaN;
  if (!Number.isInteger(id) || id > MAX_ID) throw errors.badRequest(message);
  return id;
}

/** A `.xls` download is a custom report when it names a template. */
export function isXlsReportRequest(query: RawQuery): boolean {
  return single(query, 'meta') !== undefined || single(query, 'token') !== undefined;
}

async function templateUrl(ctx: RequestContext, formId: number, query: RawQuery): Promise<string> {
  const meta = single(query, 'meta');
  if (meta === undefined) return (single(query, 'token') ?? '').trim();
  const value = await findReportTemplateEntry(ctx.db, formId, idParameter(meta, 'Invalid metadata pk'));
  if (value === undefined) throw errors.notFound();
  // "<name>|<url>": the URL is everything after the first bar.
  const bar = value.indexOf('|');
  return (bar < 0 ? value : value.slice(bar + 1)).trim();
}

async function loadPlan(ctx: RequestContext, url: string): Promise<ReportPlan> {
  if (url === '') throw errors.badRequest('The report template URL is empty.');
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
    throw errors.badRequest(`Could not download the report template from ${url}: ${reason}.`);
  }
  try {
    return planReport(await readTemplate(bytes));
  } catch (error) {
    if (error instanceof TemplateError) throw errors.badRequest(`The report template cannot be used: ${error.message}.`);
    throw error;
  }
}

/** Readers of the placeholders' columns: the flat CSV columns, then whole select_multiple answers. */
async function columnReaders(source: ExportSource, fields: readonly string[]): Promise<Map<string, FlatColumn['read']>> {
  const [shape, osmTagKeys] = await Promise.all([source.repeatShape(), source.osmTagKeys()]);
  const links = { baseUrl: source.baseUrl };
  const layouts = [planFlatLayout(source.form, source.options, shape, links, osmTagKeys)];
  if (source.options.splitSelectMultiples) {
    layouts.push(planFlatLayout(source.form, { ...source.options, splitSelectMultiples: false }, shape, links, osmTagKeys));
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

export async function renderXlsReport(ctx: RequestContext, pk: string, query: RawQuery): Promise<ExportFile> {
  const rawDataId = single(query, 'data_id');
  const dataId = rawDataId === undefined ? undefined : idParameter(rawDataId, 'Invalid data_id');
  let options: ExportOptions = parseExportOptions(query);
  // data_id names one record; any other query is beside the point then.
  if (dataId !== undefined) options = { ...options, query: JSON.stringify({ _id: dataId }) };
  const target = await loadExportTarget(ctx, pk);
  const plan = await loadPlan(ctx, await templateUrl(ctx, target.formId, query));
  const source = await openExportSource(ctx, target, options, ctx.baseUrl);
  if (dataId !== undefined) {
    let found = false;
    for await (const _record of source.records()) {
      found = true;
      break;
    }
    if (!found) throw errors.notFound();
  }
  const readers = await columnReaders(source, plan.fields);
  async function* passes(): AsyncGenerator<RecordValues> {
    for await (const record of source.records()) {
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
