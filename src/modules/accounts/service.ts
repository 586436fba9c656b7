// Account use cases: registration, users and profiles, the current user with its tokens,
// profile updates and password changes.
import type { RequestContext } from '../../context.ts';
import { errors, type FieldErrors } from '../../errors.ts';
import {
  canChangePassword,
  canChangeProfile,
  canSeeProfileEmail,
  canSeeProfileMetadata,
  isAuthenticated,
  requireUser,
} from '../../access/index.ts';
import { hashPassword, verifyPassword } from '../../platform/secrets.ts';
import {
  addPasswordHistory,
  emailInUse,
  findActiveUserById,
  findActiveUserByUsername,
  insertUser,
  listActiveUsers,
  listActiveUsersByUsernames,
  listPasswordHistory,
  lockAccountNames,
  updateUser,
  usernameExists,
  type UserPatch,
  type UserRow,
} from './repository.ts';
import { addError, passwordProblems } from './validation.ts';
import { fieldErrorsOf } from '../shared/field-errors.ts';
import { currentUserToApi, profileToApi, userToApi, type UserEntry } from './to-api.ts';
import { issueToken, tokensOf } from '../auth/service.ts';
import { digestSecretsAfterRename, digestSecretsFor } from '../auth/digest-service.ts';
import { clearLoginFailures, findLoginFailures, recordLoginFailure } from '../auth/repository.ts';
import { pythonIsoFormat, mergeMetadata } from './metadata.ts';
import { countMonthlySubmissions } from '../submissions/repository.ts';
import { inTransaction } from '../../platform/db.ts';

// ---------------------------------------------------------------- users

export async function listUsers(ctx: RequestContext, query: { orgs?: string | undefined; search?: string | undefined }): Promise<UserEntry[]> {
  requireUser(ctx.actor);
  const rows = await listActiveUsers(ctx.db, {
    excludeOrgs: query.orgs?.toLowerCase() === 'false',
    searchTerms: (query.search ?? '').split(/[\s,]+/).filter(Boolean),
  });
  return rows.map(userToApi);
}

/** All digits → the user id; anything else → a case-insensitive username. */
async function findByLookup(ctx: RequestContext, lookup: string): Promise<UserRow | undefined> {
  if (/^\d+$/.test(lookup)) return findActiveUserById(ctx.db, Number(lookup));
  return findActiveUserByUsername(ctx.db, lookup);
}

export async function getUser(ctx: RequestContext, lookup: string): Promise<UserEntry> {
  requireUser(ctx.actor);
  const user = await findByLookup(ctx, lookup);
  if (!user) throw errors.noMatch('User');
  return userToApi(user);
}

// ---------------------------------------------------------------- current user

export async function currentUser(ctx: RequestContext): Promise<Record<string, unknown>> {
  const user = requireUser(ctx.actor);
  const { apiToken, tempToken } = await tokensOf(ctx, user.id);
  return currentUserToApi(user, ctx.baseUrl, apiToken, tempToken);
}

// ---------------------------------------------------------------- profiles

function viewOf(ctx: RequestContext, profile: UserRow, inList: boolean): { includeEmail: boolean; includeMetadata: boolean } {
  return {
    includeEmail: canSeeProfileEmail(ctx.actor, profile),
    includeMetadata: !inList && canSeeProfileMetadata(ctx.actor, profile),
  };
}

async function loadProfile(ctx: RequestContext, lookup: string): Promise<UserRow> {
  const profile = await findByLookup(ctx, lookup);
  if (!profile) throw errors.noMatch('UserProfile');
  return profile;
}

export async function getProfile(ctx: RequestContext, lookup: string): Promise<Record<string, unknown>> {
  requireUser(ctx.actor);
  const profile = await loadProfile(ctx, lookup);
  return profileToApi(profile, ctx.baseUrl, viewOf(ctx, profile, false));
}

