// Reading the project routes' bodies (JSON, form-encoded or multipart) into the service's typed
// inputs, with DRF's coercions and per-field messages. Nothing here throws: what is wrong with a
// field goes into the input's fieldErrors, for the service to answer in one 400 with the errors of
// its lookups, after its access checks.
import type { FieldErrors } from '../../errors.ts';
import { isRole } from '../../access/index.ts';
import { asPayload, has, parseBoolean, readBoolean, readJsonObject, readString, type Payload } from '../../http/payload.ts';
import { addError } from '../accounts/validation.ts';
import { parseTags, parseUserRef } from '../shared/members.ts';
import type { ProjectFieldsInput, ShareProjectInput } from './service.ts';

function readMetadata(payload: Payload, fieldErrors: FieldErrors): Record<string, unknown> | undefined {
  if (!has(payload, 'metadata')) return undefined;
  const sink: FieldErrors = {};
  const value = readJsonObject(payload, 'metadata', sink);
  if (sink['metadata']) addError(fieldErrors, 'metadata', ['Invaid value for metadata']);
  return value;
}

/** POST (`full`: every required field), PUT (`full`) or PATCH /projects. */
export function projectFieldsInput(body: unknown, full: boolean): ProjectFieldsInput {
  const payload = asPayload(body);
  const fieldErrors: FieldErrors = {};
  const name = readString(payload, 'name', fieldErrors, { required: full, allowBlank: false });
  if (name !== undefined && name.length > 255) addError(fieldErrors, 'name', ['Ensure this field has no more than 255 characters.']);
  let owner: string | undefined;
  if (has(payload, 'owner')) {
    const ref = parseUserRef(payload['owner']);
    if (ref.ok) owner = ref.username;
    else addError(fieldErrors, 'owner', [ref.message]);
  }
  const shared = readBoolean(payload, 'public', fieldErrors);
  const metadata = readMetadata(payload, fieldErrors);
  return {
    ...(name !== undefined ? { name } : {}),
    ...(owner !== undefined ? { owner } : {}),
    ...(shared !== undefined ? { shared } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    fieldErrors,
  };
}

/** PUT or POST /projects/{pk}/share. */
export function shareProjectInput(body: unknown): ShareProjectInput {
  const payload = asPayload(body);
  const remove = parseBoolean(payload['remove']) === true;
  const rawNames = typeof payload['usernames'] === 'string' ? payload['usernames'] : payload['username'];
  const usernames = typeof rawNames === 'string' ? rawNames.split(',').map((n) => n.trim()).filter(Boolean) : [];
  const fieldErrors: FieldErrors = {};
  if (usernames.length === 0) addError(fieldErrors, 'username', ['This field is required.']);
  const roleValue = payload['role'];
  const roleText = typeof roleValue === 'string' ? roleValue.trim() : '';
  if (roleValue === undefined || roleValue === null) addError(fieldErrors, 'role', ['This field is required.']);
  else if (roleText === '') addError(fieldErrors, 'role', ['This field may not be blank.']);
  else if (!isRole(roleText)) addError(fieldErrors, 'role', [`Unknown role '${roleText}'.`]);
  const role = isRole(roleText) ? roleText : undefined;
  const message = payload['email_msg'];
  return {
    remove,
    usernames,
    ...(role !== undefined ? { role } : {}),
    ...(typeof message === 'string' && message.trim() ? { emailMessage: message } : {}),
    fieldErrors,
  };
}

/** POST /projects/{pk}/labels: comma- or space-separated `tags`. */
export function labelsInput(body: unknown): string[] {
  return parseTags(asPayload(body)['tags']);
}
