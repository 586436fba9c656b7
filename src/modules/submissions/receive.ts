// Receiving a submission (OpenRosa XML plus media): find the form, check who may submit, parse,
// then store it once — a duplicate instanceID only adds missing media, a deprecatedID edits.
import { randomUUID } from 'node:crypto';
import type { RequestContext } from '../../context.ts';
import { errors, isAppError } from '../../errors.ts';
import { isAuthenticated } from '../../access/index.ts';
import { callerFormRole, formStanding } from '../../access/load.ts';
import type { Role } from '../../access/roles.ts';
import { isoTimestamp } from '../../platform/clock.ts';
import { inTransaction, type DbOrTx } from '../../platform/db.ts';
import { findActiveUserByUsername, findActiveUserById, type UserRow } from '../accounts/repository.ts';
import { putBlob, type BlobContent } from '../blobs/repository.ts';
import { perDefinition } from '../forms/definition-memo.ts';
import { readOsmAnswers, storeOsmAnswers } from '../osm/answers.ts';
import { attachmentContentType } from './attachment-type.ts';
import { buildFormModel } from '../../lib/form-model/model.ts';
import { parseInstance, type InstanceMeta } from '../../lib/instance-xml.ts';
import * as repo from './repository.ts';
import { queueDeliveries } from '../restservices/repository.ts';
import { SubmissionTargets, type SubmissionAccess } from './target-cache.ts';
import { insertRememberedBatched } from './insert-batch.ts';

export interface UploadedMedia {
  name: string;
  contentType: string;
  size: number;
  /** The file's bytes, or the file they were spooled to (stored from disk a chunk at a time). */
  content: BlobContent;
}

/** An instance, decoded, with the decision that its sender may submit it (admitInstance). */
export interface AdmittedInstance {
  xml: string;
  access: SubmissionAccess;
}

export interface SubmissionUpload {
  /** The instance as sent (not read when `admitted` is given). */
  xml: Uint8Array | undefined;
  /** Decided while the body was still arriving, before the files that follow the instance. */
  admitted?: AdmittedInstance | undefined;
  media: UploadedMedia[];
}

export interface SubmissionTarget {
  /** Owner named in the URL (`/{username}/submission`), if any. */
  username?: string | undefined;
  /** `/submission` and `/api/v1/submissions` with no owner: credentials always required. */
  ownerless: boolean;
  /** The form named in the URL (`/forms/{pk}/submission`): the instance must be one of its. */
  formId?: number | undefined;
}

export interface SubmissionOutcome {
  status: 201 | 202;
  kind: 'created' | 'edited' | 'duplicate';
  instanceId: number;
  uuid: string;
  form: repo.SubmissionForm;
  submissionDate: string;
}

/** Parsing needs the form's model; it is built once per form definition (hash) and process. */
const modelOf = perDefinition(buildFormModel, 1000);

interface Identity {
  idString: string | undefined;
  formhubUuid: string | undefined;
}

/** The root element's id attribute and the formhub uuid, read without a full parse. */
function peekIdentity(xml: string): Identity {
  const root = /^\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--[\s\S]*?-->\s*)*<[\w:.-]+([^>]*)>/.exec(xml);
  const id = root?.[1] ? /\sid\s*=\s*["']([^"']*)["']/.exec(root[1])?.[1] : undefined;
  const formhub = /<formhub>\s*<uuid>([^<]*)<\/uuid>/.exec(xml)?.[1]?.trim();
  return { idString: id, formhubUuid: formhub || undefined };
}

async function findTargetForm(ctx: RequestContext, identity: Identity, owner: UserRow | undefined): Promise<repo.SubmissionForm> {
  const { idString, formhubUuid } = identity;
  if (formhubUuid) {
    // The form a device downloaded names itself by its uuid, whichever account's address the
    // device posts to (an enumerator's own, for a form shared with them): onadata does the same,
    // and the caller's right to submit to it is checked next.
    const byUuid = await repo.findSubmissionFormByUuid(ctx.db, formhubUuid);
    if (byUuid) return byUuid;
  }
  const account = owner ?? (isAuthenticated(ctx.actor) ? ctx.actor.user : undefined);
  if (!idString) throw errors.submissionXmlMalformed();
  const form = account ? await repo.findSubmissionFormByIdString(ctx.db, account.id, idString) : undefined;
  if (!form) throw errors.noMatch('XForm');
  return form;
}

