// survey_preview: compile CSV XLSForm text, keep it under a random name, serve its XForm later.
import { randomBytes } from 'node:crypto';
import { convert } from '../../../packages/xlsform/src/index.ts';
import type { RequestContext } from '../../context.ts';
import { errors } from '../../errors.ts';
import { requireUser } from '../../access/index.ts';
import { findActiveUserByUsername } from '../accounts/repository.ts';
import { findSurveyDraft, insertSurveyDraft } from './drafts-repository.ts';
import { draftPreviewUrl } from '../webforms/urls.ts';

/** A preview request (forms/inputs.ts reads it). */
export interface SurveyPreviewInput {
  /** The CSV XLSForm text; absent when missing or blank. */
  body?: string;
}

/**
 * POST /api/v1/forms/survey_preview. Beside onadata's two fields, `enketo_preview_url`: the web
 * form page that previews the draft (nothing it takes is stored).
 */
export async function createSurveyPreview(ctx: RequestContext, input: SurveyPreviewInput): Promise<{ unique_string: string; username: string; enketo_preview_url: string }> {
  const actor = requireUser(ctx.actor);
  const { body } = input;
  if (body === undefined) throw errors.previewBodyMissing();
  const uniqueString = `survey_draft_${randomBytes(3).toString('hex')}.csv`;
  const result = convert(body, { fileName: uniqueString });
  if (!result.ok) throw errors.previewInvalid(result.errors.map((e) => e.message).join('\n'));
  await insertSurveyDraft(ctx.db, { user_id: actor.id, unique_string: uniqueString, body, created_at: ctx.clock.now() });
  return { unique_string: uniqueString, username: actor.username, enketo_preview_url: draftPreviewUrl(ctx.baseUrl, actor.username, uniqueString) };
}

export async function surveyPreviewXml(ctx: RequestContext, query: { username?: string | undefined; filename?: string | undefined }): Promise<string> {
  if (!query.username) throw errors.previewUsernameMissing();
  if (!query.filename) throw errors.previewFilenameMissing();
  const user = await findActiveUserByUsername(ctx.db, query.username);
  const draft = user ? await findSurveyDraft(ctx.db, user.id, query.filename) : undefined;
  const failed = (): never => {
    throw errors.previewPublishFailed();
  };
  if (!draft) return failed();
  const result = convert(draft.body, { fileName: draft.unique_string });
  return result.ok ? result.xform : failed();
}
