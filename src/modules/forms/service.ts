// Form use cases: publish, list, read, update or replace, delete, representations, labels,
// sharing and cloning.
import type { AppDeps, RequestContext } from '../../context.ts';
import { deleteExportsOfForms, lockFormExports } from '../exports/stored-exports-repository.ts';
import { removeExportFiles } from '../exports/files.ts';
import { errors, type FieldErrors } from '../../errors.ts';
import {
  canAddToAccount,
  isAuthenticated,
  ROLES,
  requireUser,
  type Role,
} from '../../access/index.ts';
import type { ParsedBody, UploadedFile } from '../../lib/uploaded-body.ts';
import { addError } from '../accounts/validation.ts';
import { findActiveUserByUsername, listUsersByUsernames, type UserRow } from '../accounts/repository.ts';
import { getBlob } from '../blobs/repository.ts';
import { groupBy } from '../shared/members.ts';
import { fieldErrorsOf } from '../shared/field-errors.ts';
import { grantProject, requireForm } from '../../access/load.ts';
import { findLiveProject } from '../projects/repository.ts';
import { orgRoleFor } from '../orgs/service.ts';
import { isoTimestamp } from '../../platform/clock.ts';
import * as repo from './repository.ts';
import { grantFormRole } from './grants.ts';
import { countSubmissionsByVersion, countSubmissionsSince } from '../submissions/stats-repository.ts';
import { formToApi, type FormShape } from './to-api.ts';
import { convertSource, md5Hash, publishNewForm, replaceFormDefinition, titleProblem, type FormSource } from './publish.ts';
import { fetchXlsFormFromUrl } from './remote-source.ts';
import { floipFormSource } from './floip-source.ts';
import { retitleXForm } from './xform-stamp.ts';
import { inTransaction } from '../../platform/db.ts';

/** onadata leaves form_versions empty past this many submissions (its SUBMISSION_RETRIEVAL_THRESHOLD). */
const FORM_VERSIONS_MAX_SUBMISSIONS = 10_000;

export async function representForms(ctx: RequestContext, rows: readonly repo.FormRow[], shape: FormShape): Promise<Record<string, unknown>[]> {
  const ids = rows.map((f) => f.id);
  const full = shape === 'full';
  const now = ctx.clock.now();
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const withData = rows.filter((f) => f.num_of_submissions > 0);
  const [members, tags, metadata, todayCounts, versionCounts] = await Promise.all([
    repo.listFormMembers(ctx.db, ids),
    repo.listFormTags(ctx.db, ids),
    full ? repo.listFormMetadata(ctx.db, ids) : Promise.resolve([]),
    full ? countSubmissionsSince(ctx.db, withData.map((f) => f.id), today) : Promise.resolve(new Map<number, number>()),
    full
      ? countSubmissionsByVersion(ctx.db, withData.filter((f) => f.num_of_submissions <= FORM_VERSIONS_MAX_SUBMISSIONS).map((f) => f.id))
      : Promise.resolve(new Map<number, Array<{ version: string; total: number }>>()),
  ]);
  const membersBy = groupBy(members, (m) => m.object_id);
  const metadataBy = groupBy(metadata, (m) => m.form_id);
  return rows.map((form) =>
    formToApi(
      form,
      ctx.baseUrl,
      {
        members: membersBy.get(form.id) ?? [],
        tags: tags.get(form.id) ?? [],
        metadata: metadataBy.get(form.id) ?? [],
        formVersions: versionCounts.get(form.id) ?? [],
        submissionCountForToday: todayCounts.get(form.id) ?? 0,
      },
      shape,
    ),
  );
}

export async function formDetail(ctx: RequestContext, formId: number): Promise<Record<string, unknown>> {
  const form = await repo.findLiveForm(ctx.db, formId);
  if (!form) throw errors.notFound();
  const [body] = await representForms(ctx, [form], 'full');
  return body ?? {};
}

// ---------------------------------------------------------------- publish

/** The XLSForm a request names: an uploaded `xls_file`, or one fetched from `xls_url` / `dropbox_xls_url`. */
export async function sourceFromRequest(ctx: RequestContext, body: ParsedBody): Promise<FormSource | undefined> {
  for (const key of ['xls_url', 'dropbox_xls_url', 'csv_url']) {
    const url = body.fields[key];
    if (typeof url === 'string' && url.trim()) return fetchXlsFormFromUrl(ctx, url.trim(), key === 'dropbox_xls_url');
  }
  const floipFile = body.files.get('floip_file');
  if (floipFile) return floipFormSource(floipFile);
  const file: UploadedFile | undefined = body.files.get('xls_file') ?? body.files.get('csv_file');
  if (file) return { fileName: file.fileName, bytes: file.bytes, contentType: file.contentType };
  const text = body.fields['text_xls_form'];
  if (typeof text === 'string' && text.trim()) {
    return { fileName: 'form.csv', bytes: new TextEncoder().encode(text), contentType: 'text/csv' };
  }
  return undefined;
}

