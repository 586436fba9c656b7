// POST [/{username}]/formUpload: Briefcase pushes a blank form (form_def_file, an XForm) and its
// media files, as onadata's BriefcaseViewset.create takes them. The XForm is published as it is,
// through the same publish path as an XLSForm; each media file becomes a media entry of the form.
import type { RequestContext } from '../../context.ts';
import { errors } from '../../errors.ts';
import { requireUser } from '../../access/index.ts';
import type { ParsedBody } from '../../lib/uploaded-body.ts';
import { findActiveUserByUsername } from '../accounts/repository.ts';
import * as forms from '../forms/repository.ts';
import { publishNewForm } from '../forms/publish.ts';
import { publishTarget } from '../forms/service.ts';
import { createMetadata } from '../metadata/service.ts';
import * as metadata from '../metadata/repository.ts';
import { readXForm } from './xform-json.ts';

const FORM_FIELD = 'form_def_file';

/** The published form's id_string, for onadata's "<id_string> successfully published." */
export async function formUpload(ctx: RequestContext, username: string | undefined, body: ParsedBody): Promise<string> {
  requireUser(ctx.actor);
  if (username !== undefined && !(await findActiveUserByUsername(ctx.db, username))) throw errors.notFound();
  const owner = await publishTarget(ctx, username);
  const file = body.files.get(FORM_FIELD);
  if (!file) throw errors.briefcaseXmlMissing();
  const xml = new TextDecoder('utf-8', { fatal: false }).decode(file.bytes);
  const read = readXForm(xml);
  if (!read.ok) throw errors.briefcaseXFormUnreadable(read.message);
  const existing = await forms.findLiveFormByIdString(ctx.db, owner.id, read.idString);
  const media = [...body.files.values()].filter((f) => f.fieldName !== FORM_FIELD);
  let formId: number;
  if (existing) {
    // Briefcase sends a form's media in parts of 10 MB, each with the form again: a later part
    // adds its files to the form the first part published. Without files it is a duplicate.
    if (media.length === 0) throw errors.briefcaseFormExists();
    formId = existing.id;
  } else {
    const published = await publishNewForm(ctx, {
      source: { fileName: file.fileName || `${read.idString}.xml`, bytes: file.bytes, contentType: 'text/xml' },
      owner,
      projectId: undefined,
      createdBy: requireUser(ctx.actor),
      converted: {
        ok: true,
        xform: xml,
        formJson: read.formJson,
        warnings: [],
        idString: read.idString,
        title: read.title,
        ...(read.version !== undefined ? { version: read.version } : {}),
        defaultLanguage: 'default',
        ...(read.publicKey !== undefined ? { publicKey: read.publicKey } : {}),
      },
    });
    formId = published.formId;
  }
  const present = new Set((await metadata.listFormMedia(ctx.db, formId)).map((row) => row.data_value));
  for (const entry of media) {
    const name = entry.fileName || entry.fieldName;
    if (present.has(name)) continue;
    await createMetadata(ctx, { formRef: String(formId), dataType: 'media', file: { ...entry, fileName: name }, fieldErrors: {} });
    present.add(name);
  }
  return read.idString;
}
