// OpenRosa Form List API: the forms a device may download, their XForms and their media manifests.
import type { RequestContext } from '../../context.ts';
import { errors } from '../../errors.ts';
import { isAuthenticated } from '../../access/index.ts';
import { findActiveUserByUsername, type UserRow } from '../accounts/repository.ts';
import * as forms from '../forms/repository.ts';
import { formListXml, manifestXml, type MediaEntry } from './xml.ts';

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
    rows = await forms.listLiveForms(ctx.db, { memberId: ctx.actor.user.id, ...(owner ? { ownerId: owner.id } : {}) });
    if (owner) {
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
  const withMedia = new Set((await forms.formsWithItemsets(ctx.db, rows.map((r) => r.id))).map(String));
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

async function mediaOf(ctx: RequestContext, form: forms.FormRow): Promise<MediaEntry[]> {
  const { itemsets_csv: itemsets } = await forms.findFormDefinition(ctx.db, form.id);
  if (!itemsets) return [];
  return [{ filename: 'itemsets.csv', content: itemsets, downloadUrl: `${ctx.baseUrl}/${encodeURIComponent(form.owner_username)}/xformsMedia/${form.id}/itemsets.csv` }];
}

export async function manifest(ctx: RequestContext, username: string | undefined, rawId: string): Promise<string> {
  return manifestXml(await mediaOf(ctx, await downloadableForm(ctx, username, rawId)));
}

export async function mediaFile(ctx: RequestContext, username: string | undefined, rawId: string, fileName: string): Promise<string | Uint8Array> {
  const media = (await mediaOf(ctx, await downloadableForm(ctx, username, rawId))).find((m) => m.filename === fileName);
  if (!media) throw errors.notFound();
  return media.content;
}