/** Resolves `owner` (a bare username; the caller by default) and checks the right to publish there. */
export async function publishTarget(ctx: RequestContext, ownerField: unknown): Promise<UserRow> {
  const actor = requireUser(ctx.actor);
  let owner = actor;
  if (typeof ownerField === 'string' && ownerField.trim() && ownerField.trim().toLowerCase() !== actor.username) {
    const found = await findActiveUserByUsername(ctx.db, ownerField.trim());
    if (!found) throw errors.ownerDoesNotExist(ownerField.trim());
    owner = found;
  }
  if (!canAddToAccount(ctx.actor, owner.id, await orgRoleFor(ctx, owner.id))) {
    throw errors.noRightToAddForms(actor.username, owner.username);
  }
  return owner;
}

/**
 * The project a publish's `project` field names, which the caller must be allowed to add forms to
 * (as POST /projects/{pk}/forms requires; onadata skips the check, letting anyone publish into any
 * project and read its members back). undefined when the field is absent.
 */
export async function projectToPublishInto(ctx: RequestContext, field: unknown): Promise<number | undefined> {
  if (field === undefined || field === null || field === '') return undefined;
  const shown = typeof field === 'string' || typeof field === 'number' ? String(field) : JSON.stringify(field);
  const id = typeof field === 'string' || typeof field === 'number' ? Number(field) : NaN;
  const project = Number.isInteger(id) && id >= 1 && id <= 2_147_483_647 ? await findLiveProject(ctx.db, id) : undefined;
  // A project the caller cannot see is answered as missing: its existence is not theirs to learn.
  const missing = () => errors.projectDoesNotExist(shown);
  if (!project) throw missing();
  await grantProject(ctx, project, 'add_project', { hidden: missing });
  return project.id;
}

export async function publishForm(ctx: RequestContext, body: ParsedBody): Promise<Record<string, unknown>> {
  const actor = requireUser(ctx.actor);
  const owner = await publishTarget(ctx, body.fields['owner']);
  const source = await sourceFromRequest(ctx, body);
  if (!source) throw errors.xlsFormMissing();
  const projectId = await projectToPublishInto(ctx, body.fields['project']);
  const { formId, idStringChanged } = await publishNewForm(ctx, { source, owner, projectId, createdBy: actor });
  return { ...(await formDetail(ctx, formId)), has_id_string_changed: idStringChanged };
}

// ---------------------------------------------------------------- list and read

/** GET /api/v1/forms's filters (forms/inputs.ts reads them from the query). */
export interface FormListQuery {
  /** The owning account's username. */
  owner?: string;
  /** Forms with any of these tags; none: no filter. */
  tags: string[];
  instancesWithOsm?: boolean;
}

/** Ids of the forms GET /api/v1/forms lists: the caller's (anonymous: public ones), filtered. */
export async function listFormIds(ctx: RequestContext, query: FormListQuery): Promise<number[]> {
  let ownerId: number | undefined;
  if (query.owner) {
    const owner = await findActiveUserByUsername(ctx.db, query.owner);
    if (!owner) return [];
    ownerId = owner.id;
  }
  const { tags } = query;
  const osm = query.instancesWithOsm;
  return repo.listLiveFormIds(ctx.db, {
    ...(isAuthenticated(ctx.actor) ? { memberId: ctx.actor.user.id } : { sharedOnly: true }),
    ...(ownerId !== undefined ? { ownerId } : {}),
    ...(tags.length ? { tags } : {}),
    ...(osm !== undefined ? { instancesWithOsm: osm } : {}),
  });
}

/** The short representation of these forms (one page of a list). */
export async function shortForms(ctx: RequestContext, ids: readonly number[]): Promise<Record<string, unknown>[]> {
  return representForms(ctx, await repo.findLiveFormsByIds(ctx.db, ids), 'short');
}

export async function listPublicForms(ctx: RequestContext): Promise<Record<string, unknown>[]> {
  return representForms(ctx, await repo.listLiveForms(ctx.db, { sharedOnly: true }), 'full');
}

export async function listProjectForms(ctx: RequestContext, projectId: number): Promise<Record<string, unknown>[]> {
  return representForms(ctx, await repo.listLiveForms(ctx.db, { projectId }), 'full');
}

