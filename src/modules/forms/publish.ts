// Publishing an XLSForm: convert it, check it, and store the form with its file, version,
// roles and metadata in one transaction; also replacing the definition of an existing form.
import { createHash, randomUUID } from 'node:crypto';
import { convertAsync, type ConvertSuccess } from '../../../packages/xlsform/src/index.ts';
import type { RequestContext } from '../../context.ts';
import { errors } from '../../errors.ts';
import { DEFAULT_META_PERMS } from '../../access/roles.ts';
import { inTransaction, type DbOrTx } from '../../platform/db.ts';
import type { UserRow } from '../accounts/repository.ts';
import { putBlob } from '../blobs/repository.ts';
import { listProjectMembers, findLiveProject } from '../projects/repository.ts';
import { defaultProjectIn } from '../projects/service.ts';
import * as repo from './repository.ts';
import { grantFormRole } from './grants.ts';
import { stampXForm } from './xform-stamp.ts';

export interface FormSource {
  fileName: string;
  bytes: Uint8Array;
  contentType: string;
}

const ID_STRING_PATTERN = /^[\p{L}\p{N}_-]+$/u;
const XLSFORM_EXTENSIONS = /\.(xls|xlsx|xlsm|csv|md)$/i;

/**
 * Converts the spreadsheet; every expected failure becomes onadata's alert-error 400, a workbook
 * that inflates past the converter's limits included (its archive is inflated off the event loop).
 */
export async function convertSource(source: FormSource): Promise<ConvertSuccess> {
  if (!XLSFORM_EXTENSIONS.test(source.fileName)) {
    throw errors.notAnXlsForm(source.fileName);
  }
  if (source.bytes.byteLength === 0) throw errors.xlsFormEmpty();
  const result = await convertAsync(source.bytes, { fileName: source.fileName });
  if (!result.ok) {
    // `text` stays onadata's one message; `errors` adds each one's sheet, row and column for the web app.
    const located = result.errors.map(({ message, sheet, row, column }) => ({ message, ...(sheet ? { sheet } : {}), ...(row ? { row } : {}), ...(column ? { column } : {}) }));
    throw errors.xlsFormInvalid(result.errors.map((e) => e.message).join('\n'), located);
  }
  if (!ID_STRING_PATTERN.test(result.idString) || result.idString.length > 100) {
    throw errors.idStringNotSlug();
  }
  checkTitle(result.title);
  if (result.version !== undefined && /[<>&]/.test(result.version)) {
    throw errors.versionHasXmlCharacters();
  }
  return result;
}

export function titleProblem(title: string): string | undefined {
  if (/[<>&]/.test(title)) return "Title shouldn't have any invalid xml characters ('>' '&' '<')";
  if (/^(https?:\/\/|www\.)|^[\w-]+(\.[\w-]+)+(:\d+)?(\/\S*)?$/i.test(title.trim()) && !/\s/.test(title.trim())) {
    return "Invalid title value; value shouldn't match a URL";
  }
  return undefined;
}

function checkTitle(title: string): void {
  const problem = titleProblem(title);
  if (problem) throw errors.titleInvalid(problem);
}

/** onadata's default version when the XLSForm sets none: the publish time as YYYYMMDDHHMM (UTC). */
function defaultVersion(now: Date): string {
  return now.toISOString().replace(/[-T:]/g, '').slice(0, 12);
}

function md5Hash(xml: string): string {
  return `md5:${createHash('md5').update(xml).digest('hex')}`;
}

/** `idString`, or `idString_N` with the lowest free N among the account's live forms. */
async function uniqueIdString(db: DbOrTx, ownerId: number, idString: string, exceptFormId?: number): Promise<string> {
  const taken = new Set(await repo.liveIdStringsLike(db, ownerId, idString, exceptFormId));
  if (!taken.has(idString.toLowerCase())) return idString;
  for (let n = 1; ; n++) {
    const candidate = `${idString}_${n}`;
    if (!taken.has(candidate.toLowerCase())) return candidate;
  }
}

function formJsonWith(result: ConvertSuccess, idString: string, version: string): string {
  return JSON.stringify({ ...result.formJson, id_string: idString, version: String(result.formJson['version'] ?? version) });
}