/** Profile fields `?ordering=` may name (DRF's OrderingFilter), and the user column each sorts by. */
const PROFILE_ORDERING: Readonly<Record<string, (u: UserRow) => string | number>> = {
  username: (u) => u.username,
  first_name: (u) => u.first_name.toLowerCase(),
  last_name: (u) => u.last_name.toLowerCase(),
  city: (u) => u.city.toLowerCase(),
  country: (u) => u.country,
  organization: (u) => u.organization.toLowerCase(),
  id: (u) => u.id,
  joined_on: (u) => u.date_joined.getTime(),
};

export async function listProfiles(ctx: RequestContext, usersParam: string | undefined, ordering?: string): Promise<Record<string, unknown>[]> {
  // The spec: "Anonymous callers get an empty result" (onadata answers 401).
  if (!isAuthenticated(ctx.actor)) return [];
  const actor = ctx.actor.user;
  const names = (usersParam ?? '').split(',').map((n) => n.trim()).filter(Boolean);
  const rows = names.length ? await listActiveUsersByUsernames(ctx.db, names) : [actor];
  // `?ordering=city` or `-city`; a field it does not know leaves the order (by username) alone.
  const descending = ordering?.startsWith('-') ?? false;
  const keyOf = PROFILE_ORDERING[(ordering ?? '').replace(/^-/, '')];
  if (keyOf) {
    rows.sort((a, b) => {
      const [x, y] = [keyOf(a), keyOf(b)];
      const order = x < y ? -1 : x > y ? 1 : a.username.localeCompare(b.username);
      return descending ? -order : order;
    });
  }
  return rows.map((row) => profileToApi(row, ctx.baseUrl, viewOf(ctx, row, true)));
}

/** The profile fields a request may set that need no lookup. */
export type ProfileChanges = Pick<UserPatch, 'first_name' | 'last_name' | 'city' | 'organization' | 'home_page' | 'country' | 'twitter' | 'require_auth'>;

/** A registration's or a profile change's fields as a request gave them (accounts/inputs.ts reads them). */
export interface ProfileFieldsInput {
  /** In lower case, once it passed the username rules; the service checks it is free. */
  username?: string;
  /** Once it passed the format check; the service checks it is not in use. */
  email?: string;
  changes: ProfileChanges;
  password?: string;
  metadata?: Record<string, unknown>;
  /** What was wrong with the fields as read; the service adds its lookups' and answers all in one 400. */
  fieldErrors: FieldErrors;
}

/** A profile change: its fields, or (PATCH with `overwrite=false`) metadata to merge in. */
export type UpdateProfileInput =
  | { kind: 'metadata'; metadata?: Record<string, unknown>; fieldErrors: FieldErrors }
  | {
      kind: 'profile';
      /** PUT's required fields that were not given: refused before the others are looked at. */
      missing: FieldErrors;
      /** `email` was given, valid or not: changing it takes the password. */
      emailGiven: boolean;
      fields: ProfileFieldsInput;
    };