export async function getForm(ctx: RequestContext, rawId: string): Promise<Record<string, unknown>> {
  const { form } = await requireForm(ctx, rawId, 'view_xform');
  return formDetail(ctx, form.id);
}

// ---------------------------------------------------------------- update, replace, delete

/** A form's settings as a request gave them (forms/inputs.ts reads them). */
export interface FormSettingsInput {
  title?: string;
  description?: string;
  downloadable?: boolean;
  shared?: boolean;
  sharedData?: boolean;
  requireAuth?: boolean;
  /** The username `owner` names: it must exist, and changes nothing (as in onadata). */
  owner?: string;
  /** What was wrong with the fields as read (PUT: those missing too); the service adds its lookups'. */
  fieldErrors: FieldErrors;
}

/** PUT (`full`) or PATCH of a form: new settings, or (PATCH) a new XLSForm from the body. */
export interface UpdateFormInput {
  full: boolean;
  /** The body brings a new XLSForm (a file, xls_url, dropbox_xls_url or text_xls_form). */
  replaces: boolean;
  body: ParsedBody;
  settings: FormSettingsInput;
}

export async function updateForm(ctx: RequestContext, rawId: string, input: UpdateFormInput): Promise<Record<string, unknown>> {
  const actor = requireUser(ctx.actor);
  const { form, role } = await requireForm(ctx, rawId, 'change_xform');
  const { full, body, settings } = input;

  if (input.replaces && !full) {
    if (role !== 'manager' && role !== 'owner') {
      throw errors.noManagerRole(actor.username, form.id_string);
    }
    const source = await sourceFromRequest(ctx, body);
    if (!source) throw errors.xlsFormMissing();
    await replaceFormDefinition(ctx, form, source, actor);
    return formDetail(ctx, form.id);
  }

  const fieldErrors = fieldErrorsOf(settings);
  const { title, description, downloadable, shared, sharedData, requireAuth } = settings;
  if (settings.owner !== undefined && !(await findActiveUserByUsername(ctx.db, settings.owner))) {
    addError(fieldErrors, 'owner', ['Invalid hyperlink - Object does not exist.']);
  }
  if (Object.keys(fieldErrors).length) throw errors.invalidFields(fieldErrors);
  if (title !== undefined) {
    const problem = titleProblem(title);
    if (problem) throw errors.titleChangeInvalid(problem);
  }
  const now = ctx.clock.now();
  const patch: repo.FormPatch = { date_modified: now };
  if (title !== undefined && title !== form.title) {
    const definition = await repo.findFormDefinition(ctx.db, form.id);
    const xml = retitleXForm(definition.xml, title);
    Object.assign(patch, { title, xml, hash: md5Hash(xml), json: JSON.stringify({ ...definition.json, title }) });
  }
  // Stored HTML-escaped, as onadata does.
  if (description !== undefined) patch.description = description.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  if (downloadable !== undefined) patch.downloadable = downloadable;
  if (shared !== undefined) patch.shared = shared;
  if (sharedData !== undefined) patch.shared_data = sharedData;
  if (requireAuth !== undefined) patch.require_auth = requireAuth;
  await repo.updateForm(ctx.db, form.id, patch);
  return formDetail(ctx, form.id);
}

export async function deleteForm(ctx: RequestContext, rawId: string): Promise<void> {
  const actor = requireUser(ctx.actor);
  const { form } = await requireForm(ctx, rawId, 'delete_submission');
  await softDeleteFormWithExports(ctx, form.id, actor.id);
}

/**
 * Marks the form deleted and deletes its exports in one transaction, then removes their files
 * (a file whose job is still writing it is removed by the job when its export has gone).
 */
export async function softDeleteFormWithExports(deps: AppDeps, formId: number, userId: number): Promise<void> {
  const files = await inTransaction(deps.db, async (trx) => {
    await lockFormExports(trx, formId);
    await repo.softDeleteForms(trx, { formId }, userId, deps.clock.now());
    return deleteExportsOfForms(trx, { formId });
  });
  await removeExportFiles(deps.config.dataDir, files);
}

// ---------------------------------------------------------------- representations

export type FormFile = { contentType: string; fileName: string; body: string | Uint8Array };

export async function formRepresentation(ctx: RequestContext, rawId: string, format: string): Promise<FormFile> {
  const { form } = await requireForm(ctx, rawId, 'view_xform');
  switch (format) {
    case 'json':
      return { contentType: 'application/json; charset=utf-8', fileName: `${form.id_string}.json`, body: JSON.stringify((await repo.findFormDefinition(ctx.db, form.id)).json) };
    case 'xml':
      return { contentType: 'application/xml; charset=utf-8', fileName: `${form.id_string}.xml`, body: (await repo.findFormDefinition(ctx.db, form.id)).xml };
    case 'xls':
    case 'xlsx':
      return xlsFormFile(ctx, form.id_string, form.xls_blob, form.xls_filename, format);
    default:
      throw errors.formFormatUnsupported(format);
  }
}

