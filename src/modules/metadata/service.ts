// Form metadata entries (onadata's /api/v1/metadata) on a form (`xform`): text entries that change
// nothing else on the server, among them `submission_review` (review enabled: exports include the
// review columns by default) and `external_export` (custom XLS report templates); and `media`
// (files devices download with the form: a data_file upload, a link, or another form's records
// as CSV, `xform <pk> <name>`) and `supporting_doc`
// (files kept beside the form); and `xform_meta_perms`, which re-maps the roles of the form's
// members, narrowing what each was granted, never widening it (one entry per form: adding one
// replaces it). Project and record entries and Enketo links
// are refused with a 400 that says so, rather than stored half-working.
import { createHash } from 'node:crypto';
import type { RequestContext } from '../../context.ts';
import { errors, type FieldErrors } from '../../errors.ts';
import { isAuthenticated, isMetaPerms, requireUser, type FormPermission } from '../../access/index.ts';
import type { UploadedFile } from '../../lib/uploaded-body.ts';
import { putBlob, readBlobChunks } from '../blobs/repository.ts';
import { parseLinkedDataset } from '../exports/linked-dataset.ts';
import { requireForm, type FormGrant } from '../../access/load.ts';
import * as forms from '../forms/repository.ts';
import { regrantFormRoles } from '../forms/grants.ts';
import { metadataToApi } from '../forms/to-api.ts';
import * as repo from './repository.ts';
import { checkUpload, type UploadKind } from './upload-check.ts';
import { fieldErrorsOf } from '../shared/field-errors.ts';
import { inTransaction } from '../../platform/db.ts';

/** onadata's METADATA_TYPES. */
const DATA_TYPES = [
  'data_license', 'enketo_preview_url', 'enketo_url', 'form_license', 'mapbox_layer', 'media', 'public_link', 'source',
  'supporting_doc', 'external_export', 'textit', 'google_sheets', 'xform_meta_perms', 'submission_review', 'imported_via_csv_by',
] as const;

/** The types this server stores through the API: text values with no other effect here. */
const SUPPORTED_TYPES: ReadonlySet<string> = new Set([
  'data_license', 'form_license', 'mapbox_layer', 'public_link', 'source', 'external_export', 'textit', 'google_sheets', 'submission_review',
  'media', 'supporting_doc', 'xform_meta_perms',
]);

const META_PERMS = 'xform_meta_perms';
const META_PERMS_FORMAT = "Format must be: 'editor role' | 'dataentry role' | 'readonly role', or an invalid role was provided.";

/** The types whose entries may carry an uploaded file (data_file). */
const FILE_TYPES: ReadonlySet<string> = new Set<UploadKind>(['media', 'supporting_doc']);

/** Types a form holds at most one live entry of. */
const ONE_PER_FORM: ReadonlySet<string> = new Set(['submission_review', 'xform_meta_perms']);

function parseId(raw: string): number {
  if (!/^\d{1,9}$/.test(raw)) throw errors.notFound();
  return Number(raw);
}

/** The form of an entry the caller may see, and its form facts; 404 otherwise. */
async function loadEntry(ctx: RequestContext, rawId: string): Promise<{ row: forms.MetadataRow; visible: FormGrant }> {
  const row = await repo.findLiveMetadata(ctx.db, parseId(rawId));
  if (!row) throw errors.notFound();
  try {
    return { row, visible: await requireForm(ctx, String(row.form_id), 'view_xform') };
  } catch {
    throw errors.notFound();
  }
}

/** Entries of the types this API does not write (set by the server itself) are read-only here. */
function requireWritableType(row: forms.MetadataRow): void {
  if (!SUPPORTED_TYPES.has(row.data_type)) throw errors.metadataTypeReadOnly(row.data_type);
}

function requireFormPermission(visible: FormGrant, permission: FormPermission): void {
  if (!visible.allows(permission)) throw errors.permissionDenied();
}

/** GET /api/v1/metadata[?xform=<pk>]: one form's entries, or those of every form the caller holds a role on. */
export async function listMetadata(ctx: RequestContext, rawFormId: string | undefined): Promise<Record<string, unknown>[]> {
  let formIds: number[];
  if (rawFormId !== undefined && rawFormId !== '') formIds = [(await requireForm(ctx, rawFormId, 'view_xform')).form.id];
  else if (isAuthenticated(ctx.actor)) formIds = await forms.listLiveFormIds(ctx.db, { memberId: ctx.actor.user.id });
  else formIds = [];
  return (await forms.listFormMetadata(ctx.db, formIds)).map((row) => metadataToApi(row, ctx.baseUrl));
}

