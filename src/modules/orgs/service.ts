// Organisations (onadata's /api/v1/orgs): an account people join with a role. The creator is its
// first owner. Owners change its profile and members and hold owner on every project and form it
// owns; owners and managers create projects and publish forms in it (access/canAddToAccount).
// Organisation accounts never sign in themselves.
import type { RequestContext } from '../../context.ts';
import { errors, type FieldErrors } from '../../errors.ts';
import { canManageOrg, canSeeOrg, isAuthenticated, requireUser } from '../../access/index.ts';
import * as accounts from '../accounts/repository.ts';
import { gravatarUrl } from '../accounts/to-api.ts';
import { addError, splitName } from '../accounts/validation.ts';
import { fieldErrorsOf } from '../shared/field-errors.ts';
import { inTransaction, type DbOrTx } from '../../platform/db.ts';
import { setProjectRole } from '../projects/repository.ts';
import * as repo from './repository.ts';

const userUrl = (baseUrl: string, username: string): string => `${baseUrl}/api/v1/users/${encodeURIComponent(username)}`;

/** onadata's OrganizationSerializer: email and metadata for the organisation's owners only. */
async function orgToApi(ctx: RequestContext, org: repo.OrgRow, callerRole: string | undefined): Promise<Record<string, unknown>> {
  const { account } = org;
  const members = await repo.listOrgMembers(ctx.db, account.id);
  // Owners first, then the other members, as onadata lists them.
  const ordered = [...members.filter((m) => m.role === 'owner'), ...members.filter((m) => m.role !== 'owner')];
  const body: Record<string, unknown> = {
    url: `${ctx.baseUrl}/api/v1/orgs/${encodeURIComponent(account.username)}`,
    org: account.username,
    name: `${account.first_name} ${account.last_name}`.trim(),
    email: account.email,
    city: account.city,
    country: account.country,
    website: account.home_page,
    twitter: account.twitter,
    gravatar: gravatarUrl(account.email),
    require_auth: account.require_auth,
    user: userUrl(ctx.baseUrl, account.username),
    creator: org.creator_username === null ? null : userUrl(ctx.baseUrl, org.creator_username),
    users: ordered.map((m) => ({ user: m.username, role: m.role, first_name: m.first_name, last_name: m.last_name, gravatar: gravatarUrl(m.email) })),
    metadata: account.metadata,
    is_org: true,
    description: org.description,
    date_joined: account.date_joined.toISOString(),
  };
  if (!canManageOrg(callerRole)) {
    delete body['email'];
    delete body['metadata'];
  }
  return body;
}

async function callerRole(ctx: RequestContext, org: repo.OrgRow): Promise<string | undefined> {
  return isAuthenticated(ctx.actor) ? repo.orgRoleOf(ctx.db, org.account.id, ctx.actor.user.id) : undefined;
}

/** The organisation the caller belongs to, with their role; 404 for anyone else. */
async function loadOrg(ctx: RequestContext, name: string): Promise<{ org: repo.OrgRow; role: string | undefined }> {
  const org = await repo.findOrganization(ctx.db, name);
  const role = org ? await callerRole(ctx, org) : undefined;
  if (!org || !canSeeOrg(role)) throw errors.notFound();
  return { org, role };
}

/** A new organisation as a request gave it (orgs/inputs.ts reads it); absent text fields are ''. */
export interface CreateOrgInput {
  /** Its username, in lower case, once it passed the username rules; the service checks it is free. */
  org?: string;
  name?: string;
  email: string;
  city: string;
  country: string;
  website: string;
  twitter: string;
  description: string;
  metadata: Record<string, unknown>;
  /** What was wrong with the fields as read; the service adds its lookups' and answers all in one 400. */
  fieldErrors: FieldErrors;
}

/** POST /api/v1/orgs: {org, name, email?, city?, country?, website?, twitter?, description?}. */
export async function createOrganization(ctx: RequestContext, input: CreateOrgInput): Promise<Record<string, unknown>> {
  const actor = requireUser(ctx.actor);
  const problems = fieldErrorsOf(input);
  const { name, email, metadata } = input;
  const username = input.org ?? '';
  if (input.org !== undefined && (await accounts.usernameExists(ctx.db, username))) addError(problems, 'org', [`Organization ${username} already exists.`]);
  if (Object.keys(problems).length) throw errors.invalidFields(problems);
  const now = ctx.clock.now();
  await inTransaction(ctx.db, async (trx) => {
      const account = await accounts.insertUser(trx, {
        username,
        email,
        ...splitName(name ?? ''),
        is_org: true,
        city: input.city,
        country: input.country,
        home_page: input.website,
        twitter: input.twitter,
        organization: name ?? '',
        metadata: JSON.stringify(metadata),
        created_by: actor.id,
        date_joined: now,
      });
      await repo.insertOrganization(trx, { userId: account.id, creatorId: actor.id, description: input.description, now });
      await repo.setOrgMember(trx, account.id, actor.id, 'owner', now);
    })
    .catch((error: unknown) => {
      // Another account took the name between the check and the insert.
      if (typeof error === 'object' && error !== null && 'code' in error && error.code === '23505') throw errors.orgExists(username);
      throw error;
    });
  const { org, role } = await loadOrg(ctx, username);
  return orgToApi(ctx, org, role);
}