/** The XLSForm a form (or one of its versions) was published from, named as uploaded; 404 when none was kept. */
async function xlsFormFile(ctx: RequestContext, idString: string, sha256: string | null, uploadedName: string | null, format: string): Promise<FormFile> {
  const blob = sha256 ? await getBlob(ctx.db, sha256) : undefined;
  if (!blob) throw errors.notFound();
  const extension = /\.([A-Za-z0-9]+)$/.exec(uploadedName ?? '')?.[1]?.toLowerCase() ?? format;
  return { contentType: SPREADSHEET_TYPES[extension] ?? 'application/octet-stream', fileName: `${idString}.${extension}`, body: blob.data };
}

const SPREADSHEET_TYPES: Record<string, string> = {
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  xlsm: 'application/vnd.ms-excel.sheet.macroEnabled.12',
  csv: 'text/csv; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
};

// ---------------------------------------------------------------- labels

// ---------------------------------------------------------------- versions

/** Every published version of the form, oldest first, with links to its JSON and XML. */
export async function formVersions(ctx: RequestContext, rawId: string): Promise<Record<string, unknown>[]> {
  const { form } = await requireForm(ctx, rawId, 'view_xform');
  const base = `${ctx.baseUrl}/api/v1/forms/${form.id}`;
  return (await repo.listFormVersions(ctx.db, form.id)).map((v) => ({
    xform: base,
    url: `${base}/versions/${encodeURIComponent(v.version)}`,
    xml: `${base}/versions/${encodeURIComponent(v.version)}.xml`,
    created_by: v.created_by_username ? `${ctx.baseUrl}/api/v1/users/${v.created_by_username}` : null,
    version: v.version,
    date_created: isoTimestamp(v.date_created),
    date_modified: isoTimestamp(v.date_modified),
  }));
}

export type VersionFormat = 'json' | 'xml' | 'xls' | 'xlsx';

/** One version's form JSON, its XForm (`xml`) or the XLSForm it was published from (`xls`, `xlsx`). */
export async function formVersion(ctx: RequestContext, rawId: string, version: string, format: VersionFormat): Promise<FormFile> {
  const { form } = await requireForm(ctx, rawId, 'view_xform');
  const found = await repo.findFormVersion(ctx.db, form.id, version);
  if (!found) throw errors.notFound();
  switch (format) {
    case 'xml':
      return { contentType: 'application/xml; charset=utf-8', fileName: `${form.id_string}.xml`, body: found.xml };
    case 'xls':
    case 'xlsx':
      return xlsFormFile(ctx, form.id_string, found.xls_blob, found.xls_filename, format);
    case 'json':
      return { contentType: 'application/json; charset=utf-8', fileName: `${form.id_string}.json`, body: JSON.stringify(found.json) };
  }
}

export async function formLabels(ctx: RequestContext, rawId: string): Promise<string[]> {
  const { form } = await requireForm(ctx, rawId, 'view_xform');
  return (await repo.listFormTags(ctx.db, [form.id])).get(form.id) ?? [];
}

/** `tags` as read from the request (comma- or space-separated, taggit's way). */
export async function addFormLabels(ctx: RequestContext, rawId: string, tags: readonly string[]): Promise<{ status: number; tags: string[] }> {
  requireUser(ctx.actor);
  const { form } = await requireForm(ctx, rawId, 'add_xform');
  if (tags.length) await repo.addFormTags(ctx.db, form.id, tags);
  return { status: tags.length ? 201 : 200, tags: (await repo.listFormTags(ctx.db, [form.id])).get(form.id) ?? [] };
}

export async function removeFormLabel(ctx: RequestContext, rawId: string, tag: string): Promise<{ status: number; tags: string[] }> {
  requireUser(ctx.actor);
  const { form } = await requireForm(ctx, rawId, 'change_xform');
  const removed = await repo.removeFormTag(ctx.db, form.id, tag);
  return { status: removed ? 200 : 202, tags: (await repo.listFormTags(ctx.db, [form.id])).get(form.id) ?? [] };
}

// ---------------------------------------------------------------- share

/** A form share as a request gave it (forms/inputs.ts reads it). */
export interface ShareFormInput {
  /** The names given; absent when the field was missing or blank. */
  usernames?: string[];
  /** The role asked for, or what is wrong with it (said for each name). */
  role: { ok: true; role: Role } | { ok: false; message: string };
}

