// Reading the form routes' bodies and list query into the services' typed inputs, with DRF's
// coercions and per-field messages. Nothing here throws: the services answer the problems found
// (with their lookups') after their access checks, in the order onadata does.
import type { FieldErrors } from '../../errors.ts';
import { isRole } from '../../access/index.ts';
import type { ParsedBody } from '../../lib/uploaded-body.ts';
import { asPayload, has, parseBoolean, readBoolean, readString } from '../../http/payload.ts';
import { addError } from '../accounts/validation.ts';
import { parseTags, parseUserRef } from '../shared/members.ts';
import type { CloneFormInput, FormListQuery, FormSettingsInput, ShareFormInput, UpdateFormInput } from './service.ts';
import type { SurveyPreviewInput } from './preview.ts';

/** GET /api/v1/forms's filters. */
export function formListQuery(query: { owner?: string | undefined; tags?: string | undefined; tag?: string | undefined; instances_with_osm?: string | undefined }): FormListQuery {
  const osm = query.instances_with_osm === undefined ? undefined : parseBoolean(query.instances_with_osm);
  return {
    ...(query.owner !== undefined ? { owner: query.owner } : {}),
    tags: parseTags(query.tags ?? query.tag ?? ''),
    ...(osm !== undefined ? { instancesWithOsm: osm } : {}),
  };
}

const PUT_REQUIRED = ['uuid', 'description', 'downloadable', 'owner', 'public', 'public_data', 'title'] as const;

function formSettingsInput(body: ParsedBody, full: boolean): FormSettingsInput {
  const payload = asPayload(body.fields);
  const fieldErrors: FieldErrors = {};
  if (full) for (const key of PUT_REQUIRED) if (!has(payload, key)) addError(fieldErrors, key, ['This field is required.']);
  const title = readString(payload, 'title', fieldErrors, { allowBlank: false });
  if (title !== undefined && title.length > 255) addError(fieldErrors, 'title', ['Ensure this field has no more than 255 characters.']);
  const description = readString(payload, 'description', fieldErrors);
  const downloadable = readBoolean(payload, 'downloadable', fieldErrors);
  const shared = readBoolean(payload, 'public', fieldErrors);
  const sharedData = readBoolean(payload, 'public_data', fieldErrors);
  const requireAuth = readBoolean(payload, 'require_auth', fieldErrors);
  let owner: string | undefined;
  if (has(payload, 'owner')) {
    const ref = parseUserRef(payload['owner']);
    if (ref.ok) owner = ref.username;
    else addError(fieldErrors, 'owner', [ref.message]);
  }
  return {
    ...(title !== undefined ? { title } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(downloadable !== undefined ? { downloadable } : {}),
    ...(shared !== undefined ? { shared } : {}),
    ...(sharedData !== undefined ? { sharedData } : {}),
    ...(requireAuth !== undefined ? { requireAuth } : {}),
    ...(owner !== undefined ? { owner } : {}),
    fieldErrors,
  };
}

/** PUT (`full`) or PATCH /api/v1/forms/{pk}: the form's settings, or a new XLSForm. */
export function updateFormInput(body: ParsedBody, full: boolean): UpdateFormInput {
  const payload = asPayload(body.fields);
  const replaces = body.files.size > 0 || ['xls_url', 'dropbox_xls_url', 'text_xls_form'].some((k) => has(payload, k));
  return { full, replaces, body, settings: formSettingsInput(body, full) };
}

/** POST /api/v1/forms/{pk}/labels: comma- or space-separated `tags`. */
export function labelsInput(body: unknown): string[] {
  return parseTags(asPayload(body)['tags']);
}

/** POST /api/v1/forms/{pk}/share: `usernames` (comma-separated) or `username`, and `role`. */
export function shareFormInput(body: unknown): ShareFormInput {
  const payload = asPayload(body);
  const raw = typeof payload['usernames'] === 'string' && payload['usernames'] ? payload['usernames'] : payload['username'];
  const roleValue = payload['role'];
  let role: ShareFormInput['role'];
  if (roleValue === undefined || roleValue === null || roleValue === '') role = { ok: false, message: 'This field may not be null.' };
  else if (typeof roleValue !== 'string' || !isRole(roleValue)) role = { ok: false, message: `Unknown role '${String(roleValue)}'.` };
  else role = { ok: true, role: roleValue };
  return {
    ...(typeof raw === 'string' && raw.trim() ? { usernames: raw.split(',').map((n) => n.trim()).filter(Boolean) } : {}),
    role,
  };
}

/** POST /api/v1/forms/{pk}/clone: `username` and optionally `project_id`. */
export function cloneFormInput(body: unknown): CloneFormInput {
  const payload = asPayload(body);
  const username = payload['username'];
  const projectField = payload['project_id'];
  let project: CloneFormInput['project'];
  if (projectField !== undefined && projectField !== null && projectField !== '') {
    const id = Number(projectField);
    project = Number.isInteger(id) ? { ok: true, id } : { ok: false, given: String(projectField) };
  }
  return {
    ...(typeof username === 'string' && username.trim() ? { username: username.trim() } : {}),
    ...(project !== undefined ? { project } : {}),
  };
}

/** POST /api/v1/forms/survey_preview: the CSV XLSForm text in `body`. */
export function surveyPreviewInput(body: unknown): SurveyPreviewInput {
  const text = asPayload(body)['body'];
  return typeof text === 'string' && text.trim() ? { body: text } : {};
}
