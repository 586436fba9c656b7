// Reading the account routes' bodies into the service's typed inputs: each profile field as DRF
// reads and checks it. Nothing here throws: the service adds the errors of its lookups (a username
// or an address already taken) and answers one 400 after its access checks.
import type { FieldErrors } from '../../errors.ts';
import { asPayload, has, readBoolean, readJsonObject, readString, type Payload } from '../../http/payload.ts';
import { addError, checkCountry, checkEmail, checkTwitter, checkUsername, lengthErrors, passwordProblems, splitName } from './validation.ts';
import type { PasswordChangeInput, ProfileChanges, ProfileFieldsInput, UpdateProfileInput } from './service.ts';

/** The writable profile fields present in the payload; `creating`: registration's rules. */
function profileFieldsInput(payload: Payload, creating: boolean): ProfileFieldsInput {
  const fieldErrors: FieldErrors = {};
  const required = creating;
  const changes: ProfileChanges = {};
  let username: string | undefined;
  let email: string | undefined;

  const rawUsername = readString(payload, 'username', fieldErrors, { required, allowBlank: false });
  if (rawUsername !== undefined) {
    const { value, errors: usernameErrors } = checkUsername(rawUsername);
    addError(fieldErrors, 'username', usernameErrors);
    if (usernameErrors.length === 0) username = value;
  }

  const rawEmail = readString(payload, 'email', fieldErrors, { required, allowBlank: false });
  if (rawEmail !== undefined) {
    const emailErrors = checkEmail(rawEmail);
    addError(fieldErrors, 'email', emailErrors);
    if (emailErrors.length === 0) email = rawEmail;
  }

  for (const field of ['first_name', 'last_name'] as const) {
    const value = readString(payload, field, fieldErrors);
    if (value === undefined) continue;
    const problems = lengthErrors(value, undefined, 30);
    addError(fieldErrors, field, problems);
    if (problems.length === 0) changes[field] = value;
  }
  const name = readString(payload, 'name', fieldErrors);
  if (name) Object.assign(changes, splitName(name.length > 60 ? name.slice(0, 60) : name));
  if (creating && !name && !changes.first_name && !fieldErrors['first_name']) {
    addError(fieldErrors, 'name', ['Either name or first_name should be provided']);
  }

  for (const [field, column] of [['city', 'city'], ['organization', 'organization'], ['website', 'home_page']] as const) {
    const value = readString(payload, field, fieldErrors);
    if (value !== undefined) {
      const problems = lengthErrors(value, undefined, 255);
      addError(fieldErrors, field, problems);
      if (problems.length === 0) changes[column] = value;
    }
  }
  const country = readString(payload, 'country', fieldErrors);
  if (country !== undefined) {
    const problems = checkCountry(country);
    addError(fieldErrors, 'country', problems);
    if (problems.length === 0) changes.country = country;
  }
  const twitter = readString(payload, 'twitter', fieldErrors);
  if (twitter !== undefined) {
    const problems = checkTwitter(twitter);
    addError(fieldErrors, 'twitter', problems);
    if (problems.length === 0) changes.twitter = twitter;
  }
  const requireAuth = readBoolean(payload, 'require_auth', fieldErrors);
  if (requireAuth !== undefined) changes.require_auth = requireAuth;

  const password = readString(payload, 'password', fieldErrors, { required });
  const metadata = creating ? undefined : readJsonObject(payload, 'metadata', fieldErrors);

  if (creating && password !== undefined && !fieldErrors['password']) {
    // The username's case does not matter here: the similarity is measured in lower case.
    const problems = passwordProblems(password, {
      username: rawUsername ?? '',
      first_name: changes.first_name ?? '',
      last_name: changes.last_name ?? '',
      email: rawEmail ?? '',
    });
    addError(fieldErrors, 'password', problems);
  }
  return {
    ...(username !== undefined ? { username } : {}),
    ...(email !== undefined ? { email } : {}),
    changes,
    ...(password !== undefined ? { password } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    fieldErrors,
  };
}

/** POST /api/v1/profiles: a registration. */
export function registrationInput(body: unknown): ProfileFieldsInput {
  return profileFieldsInput(asPayload(body), true);
}

/** PATCH or PUT (`full`) /api/v1/profiles/{username}. */
export function updateProfileInput(body: unknown, full: boolean): UpdateProfileInput {
  const payload = asPayload(body);
  const overwrite = payload['overwrite'];
  if (!full && (overwrite === false || (typeof overwrite === 'string' && overwrite.toLowerCase() === 'false'))) {
    // Only the metadata, merged into what the profile holds.
    const fieldErrors: FieldErrors = {};
    const metadata = readJsonObject(payload, 'metadata', fieldErrors);
    if (metadata === undefined && !fieldErrors['metadata']) addError(fieldErrors, 'metadata', ['This field is required.']);
    return { kind: 'metadata', ...(metadata !== undefined ? { metadata } : {}), fieldErrors };
  }
  const missing: FieldErrors = {};
  if (full) for (const field of ['username', 'email']) if (!has(payload, field)) addError(missing, field, ['This field is required.']);
  return { kind: 'profile', missing, emailGiven: has(payload, 'email'), fields: profileFieldsInput(payload, false) };
}

/** POST /api/v1/profiles/{username}/change_password. */
export function passwordChangeInput(body: unknown): PasswordChangeInput {
  const payload = asPayload(body);
  const text = (field: string): string => {
    const value = payload[field];
    return typeof value === 'string' ? value : '';
  };
  return { current: text('current_password'), next: text('new_password') };
}