/** Form share: each named user gets the role on this form only. Errors come back as a list aligned with the names. */
export async function shareForm(ctx: RequestContext, rawId: string, input: ShareFormInput): Promise<void> {
  requireUser(ctx.actor);
  const { form, role: ownRole } = await requireForm(ctx, rawId, 'add_xform');
  const names = input.usernames;
  if (names === undefined) throw errors.shareUsernameMissing();
  const users = await listUsersByUsernames(ctx.db, names);
  const asked = input.role;
  const perName: Array<Record<string, string[]>> = names.map((name) => {
    const entry: Record<string, string[]> = {};
    const user = users.find((u) => u.username === name);
    if (!user || !user.is_active) entry['username'] = [`User '${name}' does not exist.`];
    if (!asked.ok) entry['role'] = [asked.message];
    return entry;
  });
  if (perName.some((e) => Object.keys(e).length)) throw errors.shareRefused(perName);
  // Only a request that names nobody gets here with a bad role: there is no one to grant it to.
  if (!asked.ok) return;
  const { role } = asked;
  const targets = users.filter((u) => names.includes(u.username));
  // onadata lets a form's manager grant owner or demote the owning account, which then cannot
  // take its form back; the project share's rules hold here too: the owning account keeps its
  // form, and a sharer grants or changes no role above their own.
  if (targets.some((u) => u.id === form.owner_id)) throw errors.ownerRoleUnchangeable(form.owner_username);
  const ownRank = ownRole === undefined ? -1 : ROLES.indexOf(ownRole);
  if (ROLES.indexOf(role) > ownRank) throw errors.roleAboveOwn();
  const current = await repo.formRolesOfUsers(ctx.db, form.id, targets.map((u) => u.id));
  if ([...current.values()].some((r) => ROLES.indexOf(r) > ownRank)) {
    throw errors.roleOfHigherUser();
  }
  const metaPerms = (await repo.findMetaPerms(ctx.db, [form.id])).get(form.id);
  await inTransaction(ctx.db, async (trx) => {
    for (const user of targets) await grantFormRole(trx, form.id, user.id, role, metaPerms);
  });
}

// ---------------------------------------------------------------- clone

/** A clone request (forms/inputs.ts reads it). */
export interface CloneFormInput {
  /** The account to copy the form into; absent when the field was missing or blank. */
  username?: string;
  /** The project to copy it into, or the `project_id` given when it is not a number. */
  project?: { ok: true; id: number } | { ok: false; given: string };
}

export async function cloneForm(ctx: RequestContext, rawId: string, input: CloneFormInput): Promise<Record<string, unknown>> {
  const actor = requireUser(ctx.actor);
  const { form, allows } = await requireForm(ctx, rawId, 'view_xform');
  if (!form.shared && !allows('add_xform')) throw errors.permissionDenied();
  const { username, project } = input;
  if (username === undefined) throw errors.usernameNull();
  const target = (await listUsersByUsernames(ctx.db, [username])).find((u) => u.is_active);
  if (!target) throw errors.userDoesNotExist(username);
  let projectId: number | undefined;
  if (project !== undefined) {
    if (!project.ok) throw errors.projectIdNotNumber(project.given);
    if (!(await findLiveProject(ctx.db, project.id))) throw errors.projectDoesNotExist(project.id);
    projectId = project.id;
  }
  if (!canAddToAccount(ctx.actor, target.id, await orgRoleFor(ctx, target.id))) {
    throw errors.noRightToAddForms(actor.username, target.username);
  }
  const blob = form.xls_blob ? await getBlob(ctx.db, form.xls_blob) : undefined;
  if (!blob) throw errors.noXlsFormToClone();
  // The copy is named `<id_string>_cloned` as in onadata: a form whose settings give no form_id or
  // title takes both from the file name, so its clone is told apart from the original.
  const extension = /\.[A-Za-z0-9]+$/.exec(form.xls_filename ?? '')?.[0] ?? '.xlsx';
  const source: FormSource = { fileName: `${form.id_string}_cloned${extension}`, bytes: blob.data, contentType: blob.content_type };
  const converted = await convertSource(source);
  if (target.id !== form.owner_id && (await repo.liveIdStringsLike(ctx.db, target.id, converted.idString)).includes(converted.idString.toLowerCase())) {
    throw errors.cloneExists();
  }
  const { formId } = await publishNewForm(ctx, {
    source,
    converted,
    owner: target,
    projectId,
    createdBy: target,
  });
  return formDetail(ctx, formId);
}