/** Copies the project's role holders onto a form (through meta-perms), owners first. */
async function applyProjectRoles(trx: DbOrTx, formId: number, projectId: number, ownerIds: readonly number[]): Promise<void> {
  for (const member of await listProjectMembers(trx, [projectId])) {
    if (ownerIds.includes(member.user_id)) continue;
    await grantFormRole(trx, formId, member.user_id, member.role, DEFAULT_META_PERMS);
  }
  for (const ownerId of ownerIds) await repo.setFormRole(trx, formId, ownerId, 'owner');
}

export interface PublishRequest {
  source: FormSource;
  owner: UserRow;
  /** undefined: the owner's default project, made in the publish's transaction if missing. */
  projectId: number | undefined;
  createdBy: UserRow;
  /** Already converted (clone, async publish); converted here otherwise. */
  converted?: ConvertSuccess;
}

export async function publishNewForm(ctx: RequestContext, request: PublishRequest): Promise<{ formId: number; idStringChanged: boolean }> {
  const result = request.converted ?? (await convertSource(request.source));
  const now = ctx.clock.now();
  const version = result.version ?? defaultVersion(now);
  const uuid = randomUUID().replace(/-/g, '');
  const xml = stampXForm(result.xform, uuid, version);
  return inTransaction(ctx.db, async (trx) => {
    const projectId = request.projectId ?? (await defaultProjectIn(trx, request.owner, now));
    const project = await findLiveProject(trx, projectId);
    if (!project) throw errors.projectDoesNotExist(projectId);
    await repo.lockOwnerForms(trx, request.owner.id);
    const idString = await uniqueIdString(trx, request.owner.id, result.idString);
    const blob = await putBlob(trx, request.source.bytes, request.source.contentType);
    const smsKeyword = result.formJson['sms_keyword'];
    const formId = await repo.insertForm(trx, {
      project_id: project.id,
      owner_id: request.owner.id,
      created_by: request.createdBy.id,
      id_string: idString,
      sms_id_string: typeof smsKeyword === 'string' ? smsKeyword : result.idString,
      title: result.title,
      version,
      uuid,
      xml,
      json: formJsonWith(result, idString, version),
      hash: md5Hash(xml),
      shared: project.shared,
      shared_data: project.shared,
      public_key: result.publicKey ?? '',
      encrypted: Boolean(result.publicKey),
      xls_blob: blob,
      xls_filename: request.source.fileName,
      itemsets_csv: result.itemsetsCsv ?? null,
      date_created: now,
      date_modified: now,
      last_updated_at: now,
    });
    await repo.insertFormVersion(trx, { form_id: formId, version, xml, json: formJsonWith(result, idString, version), created_by: request.createdBy.id, now,
      xls_blob: blob, xls_filename: request.source.fileName,
    });
    await repo.insertFormMetadata(trx, formId, 'xform_meta_perms', DEFAULT_META_PERMS, now);
    await applyProjectRoles(trx, formId, project.id, [...new Set([request.owner.id, request.createdBy.id])]);
    return { formId, idStringChanged: idString !== result.idString };
  });
}

/** Replaces a form's definition with a new XLSForm of the same id_string. */
export async function replaceFormDefinition(ctx: RequestContext, form: repo.FormRow, source: FormSource, actor: UserRow): Promise<void> {
  if (form.encrypted) throw errors.formEncryptedCannotReplace();
  if (form.num_of_submissions > 0) {
    throw errors.formHasSubmissions();
  }
  const result = await convertSource(source);
  const baseIdString = form.id_string;
  if (result.idString !== baseIdString) {
    throw errors.idStringMismatch(result.idString, baseIdString);
  }
  const now = ctx.clock.now();
  await inTransaction(ctx.db, async (trx) => {
    const used = new Set(await repo.listFormVersionNames(trx, form.id));
    let version = result.version ?? defaultVersion(now);
    if (used.has(version)) {
      let n = 2;
      while (used.has(`${version}-${n}`)) n++;
      version = `${version}-${n}`;
    }
    const xml = stampXForm(result.xform, form.uuid, version);
    const json = formJsonWith(result, form.id_string, version);
    const blob = await putBlob(trx, source.bytes, source.contentType);
    await repo.updateForm(trx, form.id, {
      title: result.title,
      version,
      xml,
      json,
      hash: md5Hash(xml),
      xls_blob: blob,
      xls_filename: source.fileName,
      itemsets_csv: result.itemsetsCsv ?? null,
      date_modified: now,
      last_updated_at: now,
    });
    await repo.insertFormVersion(trx, { form_id: form.id, version, xml, json, created_by: actor.id, now, xls_blob: blob, xls_filename: source.fileName });
  });
}

export { md5Hash };