interface ProfileFields {
  patch: UserPatch;
  password?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** The input's fields once the username and e-mail are known to be free (DRF field errors otherwise). */
async function checkProfileFields(ctx: RequestContext, input: ProfileFieldsInput, selfId?: number): Promise<ProfileFields> {
  const fieldErrors = fieldErrorsOf(input);
  const patch: UserPatch = { ...input.changes };
  if (input.username !== undefined) {
    if (await usernameExists(ctx.db, input.username, selfId)) addError(fieldErrors, 'username', [`${input.username} already exists`]);
    else patch.username = input.username;
  }
  if (input.email !== undefined) {
    if (await emailInUse(ctx.db, input.email, selfId)) addError(fieldErrors, 'email', ['This email address is already in use. ']);
    else patch.email = input.email;
  }
  if (Object.keys(fieldErrors).length) throw errors.invalidFields(fieldErrors);
  return { patch, password: input.password, metadata: input.metadata };
}

export async function registerProfile(ctx: RequestContext, input: ProfileFieldsInput): Promise<Record<string, unknown>> {
  if (ctx.config.disableCreatingUsers) throw errors.userCreationDisabled();
  const fields = await checkProfileFields(ctx, input);
  const password = fields.password ?? '';
  const passwordHash = await hashPassword(password);
  const creator = isAuthenticated(ctx.actor) ? ctx.actor.user.id : null;
  const username = fields.patch.username ?? '';
  const email = fields.patch.email ?? '';
  const created = await inTransaction(ctx.db, async (trx) => {
    // A concurrent registration may have taken the name or the address since validation.
    await lockAccountNames(trx, [username, email]);
    if (await usernameExists(trx, username)) throw errors.usernameTaken(username);
    if (email && (await emailInUse(trx, email))) throw errors.emailInUse();
    const user = await insertUser(trx, {
      ...fields.patch,
      username,
      password_hash: passwordHash,
      digest_ha1_sealed: digestSecretsFor(ctx, { username, email: fields.patch.email ?? '' }, password),
      created_by: creator,
      metadata: JSON.stringify({ last_password_edit: pythonIsoFormat(ctx.clock.now()) }),
      date_joined: ctx.clock.now(),
    });
    await addPasswordHistory(trx, user.id, passwordHash);
    await issueToken(ctx, trx, 'api_tokens', user.id);
    return user;
  });
  return profileToApi(created, ctx.baseUrl, { includeEmail: isAuthenticated(ctx.actor), includeMetadata: true });
}

export type ProfileUpdateResult =
  | { kind: 'profile'; body: Record<string, unknown> }
  | { kind: 'metadata'; body: Record<string, unknown> };

/** PATCH or PUT (`full`: the input was read with PUT's rules) of a profile. */
export async function updateProfile(ctx: RequestContext, lookup: string, input: UpdateProfileInput, full: boolean): Promise<ProfileUpdateResult> {
  requireUser(ctx.actor);
  const profile = await loadProfile(ctx, lookup);
  if (!canChangeProfile(ctx.actor, profile)) throw errors.permissionDenied();

  if (input.kind === 'metadata') {
    const { metadata } = input;
    if (Object.keys(input.fieldErrors).length || metadata === undefined) throw errors.invalidFields(fieldErrorsOf(input));
    const merged = mergeMetadata(profile.metadata, metadata);
    const updated = await updateUser(ctx.db, profile.id, { metadata: JSON.stringify(merged) });
    ctx.authCache.forgetUser(profile.id);
    return { kind: 'metadata', body: updated.metadata };
  }

  if (Object.keys(input.missing).length) throw errors.invalidFields(input.missing);
  const fields = await checkProfileFields(ctx, input.fields, profile.id);
  const patch: UserPatch = { ...fields.patch };
  let metadata = fields.metadata ?? profile.metadata;

  if (fields.password !== undefined) {
    // The password check here counts with change_password's: otherwise a token (a temporary or
    // third-party one) could guess the account's password here without limit.
    const key = `change_password:${profile.id}`;
    const now = ctx.clock.now();
    const failures = await findLoginFailures(ctx.db, key);
    if (failures?.locked_until && failures.locked_until > now) throw errors.profilePasswordLocked(minutesUntil(failures.locked_until, now));
    if (!(await verifyPassword(fields.password, profile.password_hash))) {
      const row = await recordLoginFailure(ctx.db, key, now, ctx.config.maxChangePasswordAttempts, new Date(now.getTime() + ctx.config.lockoutSeconds * 1000));
      if (row.locked_until && row.locked_until > now) throw errors.profilePasswordLocked(minutesUntil(row.locked_until, now));
      throw errors.profilePasswordWrong();
    }
  }
  if (input.emailGiven) {
    if (fields.password === undefined) throw errors.profilePasswordMissing();
    if (patch.email !== undefined && patch.email !== profile.email) metadata = { ...metadata, is_email_verified: false };
    else if (full) metadata = { ...metadata, is_email_verified: false };
  }
  if (fields.metadata !== undefined || metadata !== profile.metadata) patch.metadata = JSON.stringify(metadata);
  const identity = { username: patch.username ?? profile.username, email: patch.email ?? profile.email };
  if (identity.username !== profile.username || identity.email !== profile.email) {
    // Digest HA1 values are per login spelling (see auth/digest-service.ts).
    patch.digest_ha1_sealed = digestSecretsAfterRename(ctx, profile.digest_ha1_sealed, identity, fields.password);
  }
  const updated = Object.keys(patch).length ? await updateUser(ctx.db, profile.id, patch) : profile;
  ctx.authCache.forgetUser(profile.id);
  return { kind: 'profile', body: profileToApi(updated, ctx.baseUrl, viewOf(ctx, updated, false)) };
}

// ---------------------------------------------------------------- passwords

/** Whole minutes until a password lock ends, at least 1 (the refusals say "Try again in N minutes"). */
function minutesUntil(until: Date, now: Date): number {
  return Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 60_000));
}