/** onadata's rules: data-entry roles may submit; others only where neither account nor form require auth. */
async function checkMaySubmit(
  ctx: RequestContext,
  form: repo.SubmissionForm,
  target: SubmissionTarget,
  knownOwner: UserRow | undefined,
): Promise<{ ownerRequireAuth: boolean; role: Role | null }> {
  const owner = knownOwner?.id === form.owner_id ? knownOwner : await findActiveUserById(ctx.db, form.owner_id);
  if (!owner) throw errors.noMatch('XForm');
  const requireAuth = target.ownerless || owner.require_auth || form.require_auth;
  if (!isAuthenticated(ctx.actor)) {
    if (requireAuth) throw errors.notAuthenticated(ctx.challenge);
    return { ownerRequireAuth: owner.require_auth, role: null };
  }
  const role = await callerFormRole(ctx, form.id);
  if (!formStanding(ctx.actor, form, role).allows('report_xform') && requireAuth) {
    throw errors.submissionNotAllowed(ctx.actor.user.username, owner.username, form.title);
  }
  return { ownerRequireAuth: owner.require_auth, role: role ?? null };
}

/**
 * An edit (deprecatedID) of a form whose owner requires auth needs the right to change the form's
 * data (editors), as in onadata: a data-entry role may add records, not replace others'. A role
 * that reads only its own records replaces only those, require_auth or not (mayReplaceRecord).
 */
async function requireEditPermission(ctx: RequestContext, db: DbOrTx, access: SubmissionAccess, edited: repo.InstanceRow): Promise<void> {
  if (!isAuthenticated(ctx.actor)) return;
  if (formStanding(ctx.actor, access.form, access.role ?? undefined).mayReplace(access.ownerRequireAuth, edited.submitted_by)) return;
  // Read inside the caller's transaction: the embedded database has one connection.
  const owner = await findActiveUserById(db, access.form.owner_id);
  throw errors.editNotAllowed(ctx.actor.user.username, owner?.username ?? '', access.form.title);
}

/**
 * The files a re-sent record may add to the stored one: ODK Collect sends a record with many files
 * in several posts of the same instance, so late files are those of the stored version itself
 * (same instanceID, same XML) that have not arrived; files already there are never replaced (see
 * saveAttachment). A re-send of an earlier version, or one whose XML differs, adds nothing. A role
 * that changes only its own records adds files only to those.
 */
async function lateFiles(
  ctx: RequestContext,
  db: DbOrTx,
  access: SubmissionAccess,
  instanceId: number,
  uuid: string,
  xml: string,
  media: readonly UploadedMedia[],
): Promise<readonly UploadedMedia[]> {
  const stored = await repo.findInstanceById(db, access.form.id, instanceId);
  if (!stored || stored.deleted_at || stored.uuid !== uuid || stored.xml !== xml) return [];
  const standing = formStanding(ctx.actor, access.form, access.role ?? undefined);
  if (isAuthenticated(ctx.actor) && standing.role !== undefined && !standing.changes(stored.submitted_by)) {
    throw errors.filesToOthersRecord(ctx.actor.user.username);
  }
  return media;
}

/** Finds the form the submission is for and decides, from the database, whether the caller may submit. */
async function decideAccess(ctx: RequestContext, target: SubmissionTarget, identity: Identity): Promise<SubmissionAccess> {
  let owner: UserRow | undefined;
  if (target.username !== undefined) {
    owner = await findActiveUserByUsername(ctx.db, target.username);
    if (!owner) throw errors.noMatch('XForm');
  }
  const form = await findTargetForm(ctx, identity, owner);
  if (target.formId !== undefined && form.id !== target.formId) throw errors.noMatch('XForm');
  const { ownerRequireAuth, role } = await checkMaySubmit(ctx, form, target, owner);
  if (!form.downloadable) throw errors.formInactive();
  return {
    form,
    ownerLogin: target.username === undefined ? null : target.username.toLowerCase(),
    ownerRequireAuth,
    actorId: isAuthenticated(ctx.actor) ? ctx.actor.user.id : null,
    role,
  };
}

/**
 * The stored record's text: the parsed record's, with the meta keys after it. Written as two texts
 * joined rather than one spread copy of the record: the database stores it as jsonb, which keeps
 * the last of two equal keys, as the spread would have.
 */
function recordJson(meta: InstanceMeta, record: Record<string, unknown>, form: repo.SubmissionForm, uuid: string, status: string): string {
  const fields = JSON.stringify(record);
  const metaKeys = JSON.stringify({
    _uuid: uuid,
    _xform_id_string: meta.idString ?? form.id_string,
    _version: meta.version ?? form.version,
    _status: status,
    _geolocation: meta.geolocation,
    _duration: meta.duration,
    _bamboo_dataset_id: '',
    _tags: [],
    _notes: [],
  });
  return fields === '{}' ? metaKeys : `${fields.slice(0, -1)},${metaKeys.slice(1)}`;
}

/**
 * The instance's text: UTF-8 (what ODK Collect and Enketo send), or the single-byte encoding its
 * XML declaration names. Bytes that are not what they claim are refused, as onadata refuses them,
 * rather than stored with replacement characters.
 */