export async function getMetadata(ctx: RequestContext, rawId: string): Promise<Record<string, unknown>> {
  return metadataToApi((await loadEntry(ctx, rawId)).row, ctx.baseUrl);
}

/** An entry's file as a download: its bytes, or the address a media link points at. */
export type MetadataDownload =
  | { readonly kind: 'file'; readonly size: number; readonly content: AsyncIterable<Uint8Array>; readonly contentType: string; readonly fileName: string }
  | { readonly kind: 'redirect'; readonly location: string };

/** GET /api/v1/metadata/{id}.{extension}: the uploaded file of an entry the caller may see. */
export async function getMetadataFile(ctx: RequestContext, rawId: string): Promise<MetadataDownload> {
  const { row } = await loadEntry(ctx, rawId);
  if (row.data_file === null) {
    if (row.data_type === 'media' && /^https?:\/\//i.test(row.data_value)) return { kind: 'redirect', location: row.data_value };
    throw errors.notFound();
  }
  const blob = await repo.findMetadataFile(ctx.db, row.id);
  if (!blob) throw errors.notFound();
  return { kind: 'file', size: blob.size, content: readBlobChunks(ctx.db, blob), contentType: row.data_file_type ?? 'application/octet-stream', fileName: row.data_value };
}

/**
 * A media entry without a file links to one: an http(s) URL whose path names the file, or another
 * form's records as CSV (`xform <pk> <name>`), which the caller must manage.
 */
async function checkMediaLink(ctx: RequestContext, value: string, problems: FieldErrors): Promise<void> {
  const linked = parseLinkedDataset(value);
  if (linked) {
    let allowed: boolean;
    try {
      const visible = await requireForm(ctx, String(linked.formId), 'view_xform');
      allowed = visible.allows('add_xform');
    } catch {
      allowed = false;
    }
    if (!allowed) (problems['data_value'] ??= []).push(`Form ${linked.formId} does not exist or you do not manage it, so its data cannot be linked.`);
    return;
  }
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    (problems['data_value'] ??= []).push(`Invalid url '${value}': give a data_file, the http(s) address of the file, or 'xform [form id] [file name]' for another form's data.`);
  } else if (!url.pathname.split('/').pop()) {
    (problems['data_value'] ??= []).push(`Cannot get filename from URL ${value}. URL should include the filename e.g http://example.com/data.csv`);
  }
}

/** The uploaded file as the entry will keep it, or the problem with it. */
function acceptFile(file: UploadedFile, dataType: string | undefined, problems: FieldErrors): { name: string; contentType: string } | undefined {
  if (dataType === undefined || !FILE_TYPES.has(dataType)) {
    problems['data_file'] = ['Only media and supporting_doc entries take a file.'];
    return undefined;
  }
  const verdict = checkUpload(dataType as UploadKind, file.fileName, file.bytes);
  if (!verdict.ok) {
    problems['data_file'] = [verdict.message];
    return undefined;
  }
  return { name: verdict.name, contentType: verdict.contentType };
}

/** A new entry as a request gave it (metadata/inputs.ts reads it). */
export interface CreateMetadataInput {
  /** The form's id as given in `xform` ('' when none was). */
  formRef: string;
  dataType?: string;
  dataValue?: string;
  /** The uploaded data_file. */
  file?: UploadedFile;
  /** What was wrong with the fields as read; the service adds its checks' and answers all in one 400. */
  fieldErrors: FieldErrors;
}

/**
 * POST /api/v1/metadata: {xform, data_type, data_value} as JSON or a form, or multipart with a
 * data_file for media and supporting_doc entries (data_value then defaults to the file's name);
 * the form's owners and managers (add_xform).
 */