/** A password change as a request gave it ('' for a field missing or not text). */
export interface PasswordChangeInput {
  current: string;
  next: string;
}

export async function changePassword(ctx: RequestContext, lookup: string, input: PasswordChangeInput): Promise<Record<string, unknown>> {
  requireUser(ctx.actor);
  const profile = await loadProfile(ctx, lookup);
  if (!canChangePassword(ctx.actor, profile)) throw errors.permissionDenied();

  const { current, next } = input;
  if (!current || !next) throw errors.passwordFieldsBlank();

  const key = `change_password:${profile.id}`;
  const now = ctx.clock.now();
  const failures = await findLoginFailures(ctx.db, key);
  if (failures?.locked_until && failures.locked_until > now) throw errors.passwordChangeLocked(minutesUntil(failures.locked_until, now));

  if (!(await verifyPassword(current, profile.password_hash))) {
    const limit = ctx.config.maxChangePasswordAttempts;
    const row = await recordLoginFailure(ctx.db, key, now, limit, new Date(now.getTime() + ctx.config.lockoutSeconds * 1000));
    if (row.locked_until && row.locked_until > now) throw errors.passwordChangeLocked(minutesUntil(row.locked_until, now));
    throw errors.passwordWrongWithAttemptsLeft(limit - row.failures);
  }

  const problems = passwordProblems(next, profile);
  for (const previous of await listPasswordHistory(ctx.db, profile.id)) {
    if (await verifyPassword(next, previous)) {
      problems.push('You cannot use a previously used password.');
      break;
    }
  }
  if (problems.length) throw errors.passwordRejected(problems);

  const passwordHash = await hashPassword(next);
  const result = await inTransaction(ctx.db, async (trx) => {
    await updateUser(trx, profile.id, {
      password_hash: passwordHash,
      digest_ha1_sealed: digestSecretsFor(ctx, profile, next),
      metadata: JSON.stringify({ ...profile.metadata, last_password_edit: pythonIsoFormat(now) }),
    });
    await addPasswordHistory(trx, profile.id, passwordHash);
    const accessToken = await issueToken(ctx, trx, 'api_tokens', profile.id);
    const tempToken = await issueToken(ctx, trx, 'temp_tokens', profile.id);
    return { username: profile.username, access_token: accessToken, temp_token: tempToken };
  });
  if (failures) await clearLoginFailures(ctx.db, key);
  ctx.authCache.forgetUser(profile.id);
  return result;
}

// ---------------------------------------------------------------- monthly submissions

export async function monthlySubmissions(ctx: RequestContext, lookup: string, query: { month?: string | undefined; year?: string | undefined }): Promise<Record<string, number>> {
  requireUser(ctx.actor);
  const profile = await loadProfile(ctx, lookup);
  const now = ctx.clock.now();
  const month = query.month === undefined || query.month === '' ? now.getUTCMonth() + 1 : Number(query.month);
  const year = query.year === undefined || query.year === '' ? now.getUTCFullYear() : Number(query.year);
  if (!Number.isInteger(month) || month < 1 || month > 12) throw errors.monthInvalid();
  if (!Number.isInteger(year) || year < 1000 || year > 9999) throw errors.yearInvalid();
  const from = new Date(Date.UTC(year, month - 1, 1));
  const to = new Date(Date.UTC(year, month, 1));
  const counts = await countMonthlySubmissions(ctx.db, profile.id, from, to);
  const body: Record<string, number> = {};
  if (counts.private) body['private'] = counts.private;
  if (counts.public) body['public'] = counts.public;
  return body;
}