function decodeInstance(bytes: Uint8Array): string {
  const head = Buffer.from(bytes.subarray(0, 200)).toString('latin1');
  const declared = /^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head)?.[1]?.toLowerCase() ?? 'utf-8';
  const label = declared === 'utf8' ? 'utf-8' : declared;
  try {
    return new TextDecoder(label, { fatal: true }).decode(bytes);
  } catch {
    throw errors.submissionCorrupted();
  }
}

/**
 * Decides from the instance alone, before any file after it is read, whether the caller may
 * submit it: refused (401, 403, 404, 405) otherwise.
 */
export async function admitInstance(ctx: RequestContext, target: SubmissionTarget, bytes: Uint8Array): Promise<AdmittedInstance> {
  if (bytes.byteLength === 0) throw errors.noXmlSubmissionFile();
  if (target.ownerless && !isAuthenticated(ctx.actor)) throw errors.notAuthenticated(ctx.challenge);
  const xml = decodeInstance(bytes);
  return { xml, access: await decideAccess(ctx, target, peekIdentity(xml)) };
}

/**
 * The same refusal from a head of an instance too large to hold before its sender is known to be
 * allowed: its root element and its formhub uuid (wherever it was found) are what name the form.
 */
export async function refuseUnlessMaySubmit(ctx: RequestContext, target: SubmissionTarget, head: string): Promise<void> {
  if (target.ownerless && !isAuthenticated(ctx.actor)) throw errors.notAuthenticated(ctx.challenge);
  await decideAccess(ctx, target, peekIdentity(head));
}

export async function receiveSubmission(ctx: RequestContext, target: SubmissionTarget, upload: SubmissionUpload, status = 'submitted_via_web'): Promise<SubmissionOutcome> {
  if (upload.admitted) {
    const outcome = await store(ctx, upload.admitted.xml, upload, status, upload.admitted.access, false);
    if (!outcome) throw new Error('a fresh submit decision was refused');
    return outcome;
  }
  if (!upload.xml || upload.xml.byteLength === 0) throw errors.noXmlSubmissionFile();
  if (target.ownerless && !isAuthenticated(ctx.actor)) throw errors.notAuthenticated(ctx.challenge);
  const xml = decodeInstance(upload.xml);
  const identity = peekIdentity(xml);
  // Remembered decisions serve only submissions without media, which are re-checked inside their
  // one insert statement; anything else (media, an edit, a refusal) is decided afresh.
  const targets = ctx.submissionTargets;
  const key = SubmissionTargets.key(target.ownerless, target.formId === undefined ? target.username : `${target.username ?? ''}/forms/${target.formId}`, identity.idString, identity.formhubUuid, isAuthenticated(ctx.actor) ? ctx.actor.user.id : null);
  const nowMs = ctx.clock.now().getTime();
  const remembered = upload.media.length === 0 ? targets.get(key, nowMs) : undefined;
  if (remembered) {
    try {
      const outcome = await store(ctx, xml, upload, status, remembered, true);
      if (outcome) return outcome;
    } catch (error) {
      if (!isAppError(error)) throw error;
    }
    targets.forget(key);
  }
  const access = await decideAccess(ctx, target, identity);
  if (upload.media.length === 0) targets.set(key, access, nowMs);
  const outcome = await store(ctx, xml, upload, status, access, false);
  if (!outcome) throw new Error('a fresh submit decision was refused');
  return outcome;
}

/**
 * Parses and stores the submission under an access decision. A remembered decision (`recheck`)
 * is used only for the single-statement insert, which re-checks it; undefined: decide again.
 */
