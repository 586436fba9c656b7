// onadata's Enketo links, answered with this server's own web forms: which address fills, previews
// or submits a form once, and which edits a record.
import { requireUser } from '../../access/index.ts';
import { requireForm } from '../../access/load.ts';
import type { RequestContext } from '../../context.ts';
import { getRecordXml } from '../submissions/data.ts';
import { editUrl, fillUrl, previewUrl, singleSubmitUrl } from './urls.ts';

/**
 * GET /api/v1/forms/{pk}/enketo: for those who may submit to the form (data entry and above, not
 * the read-only roles). `survey_type=single` answers only the single-submit address,
 * `survey_type=preview` (or `show_preview=true`) only the preview's.
 */
export async function formLinks(ctx: RequestContext, rawId: string, query: Readonly<Record<string, string | undefined>>): Promise<Record<string, string>> {
  requireUser(ctx.actor);
  const { form } = await requireForm(ctx, rawId, 'report_xform');
  if (query['survey_type'] === 'single') return { single_submit_url: singleSubmitUrl(ctx.baseUrl, form.id) };
  if (query['survey_type'] === 'preview' || query['show_preview']?.toLowerCase() === 'true') return { enketo_preview_url: previewUrl(ctx.baseUrl, form.id) };
  return { enketo_url: fillUrl(ctx.baseUrl, form.id), enketo_preview_url: previewUrl(ctx.baseUrl, form.id), single_submit_url: singleSubmitUrl(ctx.baseUrl, form.id) };
}

/**
 * GET /api/v1/data/{pk}/{dataid}/enketo?return_url=: the edit page of a record the caller can read;
 * whether the edit may be stored is decided when it is submitted, as for a device's edit.
 */
export async function recordEditLink(ctx: RequestContext, rawId: string, rawDataId: string, returnUrl: string | undefined): Promise<{ url: string }> {
  requireUser(ctx.actor);
  await getRecordXml(ctx, rawId, rawDataId);
  return { url: editUrl(ctx.baseUrl, Number(rawId), Number(rawDataId), returnUrl) };
}
