// OpenRosa Form List API: the forms a device may download, their XForms and their media manifests.
import type { RequestContext } from '../../context.ts';
import { errors } from '../../errors.ts';
import { isAuthenticated } from '../../access/index.ts';
import { formsAllowing } from '../../access/load.ts';
import { findActiveUserByUsername, type UserRow } from '../accounts/repository.ts';
import * as forms from '../forms/repository.ts';
import { LINKED_DATASET_QUERY, linkedDatasetCsv, linkedDatasetHash, parseLinkedDataset } from '../exports/linked-dataset.ts';
import type { ExportFile } from '../exports/render.ts';
import * as metadata from '../metadata/repository.ts';
import { readBlobChunks } from '../blobs/repository.ts';
import { formListXml, manifestXml, mediaHash, type ManifestEntry } from './xml.ts';

/** The account named in an owner-scoped URL; anonymous callers pass only when it does not require auth. */
async function ownerOf(ctx: RequestContext, username: string | undefined): Promise<UserRow | undefined> {
  if (username === undefined) {
    if (!isAuthenticated(ctx.actor)) throw errors.notAuthenticated(ctx.challenge);
    return undefined;
  }
  const owner = await findActiveUserByUsername(ctx.db, username);
  if (!owner) throw errors.notFound();
  if (owner.require_auth && !isAuthenticated(ctx.actor)) throw errors.notAuthenticated(ctx.challenge);
  return owner;
}

/** Downloadable forms the caller may fetch: their own and shared ones, and an owner's public ones. */
async function listableForms(ctx: RequestContext, owner: UserRow | undefined): Promise<forms.FormRow[]> {
  let rows: forms.FormRow[];
  if (isAuthenticated(ctx.actor)) {
    const actorId = ctx.actor.user.id;
    // An enumerator's own address lists the forms shared with them too (onadata's
    // get_forms_shared_with_user), so Collect set up with their account finds them.
    const own = owner?.id === actorId;
    rows = await forms.listLiveForms(ctx.db, { memberId: actorId, ...(owner && !own ? { ownerId: owner.id } : {}) });
    // Roles that cannot submit (read-only) do not get the form on their devices.
    rows = await formsAllowing(ctx, rows, 'report_xform');
    if (owner && !own) {
      const known = new Set(rows.map((r) => r.id));
      for (const row of await forms.listLiveForms(ctx.db, { ownerId: owner.id, sharedOnly: true })) if (!known.has(row.id)) rows.push(row);
    }
  } else {
    // A device without credentials lists the owner's forms, as onadata allows unless require_auth.
    rows = owner ? await forms.listLiveForms(ctx.db, { ownerId: owner.id }) : [];
  }
  return rows.filter((r) => r.downloadable && (!r.require_auth || isAuthenticated(ctx.actor)));
}

function formXmlUrl(ctx: RequestContext, form: forms.FormRow): string {
  return `${ctx.baseUrl}/${encodeURIComponent(form.owner_username)}/forms/${form.id}/form.xml`;
}

function manifestUrl(ctx: RequestContext, form: forms.FormRow): string {
  return `${ctx.baseUrl}/${encodeURIComponent(form.owner_username)}/xformsManifest/${form.id}`;
}

export async function formList(ctx: RequestContext, username: string | undefined, formId: string | undefined): Promise<string> {
  const owner = await ownerOf(ctx, username);
  let rows = await listableForms(ctx, owner);
  if (formId) rows = rows.filter((r) => r.id_string.toLowerCase() === formId.toLowerCase());
  return formListOf(ctx, rows);
}

/**
 * GET /forms/{pk}/formList (onadata's form-scoped list): the one form, as its owner's list shows it
 * to this caller (anonymous unless the owner requires auth), or an empty list.
 */
export async function formListOfForm(ctx: RequestContext, rawId: string): Promise<string> {
  const owner = await ownerOfFormId(ctx, rawId);
  const id = Number(rawId);
  return formListOf(ctx, (await listableForms(ctx, owner)).filter((r) => r.id === id));
}

/** The owner of a live form given by its id in a form-scoped OpenRosa URL, who must let the caller in. */
export async function ownerOfFormId(ctx: RequestContext, rawId: string): Promise<UserRow> {
  const form = /^\d{1,9}$/.test(rawId) ? await forms.findLiveForm(ctx.db, Number(rawId)) : undefined;
  if (!form) throw errors.noMatch('XForm');
  const owner = await ownerOf(ctx, form.owner_username);
  if (!owner) throw errors.noMatch('XForm');
  return owner;
}

async function formListOf(ctx: RequestContext, rows: readonly forms.FormRow[]): Promise<string> {
  const ids = rows.map((r) => r.id);
  const withMedia = new Set([...(await forms.formsWithItemsets(ctx.db, ids)), ...(await metadata.formsWithMedia(ctx.db, ids))].map(String));
  return formListXml(
    rows.map((form) => ({
      idString: form.id_string,
      title: form.title,
      version: form.version,
      hash: form.hash,
      description: form.description,
      downloadUrl: formXmlUrl(ctx, form),
      ...(withMedia.has(String(form.id)) ? { manifestUrl: manifestUrl(ctx, form) } : {}),
    })),
  );
}

/** A form the caller may download through the OpenRosa routes. */
async function downloadableForm(ctx: RequestContext, username: string | undefined, rawId: string): Promise<forms.FormRow> {
  const owner = await ownerOf(ctx, username);
  const id = /^\d+$/.test(rawId) ? Number(rawId) : NaN;
  const form = (await listableForms(ctx, owner)).find((f) => f.id === id);
  if (!form) throw errors.noMatch('XForm');
  return form;
}

