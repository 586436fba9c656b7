// Reading the organisation routes' bodies into the service's typed inputs, with DRF's coercions and
// per-field messages. Nothing here throws: the service adds the errors of its lookups (a name
// taken, a member who does not exist) and answers one 400 after its access checks.
import type { FieldErrors } from '../../errors.ts';
import { isOrgRole } from '../../access/index.ts';
import { asPayload, readJsonObject, readString } from '../../http/payload.ts';
import { addError, checkEmail, checkUsername } from '../accounts/validation.ts';
import type { CreateOrgInput, MembersInput, OrgMethod, UpdateOrgInput } from './service.ts';

/** POST /api/v1/orgs. */
export function createOrgInput(body: unknown): CreateOrgInput {
  const payload = asPayload(body);
  const problems: FieldErrors = {};
  const rawOrg = readString(payload, 'org', problems, { required: true, allowBlank: false });
  const name = readString(payload, 'name', problems, { required: true, allowBlank: false });
  const email = readString(payload, 'email', problems) ?? '';
  const text = (field: string) => readString(payload, field, problems) ?? '';
  const [city, country, website, twitter, description] = [text('city'), text('country'), text('website'), text('twitter'), text('description')];
  const metadata = readJsonObject(payload, 'metadata', problems) ?? {};
  let org: string | undefined;
  if (rawOrg !== undefined) {
    const checked = checkUsername(rawOrg);
    if (checked.errors.length) addError(problems, 'org', checked.errors.map((e) => e.replace(/^username may/, 'Organization may')));
    else org = checked.value;
  }
  if (name !== undefined && name.length > 30) addError(problems, 'name', ['Ensure this field has no more than 30 characters.']);
  if (email !== '') addError(problems, 'email', checkEmail(email));
  return {
    ...(org !== undefined ? { org } : {}),
    ...(name !== undefined ? { name } : {}),
    email, city, country, website, twitter, description, metadata,
    fieldErrors: problems,
  };
}

/** PATCH or PUT /api/v1/orgs/{org}: the fields given. */
export function updateOrgInput(body: unknown): UpdateOrgInput {
  const payload = asPayload(body);
  const problems: FieldErrors = {};
  const name = readString(payload, 'name', problems, { allowBlank: false });
  const email = readString(payload, 'email', problems);
  const [city, country, website, twitter] = ['city', 'country', 'website', 'twitter'].map((f) => readString(payload, f, problems));
  const metadata = readJsonObject(payload, 'metadata', problems);
  if (name !== undefined && name.length > 30) addError(problems, 'name', ['Ensure this field has no more than 30 characters.']);
  if (email) addError(problems, 'email', checkEmail(email));
  return {
    ...(name !== undefined ? { name } : {}),
    ...(email !== undefined ? { email } : {}),
    ...(city !== undefined ? { city } : {}),
    ...(country !== undefined ? { country } : {}),
    ...(website !== undefined ? { website } : {}),
    ...(twitter !== undefined ? { twitter } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    fieldErrors: problems,
  };
}

/** POST, PUT or DELETE /api/v1/orgs/{org}/members: {username, role} in the query or the body (the body wins). */
export function membersInput(method: OrgMethod, query: unknown, body: unknown): MembersInput {
  const payload = { ...asPayload(query), ...asPayload(body) };
  const problems: FieldErrors = {};
  const username = readString(payload, 'username', problems, { required: true, allowBlank: false });
  const role = method === 'DELETE' ? undefined : readString(payload, 'role', problems, { required: method === 'PUT', allowBlank: false });
  if (role !== undefined && !isOrgRole(role)) addError(problems, 'role', [`"${role}" is not a valid choice.`]);
  return {
    ...(username !== undefined ? { username } : {}),
    ...(role !== undefined ? { role } : {}),
    fieldErrors: problems,
  };
}
