// The Briefcase Aggregate API (onadata's BriefcaseViewset): submissionList pages a form's record
// ids by key, downloadSubmission answers one record with its files' links. Who reads which records
// is the data API's rule (access requireForm's view_xform_data); a caller without credentials who reads nothing
// is asked for them (Briefcase sends Digest only after a challenge).
import { createHash } from 'node:crypto';
import type { RequestContext } from '../../context.ts';
import { errors } from '../../errors.ts';
import { isAuthenticated } from '../../access/index.ts';
import { grantForm } from '../../access/load.ts';
import { findActiveUserByUsername } from '../accounts/repository.ts';
import { readBlobChunks } from '../blobs/repository.ts';
import * as forms from '../forms/repository.ts';
import { nextCursor, parseCursor, parsePageSize } from './cursor.ts';
import { parseSubmissionKey } from './submission-key.ts';
import * as repo from './repository.ts';
import { idChunkXml, instanceForBriefcase, submissionXml, type SubmissionMediaFile } from './xml.ts';

interface ReadableForm {
  form: forms.FormRow;
  /** Set when the caller reads only the records they submitted: the caller's id. */
  submittedBy: number | undefined;
}

/** The form named by id_string, under `username` or, without one, among the caller's forms. */
async function findNamedForm(ctx: RequestContext, username: string | undefined, idString: string): Promise<forms.FormRow | undefined> {
  if (username !== undefined) {
    const owner = await findActiveUserByUsername(ctx.db, username);
    if (!owner) throw errors.notFound();
    return forms.findLiveFormByIdString(ctx.db, owner.id, idString);
  }
  if (!isAuthenticated(ctx.actor)) throw errors.notAuthenticated(ctx.challenge);
  const actorId = ctx.actor.user.id;
  const wanted = idString.toLowerCase();
  const candidates = (await forms.listLiveForms(ctx.db, { memberId: actorId })).filter((f) => f.id_string.toLowerCase() === wanted);
  // The caller's own form wins over one shared with them under the same id_string.
  return candidates.find((f) => f.owner_id === actorId) ?? candidates[0];
}

/**
 * The form and the records of it the caller reads, by the data API's rule: a form the caller may
 * not see is not found; one they see but whose records they may not read is 403; without
 * credentials, anything short of public data is a 401 with the challenge.
 */
async function loadReadableForm(ctx: RequestContext, username: string | undefined, idString: string): Promise<ReadableForm> {
  const form = await findNamedForm(ctx, username, idString);
  if (!form) throw isAuthenticated(ctx.actor) ? errors.noMatch('XForm') : errors.notAuthenticated(ctx.challenge);
  const { submittedBy } = await grantForm(ctx, form, 'view_xform_data', { anonymous: 'challenge' });
  return { form, submittedBy };
}

export interface SubmissionListQuery {
  formId?: string | undefined;
  numEntries?: string | undefined;
  cursor?: string | undefined;
}

/** GET [/{username}]/view/submissionList: a page of record ids and the cursor of the next page. */
export async function submissionList(ctx: RequestContext, username: string | undefined, query: SubmissionListQuery): Promise<string> {
  const rawFormId = (query.formId ?? '').trim();
  // Some clients send the full submission key's form part (`id[@version=…]`): the id_string is before the bracket.
  const idString = rawFormId.split('[')[0]?.trim() ?? '';
  if (idString === '') throw errors.briefcaseFormIdMissing();
  const cursor = parseCursor(query.cursor);
  if (!cursor.ok) throw errors.briefcaseParameterInvalid(cursor.message);
  const size = parsePageSize(query.numEntries);
  if (!size.ok) throw errors.briefcaseParameterInvalid(size.message);
  const { form, submittedBy } = await loadReadableForm(ctx, username, idString);
  const rows = await repo.listRecordIdPage(ctx.db, { formId: form.id, after: cursor.after, limit: size.size, submittedBy, completeMediaOnly: form.encrypted });
  return idChunkXml(
    rows.map((r) => r.uuid),
    nextCursor(cursor.after, rows.map((r) => r.id)),
  );
}

/** onadata's submissionDate: the record's arrival time as Python's isoformat() writes it in UTC. */
function isoWithOffset(date: Date): string {
  return date.toISOString().replace('Z', '+00:00');
}

async function md5OfBlob(ctx: RequestContext, file: repo.RecordFile): Promise<string> {
  const hash = createHash('md5');
  for await (const chunk of readBlobChunks(ctx.db, { sha256: file.blob, size: file.size })) hash.update(chunk);
  return `md5:${hash.digest('hex')}`;
}

/** GET [/{username}]/view/downloadSubmission?formId=<key>: the record and its files' links. */
export async function downloadSubmission(ctx: RequestContext, username: string | undefined, rawKey: string | undefined): Promise<string> {
  const parsed = parseSubmissionKey(rawKey);
  if (!parsed.ok) throw errors.briefcaseParameterInvalid(parsed.message);
  const { form, submittedBy } = await loadReadableForm(ctx, username, parsed.key.idString);
  const record = await repo.findLiveRecordByUuid(ctx.db, form.id, parsed.key.uuid);
  if (!record || (submittedBy !== undefined && record.submitted_by !== submittedBy)) throw errors.noMatch('Instance');
  const media: SubmissionMediaFile[] = [];
  for (const file of await repo.listRecordFiles(ctx.db, record.id)) {
    media.push({
      filename: file.name,
      // Files are stored by SHA-256; the MD5 Briefcase compares is computed as the file is read.
      hash: await md5OfBlob(ctx, file),
      downloadUrl: `${ctx.baseUrl}/api/v1/files/${file.id}?filename=${encodeURIComponent(file.name)}`,
    });
  }
  const date = isoWithOffset(record.date_created);
  return submissionXml(instanceForBriefcase(record.xml, { instanceID: `uuid:${record.uuid}`, submissionDate: date }), media);
}