export async function createMetadata(ctx: RequestContext, input: CreateMetadataInput): Promise<Record<string, unknown>> {
  requireUser(ctx.actor);
  const { file, dataType, dataValue, formRef } = input;
  const problems = fieldErrorsOf(input);
  if (dataType !== undefined && !(DATA_TYPES as readonly string[]).includes(dataType)) problems['data_type'] = [`"${dataType}" is not a valid choice.`];
  else if (dataType !== undefined && !SUPPORTED_TYPES.has(dataType)) problems['data_type'] = [`"${dataType}" entries cannot be set through this server's API yet.`];
  if (file === undefined && dataType === 'media' && dataValue !== undefined) await checkMediaLink(ctx, dataValue, problems);
  if (file === undefined && dataType === 'supporting_doc') problems['data_file'] = ['A supporting document needs its file (data_file).'];
  if (dataType === META_PERMS && dataValue !== undefined && !isMetaPerms(dataValue)) problems['non_field_errors'] = [META_PERMS_FORMAT];
  const accepted = file ? acceptFile(file, dataType, problems) : undefined;
  if (Object.keys(problems).length > 0) throw errors.invalidFields(problems);
  let visible: FormGrant;
  try {
    visible = await requireForm(ctx, formRef, 'view_xform');
  } catch {
    throw errors.xformDoesNotExist(formRef);
  }
  requireFormPermission(visible, 'add_xform');
  const value = accepted && (dataValue === undefined || dataValue === '') ? accepted.name : dataValue;
  if (dataType === undefined || value === undefined) throw new Error('validated metadata lacks its type or value');
  const formId = visible.form.id;
  const owner = visible.form.owner_username;
  const row = await inTransaction(ctx.db, async (trx) => {
    await repo.lockFormMetadata(trx, formId);
    if (dataType === META_PERMS) {
      // A form has one set of meta permissions: adding one replaces it, as in onadata.
      const current = await repo.findLiveMetadataOfType(trx, formId, META_PERMS);
      if (current) await repo.updateMetadataValue(trx, current.id, value);
      await regrantFormRoles(trx, visible.form.id, value);
      return current ? { ...current, data_value: value } : repo.insertMetadata(trx, { formId, dataType, dataValue: value, now: ctx.clock.now() });
    }
    const clash = await repo.hasLiveMetadata(trx, formId, dataType, ONE_PER_FORM.has(dataType) ? undefined : value);
    if (clash) throw errors.metadataExists();
    const stored: repo.StoredFile | undefined =
      file && accepted
        ? {
            path: `${owner}/${dataType === 'media' ? 'formid-media' : 'docs'}/${accepted.name}`,
            contentType: accepted.contentType,
            md5: `md5:${createHash('md5').update(file.bytes).digest('hex')}`,
            blobSha256: await putBlob(trx, file.bytes, accepted.contentType),
          }
        : undefined;
    return repo.insertMetadata(trx, { formId, dataType, dataValue: value, now: ctx.clock.now(), file: stored });
  });
  return metadataToApi(row, ctx.baseUrl);
}

/** A change of an entry as a request gave it (metadata/inputs.ts reads it). */
export interface UpdateMetadataInput {
  dataType?: string;
  dataValue?: string;
  fieldErrors: FieldErrors;
}

/** PUT or PATCH /api/v1/metadata/{id}: a new data_value (change_xform on the form). */
export async function updateMetadata(ctx: RequestContext, rawId: string, input: UpdateMetadataInput): Promise<Record<string, unknown>> {
  requireUser(ctx.actor);
  const { row, visible } = await loadEntry(ctx, rawId);
  // Meta permissions decide members' roles: changing them takes what adding them takes.
  requireFormPermission(visible, row.data_type === META_PERMS ? 'add_xform' : 'change_xform');
  requireWritableType(row);
  const problems = fieldErrorsOf(input);
  const { dataValue, dataType } = input;
  if (dataType !== undefined && dataType !== row.data_type) problems['data_type'] = ['The type of an entry cannot be changed; delete it and add another.'];
  if (dataValue !== undefined && dataValue !== row.data_value && row.data_file !== null) problems['data_value'] = ['The name of an uploaded file cannot be changed; delete the entry and upload the file again.'];
  else if (dataValue !== undefined && row.data_type === 'media') await checkMediaLink(ctx, dataValue, problems);
  if (dataValue !== undefined && row.data_type === META_PERMS && !isMetaPerms(dataValue)) problems['non_field_errors'] = [META_PERMS_FORMAT];
  if (Object.keys(problems).length > 0) throw errors.invalidFields(problems);
  if (dataValue !== undefined && dataValue !== row.data_value) {
    await inTransaction(ctx.db, async (trx) => {
      await repo.lockFormMetadata(trx, row.form_id);
      if (!ONE_PER_FORM.has(row.data_type) && (await repo.hasLiveMetadata(trx, row.form_id, row.data_type, dataValue))) throw errors.metadataExists();
      await repo.updateMetadataValue(trx, row.id, dataValue);
      if (row.data_type === META_PERMS) await regrantFormRoles(trx, visible.form.id, dataValue);
    });
  }
  return getMetadata(ctx, rawId);
}

/** DELETE /api/v1/metadata/{id}: marks the entry deleted (delete_xform on the form). */
export async function deleteMetadata(ctx: RequestContext, rawId: string): Promise<void> {
  requireUser(ctx.actor);
  const { row, visible } = await loadEntry(ctx, rawId);
  requireFormPermission(visible, 'delete_xform');
  requireWritableType(row);
  if (row.data_type === META_PERMS) throw errors.metaPermsUndeletable();
  if (!(await repo.softDeleteMetadata(ctx.db, row.id, ctx.clock.now()))) throw errors.notFound();
}
