// Direct downloads: `GET /api/v1/forms/{pk}.{ext}` and `GET /api/v1/data/{pk}.{ext}` arrive at
// the forms and data routes with the suffix in the pk; they hand such requests to sendSuffixedExport.
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RawQuery } from './options.ts';
import { exportOptionsFor, isExportFormat, loadExportTarget, renderExport, type ExportFormat } from './render.ts';
import { isXlsReportRequest, renderXlsReport } from './xls-report.ts';
import { attachmentDisposition } from '../../http/conventions.ts';
import { errors } from '../../errors.ts';

/** `12.csv`: a pk with a format suffix (Django REST framework's pattern, any case here). */
const SUFFIXED = /^(\d+)\.([A-Za-z0-9]+)$/;

/**
 * A `{pk}.{ext}` request answered as a download: the export when `ext` names a format; 404 for
 * any other suffix, as onadata answers when no renderer takes it (not 400 for a malformed pk).
 * undefined for a pk with no suffix, which the caller answers itself.
 */
export function sendSuffixedExport(request: FastifyRequest<{ Params: { pk: string } }>, reply: FastifyReply): Promise<FastifyReply> | undefined {
  const [, pk, ext] = SUFFIXED.exec(request.params.pk) ?? [];
  if (pk === undefined || ext === undefined) return undefined;
  if (!isExportFormat(ext)) throw errors.notFound();
  return sendExport(request, reply, { pk, format: ext });
}

/** RFC 6266 header as onadata writes it: a plain fallback name and the real one in UTF-8. */
export function contentDisposition(fileName: string, extension: string): string {
  return attachmentDisposition(fileName, `download.${extension}`);
}

async function sendExport(request: FastifyRequest, reply: FastifyReply, target: { pk: string; format: ExportFormat }): Promise<FastifyReply> {
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
