// Stored exports, the Export records of /api/v1/export: listing, downloading and deleting them, with the
// same permission rule as making one (the caller must be allowed to export the form's data).
import type { ReadStream } from 'node:fs';
import type { RequestContext } from '../../context.ts';
import { errors } from '../../errors.ts';
import { isAuthenticated, requireUser } from '../../access/index.ts';
import { requireForm } from '../../access/load.ts';
import { isoTimestamp } from '../../platform/clock.ts';
import { loadExportTarget, type ExportFormat, type ExportTarget } from './render.ts';
import { openExportFile, removeExportFile } from './files.ts';
import * as stored from './stored-exports-repository.ts';

/** onadata's export_type names, and the query `format` values that ask for each. */
const EXPORT_TYPES = {
  csv: 'csv',
  xls: 'xls',
  xlsx: 'xlsx',
  csvzip: 'csv_zip',
  savzip: 'sav_zip',
  kml: 'kml',
  osm: 'osm',
  zip: 'zip',
  gsheets: 'gsheets',
} as const;

/** `external`: a custom XLS report (export_async?format=xls|xlsx with meta or token), asked for by no format of its own. */
export type ExportType = (typeof EXPORT_TYPES)[keyof typeof EXPORT_TYPES] | 'external';

export function exportTypeOf(format: string | undefined): Exclude<ExportType, 'external'> | undefined {
  const key = (format ?? '').toLowerCase();
  return Object.hasOwn(EXPORT_TYPES, key) ? EXPORT_TYPES[key as keyof typeof EXPORT_TYPES] : undefined;
}

/** The renderer's format for a stored export type (gsheets and external have none: they are made elsewhere). */
export function formatOfExportType(type: Exclude<ExportType, 'gsheets' | 'external'>): ExportFormat {
  return type === 'csv_zip' ? 'csvzip' : type === 'sav_zip' ? 'savzip' : type;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  csv: 'application/csv',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  csv_zip: 'application/zip',
  sav_zip: 'application/zip',
  kml: 'application/vnd.google-earth.kml+xml',
  osm: 'application/osm',
  zip: 'application/zip',
  external: 'application/vnd.ms-excel',
};

/**
 * Where the export downloads from: the sheet's own address for Google Sheets; otherwise
 * /api/v1/export/<id>, with the type as suffix in listings as onadata writes it (`.csvzip`). A
 * report is always `<id>.xls`: onadata gives the report service's file address there, a .xls.
 */
export function exportUrl(baseUrl: string, row: stored.ExportRow, withSuffix: boolean): string {
  if (row.external_url) return row.external_url;
  const suffix = row.export_type === 'external' ? '.xls' : withSuffix ? `.${row.export_type.replace('_', '')}` : '';
  return `${baseUrl}/api/v1/export/${row.id}${suffix}`;
}

export function exportToApi(baseUrl: string, row: stored.ExportRow): Record<string, unknown> {
  return {
    id: row.id,
    job_status: row.status,
    type: row.export_type,
    task_id: row.task_id,
    xform: `${baseUrl}/api/v1/forms/${row.form_id}`,
    date_created: isoTimestamp(row.created_at),
    filename: row.filename,
    options: row.options,
    export_url: row.status === 'SUCCESS' ? exportUrl(baseUrl, row, true) : null,
    error_message: row.error_message,
  };
}

/** Whether the caller, allowed to export the form as `target` says, may see this export. */
function seesExport(target: ExportTarget, row: stored.ExportRow): boolean {
  return target.submittedBy === undefined || row.submitted_by === target.submittedBy;
}

/** The form's permission check, or undefined where the caller may no longer export it. */
async function targetOrNothing(ctx: RequestContext, formId: number): Promise<ExportTarget | undefined> {
  try {
    return await loadExportTarget(ctx, String(formId));
  } catch {
    return undefined;
  }
}

/**
 * GET /api/v1/export: with ?xform, that form's exports; without, the exports the caller asked
 * for (the spec lists them; onadata answers [] here). Either way only exports of forms the caller
 * may still export.
 */
export async function listExports(ctx: RequestContext, rawFormId: string | undefined): Promise<Record<string, unknown>[]> {
  if (rawFormId !== undefined) {
    if (!/^\d+$/.test(rawFormId)) throw errors.exportFormIdInvalid();
    const target = await loadExportTarget(ctx, rawFormId);
    const rows = await stored.listFormExports(ctx.db, target.formId);
    return rows.filter((row) => seesExport(target, row)).map((row) => exportToApi(ctx.baseUrl, row));
  }
  if (!isAuthenticated(ctx.actor)) return [];
  const rows = await stored.listExportsCreatedBy(ctx.db, ctx.actor.user.id);
  const targets = new Map<number, ExportTarget | undefined>();
  const visible: Record<string, unknown>[] = [];
  for (const row of rows) {
    if (!targets.has(row.form_id)) targets.set(row.form_id, await targetOrNothing(ctx, row.form_id));
    const target = targets.get(row.form_id);
    if (target && seesExport(target, row)) visible.push(exportToApi(ctx.baseUrl, row));
  }
  return visible;
}

/** `12` or `12.csv`: the export id. */
function parseExportId(raw: string): number {
  const match = /^(\d+)(?:\.[A-Za-z]+)?$/.exec(raw);
  if (!match?.[1]) throw errors.notFound();
  return Number(match[1]);
}

async function loadVisibleExport(ctx: RequestContext, rawId: string): Promise<stored.ExportRow> {
  const row = await stored.findExport(ctx.db, parseExportId(rawId));
  if (!row) throw errors.notFound();
  const target = await loadExportTarget(ctx, String(row.form_id));
  if (!seesExport(target, row)) throw errors.notFound();
  return row;
}

export type ExportDownload =
  | { kind: 'file'; stream: ReadStream; size: number; contentType: string; fileName: string }
  | { kind: 'redirect'; url: string };

/** GET /api/v1/export/{id}: the stored file (or the sheet's address), for callers who may export. */
export async function downloadExport(ctx: RequestContext, rawId: string): Promise<ExportDownload> {
  const row = await loadVisibleExport(ctx, rawId);
  if (row.status !== 'SUCCESS') throw errors.notFound();
  if (row.external_url) return { kind: 'redirect', url: row.external_url };
  const file = row.file_path ? await openExportFile(ctx.config.dataDir, row.file_path) : undefined;
  if (!file) throw errors.notFound();
  return {
    kind: 'file',
    ...file,
    contentType: CONTENT_TYPES[row.export_type] ?? 'application/octet-stream',
    fileName: row.filename ?? `export-${row.id}`,
  };
}

/** DELETE /api/v1/export/{id}: the export's creator, or anyone who may change the form. */
export async function deleteExport(ctx: RequestContext, rawId: string): Promise<void> {
  const actor = requireUser(ctx.actor);
  const row = await loadVisibleExport(ctx, rawId);
  if (row.created_by !== actor.id) {
    await requireForm(ctx, String(row.form_id), 'change_xform');
  }
  const deleted = await stored.deleteExport(ctx.db, row.id);
  if (deleted) await removeExportFile(ctx.config.dataDir, deleted.file_path);
}