/** GET /api/v1/orgs[?shared_with=username]: the organisations the caller belongs to. */
export async function listOrganizations(ctx: RequestContext, sharedWith: string | undefined): Promise<Record<string, unknown>[]> {
  if (!isAuthenticated(ctx.actor)) return [];
  let names = await repo.listMemberOrganizations(ctx.db, ctx.actor.user.id);
  if (sharedWith) {
    const other = await accounts.findActiveUserByUsername(ctx.db, sharedWith);
    const theirs = new Set(other ? await repo.listMemberOrganizations(ctx.db, other.id) : []);
    names = names.filter((n) => theirs.has(n));
  }
  const out: Record<string, unknown>[] = [];
  for (const name of names) {
    const { org, role } = await loadOrg(ctx, name);
    out.push(await orgToApi(ctx, org, role));
  }
  return out;
}

export async function getOrganization(ctx: RequestContext, name: string): Promise<Record<string, unknown>> {
  const { org, role } = await loadOrg(ctx, name);
  return orgToApi(ctx, org, role);
}

/** The profile fields a change gave (orgs/inputs.ts reads them). */
export interface UpdateOrgInput {
  name?: string;
  email?: string;
  city?: string;
  country?: string;
  website?: string;
  twitter?: string;
  metadata?: Record<string, unknown>;
  fieldErrors: FieldErrors;
}

/** PATCH or PUT /api/v1/orgs/{org}: the profile fields given (owners). */
export async function updateOrganization(ctx: RequestContext, name: string, input: UpdateOrgInput): Promise<Record<string, unknown>> {
  requireUser(ctx.actor);
  const { org, role } = await loadOrg(ctx, name);
  if (!canManageOrg(role)) throw errors.permissionDenied();
  if (Object.keys(input.fieldErrors).length) throw errors.invalidFields(fieldErrorsOf(input));
  const { name: newName, email, city, country, website, twitter, metadata } = input;
  await accounts.updateUser(ctx.db, org.account.id, {
    ...(newName !== undefined ? { ...splitName(newName), organization: newName } : {}),
    ...(email !== undefined ? { email } : {}),
    ...(city !== undefined ? { city } : {}),
    ...(country !== undefined ? { country } : {}),
    ...(website !== undefined ? { home_page: website } : {}),
    ...(twitter !== undefined ? { twitter } : {}),
    ...(metadata !== undefined ? { metadata: JSON.stringify(metadata) } : {}),
  });
  return getOrganization(ctx, org.account.username);
}

/** GET /api/v1/orgs/{org}/members: the members' usernames. */
export async function listMembers(ctx: RequestContext, name: string): Promise<string[]> {
  const { org } = await loadOrg(ctx, name);
  return (await repo.listOrgMembers(ctx.db, org.account.id)).map((m) => m.username);
}

/**
 * POST (add, default role `member`), PUT (change the role) and DELETE (remove) on
 * /api/v1/orgs/{org}/members with {username, role}: the owners' business. Becoming an owner grants
 * owner on every project and form of the organisation; leaving it, or ceasing to be an owner,
 * takes those roles away. The last owner stays.
 */
export type OrgMethod = 'POST' | 'PUT' | 'DELETE';

/** A change of members as a request gave it (orgs/inputs.ts reads it). */
export interface MembersInput {
  username?: string;
  /** The role asked for (never with DELETE). */
  role?: string;
  fieldErrors: FieldErrors;
}

export async function changeMembers(ctx: RequestContext, name: string, method: OrgMethod, input: MembersInput): Promise<string[]> {
  requireUser(ctx.actor);
  const { org, role: ownRole } = await loadOrg(ctx, name);
  if (!canManageOrg(ownRole)) throw errors.permissionDenied();
  const problems = fieldErrorsOf(input);
  const { username, role: rawRole } = input;
  const user = username ? await accounts.findActiveUserByUsername(ctx.db, username) : undefined;
  if (username && (!user || user.is_org)) addError(problems, 'username', [`User '${username}' does not exist.`]);
  if (Object.keys(problems).length || !user) throw errors.invalidFields(problems);
  const orgId = org.account.id;
  const now = ctx.clock.now();
  await inTransaction(ctx.db, async (trx) => {
    const members = await repo.listOrgMembers(trx, orgId);
    const current = members.find((m) => m.user_id === user.id)?.role;
    const owners = members.filter((m) => m.role === 'owner').length;
    const next = method === 'DELETE' ? undefined : (rawRole ?? current ?? 'member');
    if (current === 'owner' && next !== 'owner' && owners <= 1) {
      throw errors.orgLastOwner(user.username);
    }
    if (method === 'DELETE') {
      if (current === undefined) throw errors.notOrgMember(user.username, org.account.username);
      await repo.removeOrgMember(trx, orgId, user.id);
      await repo.removeRolesEverywhere(trx, orgId, user.id);
      return;
    }
    if (method === 'PUT' && current === undefined) throw errors.notOrgMember(user.username, org.account.username);
    await repo.setOrgMember(trx, orgId, user.id, next ?? 'member', now);
    if (next === 'owner') await repo.grantOwnerEverywhere(trx, orgId, user.id);
    else if (current === 'owner') await repo.removeRolesEverywhere(trx, orgId, user.id);
  });
  return listMembers(ctx, org.account.username);
}

/** The caller's role in an account when it is an organisation they belong to (for canAddToAccount). */
export async function orgRoleFor(ctx: RequestContext, accountId: number): Promise<string | undefined> {
  return isAuthenticated(ctx.actor) && ctx.actor.user.id !== accountId ? repo.orgRoleOf(ctx.db, accountId, ctx.actor.user.id) : undefined;
}

/**
 * The organisation's owners take owner on a project made in it (by a manager, say), as onadata's
 * Owners team does. Nothing for personal accounts.
 */
export async function grantOrgOwners(trx: DbOrTx, accountId: number, projectId: number): Promise<void> {
  for (const ownerId of await repo.listOrgOwnerIds(trx, accountId)) await setProjectRole(trx, projectId, ownerId, 'owner');
}