async function store(ctx: RequestContext, xml: string, upload: SubmissionUpload, status: string, access: SubmissionAccess, recheck: boolean): Promise<SubmissionOutcome | undefined> {
  const { form } = access;
  const model = await modelOf(ctx.db, form);
  const parsed = parseInstance(xml, model, { maxBytes: ctx.config.instanceLimitBytes });
  if (!parsed.ok) throw errors.submissionUnreadable(parsed.error);
  const { record, meta } = parsed;
  if (form.encrypted && !meta.encrypted) throw errors.unencryptedSubmission();
  for (const media of upload.media) {
    if (media.name.length > 100) throw errors.attachmentNameTooLong();
  }

  // An instanceID without the `uuid:` prefix is not a uuid: onadata stores a fresh one.
  const uuid = meta.uuid ?? randomUUID();
  const now = meta.submissionDate ? new Date(meta.submissionDate) : ctx.clock.now();
  const when = Number.isNaN(now.getTime()) ? ctx.clock.now() : now;
  const submitter = isAuthenticated(ctx.actor) ? ctx.actor.user.id : null;
  const json = recordJson(meta, record, form, uuid, status);
  const referenced = new Set(meta.mediaFiles);
  const media = await Promise.all(
    upload.media.filter((m) => referenced.has(m.name)).map(async (m) => ({ ...m, contentType: await attachmentContentType(m.name, m.contentType, m.content) })),
  );
  const hasGeopoint = meta.geolocation[0] !== null;
  // Read before the transaction: parsing a file must not hold the database.
  const osmAnswers = await readOsmAnswers(model.topLevelOsmPaths, record, media);

  const submissionDate = isoTimestamp(when);
  const newInstance = {
    form_id: form.id, uuid, xml, json, version: meta.version ?? form.version, submitted_by: submitter, date_created: when, total_media: referenced.size, has_geopoint: hasGeopoint,
    repeat_counts: meta.repeatCounts,
  };
  const done = (kind: SubmissionOutcome['kind'], instanceId: number): SubmissionOutcome => ({
    status: kind === 'duplicate' ? 202 : 201, kind, instanceId, uuid, form, submissionDate,
  });
  /** The stored record with this uuid, or one of whose earlier versions had it, for a duplicate. */
  const existingId = async (db: DbOrTx): Promise<number> => {
    const existing = (await repo.findInstanceByUuid(db, form.id, uuid))?.id ?? (await repo.recordOfArchivedUuid(db, form.id, uuid));
    if (existing === undefined) throw new Error('duplicate instance vanished');
    return existing;
  };

  // The common case, a submission without media or edit, is one statement and no transaction.
  if (media.length === 0 && !meta.deprecatedUuid) {
    if (!recheck) {
      const created = await repo.insertInstanceCounted(ctx.db, newInstance);
      return created !== undefined ? done('created', created) : done('duplicate', await existingId(ctx.db));
    }
    const checked = await insertRememberedBatched(ctx.db, ctx.config.databaseUrl === undefined, newInstance, access);
    if (!checked.allowed) return undefined;
    return checked.id !== undefined ? done('created', checked.id) : done('duplicate', await existingId(ctx.db));
  }
  if (recheck) return undefined;

  const outcome = await inTransaction(ctx.db, async (trx) => {
    let instanceId: number;
    let kind: SubmissionOutcome['kind'];
    if (meta.deprecatedUuid) await repo.lockInstanceUuid(trx, form.id, meta.deprecatedUuid);
    const edited = meta.deprecatedUuid ? await repo.lockInstanceByUuid(trx, form.id, meta.deprecatedUuid) : undefined;
    if (meta.deprecatedUuid && !(edited && !edited.deleted_at)) {
      // The version this edit started from was already replaced: another edit won (onadata's 409),
      // unless this very edit was stored before and is being re-sent.
      const resent = (await repo.findInstanceByUuid(trx, form.id, uuid)) !== undefined || (await repo.uuidInHistory(trx, form.id, uuid));
      if (!resent && (await repo.uuidInHistory(trx, form.id, meta.deprecatedUuid))) {
        throw errors.submissionModified();
      }
    }
    if (edited && !edited.deleted_at) {
      await requireEditPermission(ctx, trx, access, edited);
      await repo.archiveAndReplace(trx, edited, {
        uuid, xml, json, version: meta.version ?? form.version, total_media: referenced.size, has_geopoint: hasGeopoint, repeat_counts: meta.repeatCounts,
        editedBy: submitter, now: ctx.clock.now(),
      });
      instanceId = edited.id;
      kind = 'edited';
      await queueDeliveries(trx, form.id, [instanceId], 'edited');
    } else {
      const created = await repo.insertInstanceCounted(trx, newInstance);
      kind = created === undefined ? 'duplicate' : 'created';
      instanceId = created ?? (await existingId(trx));
    }
    const files = kind === 'duplicate' && media.length > 0 ? await lateFiles(ctx, trx, access, instanceId, uuid, xml, media) : media;
    const stored: string[] = [];
    for (const file of files) {
      const blob = await putBlob(trx, file.content, file.contentType);
      const written = await repo.saveAttachment(
        trx,
        { instance_id: instanceId, name: file.name, mimetype: file.contentType, blob, size: file.size, date_created: ctx.clock.now() },
        kind !== 'duplicate',
      );
      if (written) stored.push(file.name);
    }
    await storeOsmAnswers(trx, { formId: form.id, instanceId, osmPaths: model.topLevelOsmPaths, now: ctx.clock.now() }, osmAnswers, stored, kind === 'edited');
    if (files.length || kind === 'edited') await repo.refreshMediaCount(trx, instanceId, [...referenced]);
    // A re-sent record bringing its late files changes what its exports and filters show
    // (media links and counts, media_all_received, the attachments zip): stored exports and
    // cached matches of the form's data must not be reused.
    if (kind === 'duplicate' && files.length > 0) await repo.noteRecordsChanged(trx, form.id);
    return { instanceId, kind };
  });
  return done(outcome.kind, outcome.instanceId);
}
