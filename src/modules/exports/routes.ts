// Direct downloads: `GET /api/v1/forms/{pk}.{ext}` and `GET /api/v1/data/{pk}.{ext}` arrive at
// the forms and data routes with the suffix in the pk; they hand such requests to sendExport.
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RawQuery } from './options.ts';
import { exportOptionsFor, isExportFormat, loadExportTarget, renderExport, type ExportFormat } from './render.ts';
import { isXlsReportRequest, renderXlsReport } from './xls-report.ts';
import { attachmentDisposition } from '../../http/conventions.ts';

const SUFFIX = /^(\d+)\.([a-z]+)$/;

/** `12.csv` → the form id and the export format; undefined for anything else. */
export function exportSuffix(pk: string): { pk: string; format: ExportFormat } | undefined {
  const match = SUFFIX.exec(pk);
  const [, id, ext] = match ?? [];
  return id !== undefined && ext !== undefined && isExportFormat(ext) ? { pk: id, format: ext } : undefined;
}

/**
 * `12.pdf`: a format suffix that names no export. onadata (Django REST framework) finds no
 * renderer for it and answers 404, where the bare id would be read as a malformed pk (400).
 */
export function unknownSuffix(pk: string): boolean {
  return /^\d+\.[A-Za-z0-9]+$/.test(pk) && exportSuffix(pk) === undefined;
}

/** RFC 6266 header as onadata writes it: a plain fallback name and the real one in UTF-8. */
export function contentDisposition(fileName: string, extension: string): string {
  return attachmentDisposition(fileName, `download.${extension}`);
}

export async function sendExport(request: FastifyRequest, reply: FastifyReply, target: { pk: string; format: ExportFormat }): Promise<FastifyReply> {
  const ctx = request.ctx;
  const query = (request.query ?? {}) as RawQuery;
  // meta or token make either Excel suffix a custom report, as export_async does (onadata reads
  // .xlsx as .xls here); the report is always a legacy .xls file.
  const isReport = (target.format === 'xls' || target.format === 'xlsx') && isXlsReportRequest(query);
  const file = isReport ? await renderXlsReport(ctx, target.pk, query) : await plainExport();
  async function plainExport() {
    const form = await loadExportTarget(ctx, target.pk);
    return renderExport(ctx, form, target.format, await exportOptionsFor(ctx, form, query), ctx.baseUrl);
  }
  return reply
    .type(file.contentType)
    .header('content-disposition', contentDisposition(file.fileName, file.extension))
    .header('cache-control', 'private, no-store')
    .send(Readable.from(file.chunks));
}