export async function formXml(ctx: RequestContext, username: string | undefined, rawId: string): Promise<string> {
  const form = await downloadableForm(ctx, username, rawId);
  return (await forms.findFormDefinition(ctx.db, form.id)).xml;
}

/**
 * GET /forms/{pk}/form.xml: the XForm as its owner's address gives it to this caller. A web form
 * page asks for it with /forms/{pk}/formList, at once, instead of reading its address from the
 * list first.
 */
export async function formXmlOfForm(ctx: RequestContext, rawId: string): Promise<string> {
  return formXml(ctx, (await ownerOfFormId(ctx, rawId)).username, rawId);
}

function mediaUrl(ctx: RequestContext, form: forms.FormRow, file: string): string {
  return `${ctx.baseUrl}/${encodeURIComponent(form.owner_username)}/xformsMedia/${form.id}/${file}`;
}

/** The name a device saves a media link under: the last segment of its address. */
function linkFileName(address: string): string {
  try {
    const url = new URL(address);
    return decodeURIComponent(url.pathname.split('/').pop() ?? '') || url.hostname;
  } catch {
    return address;
  }
}

/**
 * A form's media as a manifest lists it: the itemsets.csv the converter made for external choices,
 * then the media entries (uploaded files; links, which download through a redirect; linked forms'
 * records as CSV).
 */
async function mediaOf(ctx: RequestContext, form: forms.FormRow): Promise<ManifestEntry[]> {
  const entries: ManifestEntry[] = [];
  const { itemsets_csv: itemsets } = await forms.findFormDefinition(ctx.db, form.id);
  if (itemsets) entries.push({ filename: 'itemsets.csv', hash: mediaHash(itemsets), downloadUrl: mediaUrl(ctx, form, 'itemsets.csv') });
  for (const row of await metadata.listFormMedia(ctx.db, form.id)) {
    const linked = row.data_file === null ? parseLinkedDataset(row.data_value) : undefined;
    if (linked) {
      const downloadUrl = `${mediaUrl(ctx, form, `${row.id}.csv`)}?${LINKED_DATASET_QUERY}`;
      entries.push({ filename: linked.fileName, hash: await linkedDatasetHash(ctx, linked.formId), downloadUrl });
      continue;
    }
    const name = row.data_file === null ? linkFileName(row.data_value) : row.data_value;
    const dot = name.lastIndexOf('.');
    const extension = dot > 0 ? name.slice(dot + 1).toLowerCase().replace(/[^a-z0-9]/g, '') : '';
    // A link's content is not known here: its hash is that of its address, so a new address is a new file.
    entries.push({ filename: name, hash: row.file_hash ?? mediaHash(row.data_value), downloadUrl: mediaUrl(ctx, form, extension ? `${row.id}.${extension}` : String(row.id)) });
  }
  return entries;
}

export async function manifest(ctx: RequestContext, username: string | undefined, rawId: string): Promise<string> {
  return manifestXml(await mediaOf(ctx, await downloadableForm(ctx, username, rawId)));
}

/** GET /forms/{pk}/xformsManifest: the manifest as its owner's address gives it to this caller. */
export async function manifestOfForm(ctx: RequestContext, rawId: string): Promise<string> {
  return manifest(ctx, (await ownerOfFormId(ctx, rawId)).username, rawId);
}

/** A media file a device downloads: itemsets.csv, or a media entry by id (`7` or `7.png`). */
export type MediaDownload =
  | { readonly kind: 'text'; readonly content: string; readonly contentType: string; readonly fileName: string }
  | { readonly kind: 'file'; readonly size: number; readonly content: AsyncIterable<Uint8Array>; readonly contentType: string; readonly fileName: string }
  | { readonly kind: 'redirect'; readonly location: string }
  | { readonly kind: 'export'; readonly file: ExportFile; readonly fileName: string };

export async function mediaFile(ctx: RequestContext, username: string | undefined, rawId: string, fileName: string, query: Record<string, string | undefined>): Promise<MediaDownload> {
  const form = await downloadableForm(ctx, username, rawId);
  if (fileName === 'itemsets.csv') {
    const { itemsets_csv: itemsets } = await forms.findFormDefinition(ctx.db, form.id);
    if (!itemsets) throw errors.notFound();
    return { kind: 'text', content: itemsets, contentType: 'text/csv; charset=utf-8', fileName };
  }
  const id = /^(\d{1,9})(?:\.[A-Za-z0-9]+)?$/.exec(fileName)?.[1];
  const found = id === undefined ? undefined : await metadata.findFormMediaFile(ctx.db, form.id, Number(id));
  if (!found) throw errors.notFound();
  if (found.file) return { kind: 'file', size: found.file.size, content: readBlobChunks(ctx.db, found.file), contentType: found.row.data_file_type ?? 'application/octet-stream', fileName: found.row.data_value };
  const linked = found.row.data_file === null ? parseLinkedDataset(found.row.data_value) : undefined;
  if (linked) {
    const file = await linkedDatasetCsv(ctx, linked.formId, query, ctx.baseUrl);
    if (!file) throw errors.notFound();
    return { kind: 'export', file, fileName: linked.fileName };
  }
  if (found.row.data_file === null && /^https?:\/\//i.test(found.row.data_value)) return { kind: 'redirect', location: found.row.data_value };
  throw errors.notFound();
}
