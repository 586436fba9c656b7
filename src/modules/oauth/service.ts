// OAuth 2 account-side use cases: signing in to the /o/ pages (a sealed session cookie),
// registering and deleting client applications, and checking Bearer access tokens.
import { randomBytes } from 'node:crypto';
import type { AppDeps } from '../../context.ts';
import { sha256 } from '../../platform/secrets.ts';
import type { UserRow } from '../accounts/repository.ts';
import { deleteBrowserSession, findBrowserSessionUser, insertBrowserSession } from '../auth/repository.ts';
import { checkPassword } from '../auth/service.ts';
import {
  deleteApplicationOfUser,
  findAccessTokenWithUser,
  insertApplication,
  listApplicationsOfUser,
  type ApplicationRow,
} from './repository.ts';

// ---------------------------------------------------------------- sessions

/** How long a sign-in to the /o/ pages lasts. */
export const SESSION_SECONDS = 12 * 3600;

interface SessionPayload {
  /** the session's random key (the server keeps its SHA-256: browser_sessions) */
  k: string;
  /** user id */
  u: number;
  /** fingerprint of the password hash: a password change ends every session */
  p: string;
  /** expiry, epoch seconds */
  e: number;
}

function passwordFingerprint(user: UserRow): string {
  return sha256(user.password_hash).toString('base64url').slice(0, 16);
}

export type SignIn =
  | { ok: true; user: UserRow; session: string }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'locked'; retryAfterSeconds: number };

/** Checks the password (through the same lockout as Basic) and seals a session for the user. */
export async function signIn(deps: AppDeps, login: string, password: string, ip: string): Promise<SignIn> {
  const result = await checkPassword(deps, login, password, ip);
  if (!result.ok) return result;
  const now = deps.clock.now();
  const expires = Math.floor(now.getTime() / 1000) + SESSION_SECONDS;
  const key = randomBytes(32).toString('base64url');
  await insertBrowserSession(deps.db, { key_hash: sha256(key), user_id: result.user.id, created_at: now, expires_at: new Date(expires * 1000) });
  const payload: SessionPayload = { k: key, u: result.user.id, p: passwordFingerprint(result.user), e: expires };
  return { ok: true, user: result.user, session: deps.sealer.seal(JSON.stringify(payload)) };
}

/** Ends the session of a cookie, wherever the cookie was copied (a bad or stale one: nothing to end). */
export async function signOut(deps: AppDeps, sealed: string | undefined): Promise<void> {
  const payload = sealed ? openSession(deps, sealed) : undefined;
  if (payload) await deleteBrowserSession(deps.db, sha256(payload.k));
}

function openSession(deps: AppDeps, sealed: string): SessionPayload | undefined {
  try {
    const value: unknown = JSON.parse(deps.sealer.open(sealed));
    if (typeof value !== 'object' || value === null) return undefined;
    const { k, u, p, e } = value as Record<string, unknown>;
    if (typeof k !== 'string' || typeof u !== 'number' || typeof p !== 'string' || typeof e !== 'number') return undefined;
    return { k, u, p, e };
  } catch {
    return undefined;
  }
}

/** The signed-in user of a session cookie, if it is genuine, current and the user still active. */
export async function sessionUser(deps: AppDeps, sealed: string | undefined): Promise<UserRow | undefined> {
  if (!sealed) return undefined;
  const payload = openSession(deps, sealed);
  const now = deps.clock.now();
  if (!payload || payload.e * 1000 <= now.getTime()) return undefined;
  const user = await findBrowserSessionUser(deps.db, sha256(payload.k), now);
  if (!user || user.id !== payload.u || user.is_org || passwordFingerprint(user) !== payload.p) return undefined;
  return user;
}

// ---------------------------------------------------------------- applications

export const CLIENT_TYPES = ['confidential', 'public'] as const;
export const GRANT_TYPES = ['authorization-code'] as const;

export interface ApplicationForm {
  name: string;
  client_type: string;
  authorization_grant_type: string;
  redirect_uris: string;
}

export type ApplicationFormErrors = Partial<Record<keyof ApplicationForm, string>>;

function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `“${uri}” is not an absolute URI.`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `“${uri}”: only http and https redirect URIs are allowed.`;
  if (uri.includes('#')) return `“${uri}”: a redirect URI may not have a fragment.`;
  if (!/^[\x21-\x7e]+$/.test(uri)) return `“${uri}” has characters a URI may not contain.`;
  return undefined;
}

export function validateApplicationForm(form: ApplicationForm): ApplicationFormErrors {
  const problems: ApplicationFormErrors = {};
  const name = form.name.trim();
  if (!name) problems.name = 'This field is required.';
  else if (name.length > 255) problems.name = 'Ensure this field has no more than 255 characters.';
  if (!(CLIENT_TYPES as readonly string[]).includes(form.client_type)) problems.client_type = 'Select a valid choice.';
  if (!(GRANT_TYPES as readonly string[]).includes(form.authorization_grant_type)) {
    problems.authorization_grant_type = 'Select a valid choice: only authorization-code is offered.';
  }
  const uris = form.redirect_uris.split(/\s+/).filter(Boolean);
  if (uris.length === 0) problems.redirect_uris = 'Enter at least one redirect URI.';
  else {
    const problem = uris.map(redirectUriProblem).find((p) => p !== undefined);
    if (problem) problems.redirect_uris = problem;
  }
  return problems;
}

export type Registration =
  | { ok: true; application: ApplicationRow; clientSecret: string | undefined }
  | { ok: false; problems: ApplicationFormErrors };

/** Registers a client; a confidential one gets a secret, shown to the user this once. */
export async function registerApplication(deps: AppDeps, owner: UserRow, form: ApplicationForm): Promise<Registration> {
  const problems = validateApplicationForm(form);
  if (Object.keys(problems).length > 0) return { ok: false, problems };
  const confidential = form.client_type === 'confidential';
  const clientSecret = confidential ? randomBytes(48).toString('base64url') : undefined;
  const application = await insertApplication(deps.db, {
    user_id: owner.id,
    name: form.name.trim(),
    client_id: randomBytes(30).toString('base64url'),
    client_secret_hash: clientSecret ? sha256(clientSecret) : null,
    client_type: confidential ? 'confidential' : 'public',
    authorization_grant_type: 'authorization-code',
    redirect_uris: form.redirect_uris.split(/\s+/).filter(Boolean).join(' '),
  });
  return { ok: true, application, clientSecret };
}

export async function listApplications(deps: AppDeps, owner: UserRow): Promise<ApplicationRow[]> {
  return listApplicationsOfUser(deps.db, owner.id);
}

/** Deletes one of the owner's applications with its codes and tokens; false if it is not theirs. */
export async function deleteApplication(deps: AppDeps, owner: UserRow, applicationId: number): Promise<boolean> {
  return deleteApplicationOfUser(deps.db, owner.id, applicationId);
}

// ---------------------------------------------------------------- Bearer authentication

export type BearerCheck = { ok: true; user: UserRow } | { ok: false; reason: 'invalid' | 'inactive' };

/** An access token that exists and has not expired, of an active person (not an organization). */
export async function checkBearerToken(deps: AppDeps, key: string): Promise<BearerCheck> {
  const found = await findAccessTokenWithUser(deps.db, sha256(key));
  if (!found || found.token.expires_at <= deps.clock.now()) return { ok: false, reason: 'invalid' };
  if (!found.user.is_active || found.user.is_org) return { ok: false, reason: 'inactive' };
  return { ok: true, user: found.user };
}
