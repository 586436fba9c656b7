// SQL for organisations: the organisation row beside its account (users.is_org), its members and
// their roles, and the project and form roles its owners hold.
import { sql } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';
import type { UserRow } from '../accounts/repository.ts';

export interface OrgRow {
  account: UserRow;
  creator_username: string | null;
  description: string;
}

export interface OrgMemberRow {
  user_id: number;
  username: string;
  first_name: string;
  last_name: string;
  email: string;
  role: string;
}

export async function insertOrganization(db: DbOrTx, org: { userId: number; creatorId: number; description: string; now: Date }): Promise<void> {
  await db.insertInto('organizations').values({ user_id: org.userId, creator_id: org.creatorId, description: org.description, created_at: org.now }).execute();
}

/** A live organisation by its account's username (any case). */
export async function findOrganization(db: DbOrTx, username: string): Promise<OrgRow | undefined> {
  const account = await db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(username)`, '=', username.toLowerCase())
    .where('is_org', '=', true)
    .where('is_active', '=', true)
    .executeTakeFirst();
  if (!account) return undefined;
  const org = await db
    .selectFrom('organizations as o')
    .leftJoin('users as c', 'c.id', 'o.creator_id')
    .select(['o.description', 'c.username as creator_username'])
    .where('o.user_id', '=', account.id)
    .executeTakeFirst();
  return { account, creator_username: org?.creator_username ?? null, description: org?.description ?? '' };
}

/** The organisations (accounts) a user belongs to, by username. */
export async function listMemberOrganizations(db: DbOrTx, userId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('organization_members as m')
    .innerJoin('users as u', 'u.id', 'm.org_id')
    .select('u.username')
    .where('m.user_id', '=', userId)
    .where('u.is_active', '=', true)
    .orderBy('u.username')
    .execute();
  return rows.map((r) => r.username);
}

export async function listOrgMembers(db: DbOrTx, orgId: number): Promise<OrgMemberRow[]> {
  return db
    .selectFrom('organization_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id as user_id', 'u.username', 'u.first_name', 'u.last_name', 'u.email', 'm.role'])
    .where('m.org_id', '=', orgId)
    .where('u.is_active', '=', true)
    .orderBy('m.added_at')
    .orderBy('u.id')
    .execute();
}

/** The caller's role in an account that is an organisation, or undefined. */
export async function orgRoleOf(db: DbOrTx, orgId: number, userId: number): Promise<string | undefined> {
  const row = await db.selectFrom('organization_members').select('role').where('org_id', '=', orgId).where('user_id', '=', userId).executeTakeFirst();
  return row?.role;
}

export async function setOrgMember(db: DbOrTx, orgId: number, userId: number, role: string, now: Date): Promise<void> {
  await db
    .insertInto('organization_members')
    .values({ org_id: orgId, user_id: userId, role, added_at: now })
    .onConflict((oc) => oc.columns(['org_id', 'user_id']).doUpdateSet({ role }))
    .execute();
}

export async function removeOrgMember(db: DbOrTx, orgId: number, userId: number): Promise<void> {
  await db.deleteFrom('organization_members').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
}

/** The user ids of an organisation's owners (none when the account is not an organisation). */
export async function listOrgOwnerIds(db: DbOrTx, orgId: number): Promise<number[]> {
  const rows = await db.selectFrom('organization_members').select('user_id').where('org_id', '=', orgId).where('role', '=', 'owner').execute();
  return rows.map((r) => r.user_id);
}

/** Owner on every live project of the account and every form in them. */
export async function grantOwnerEverywhere(db: DbOrTx, orgId: number, userId: number): Promise<void> {
  await sql`INSERT INTO project_roles (project_id, user_id, role)
    SELECT p.id, ${userId}::int, 'owner' FROM projects p WHERE p.owner_id = ${orgId}::int AND p.deleted_at IS NULL
    ON CONFLICT (project_id, user_id) DO UPDATE SET role = 'owner'`.execute(db);
  await sql`INSERT INTO form_roles (form_id, user_id, role, granted_role)
    SELECT f.id, ${userId}::int, 'owner', 'owner' FROM forms f WHERE f.owner_id = ${orgId}::int AND f.deleted_at IS NULL
    ON CONFLICT (form_id, user_id) DO UPDATE SET role = 'owner', granted_role = 'owner'`.execute(db);
}

/** Drops every role the user holds on the account's projects and forms (leaving the organisation). */
export async function removeRolesEverywhere(db: DbOrTx, orgId: number, userId: number): Promise<void> {
  await sql`DELETE FROM project_roles r USING projects p WHERE r.project_id = p.id AND p.owner_id = ${orgId}::int AND r.user_id = ${userId}::int`.execute(db);
  await sql`DELETE FROM form_roles r USING forms f WHERE r.form_id = f.id AND f.owner_id = ${orgId}::int AND r.user_id = ${userId}::int`.execute(db);
}

/** An organisation's Owners team as projects show it: `<org>#Owners` and its members' usernames. */
export interface OwnersTeam {
  readonly name: string;
  readonly role: 'owner';
  readonly users: string[];
}

/** The Owners teams of those of these accounts that are organisations. */
export async function listOwnersTeams(db: DbOrTx, accountIds: readonly number[]): Promise<Map<number, OwnersTeam>> {
  if (accountIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('organization_members as m')
    .innerJoin('users as o', 'o.id', 'm.org_id')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.org_id', 'o.username as org', 'u.username'])
    .where(sql<boolean>`m.org_id = ANY(${[...new Set(accountIds)]}::int[])`)
    .where('m.role', '=', 'owner')
    .where('u.is_active', '=', true)
    .orderBy('u.username')
    .execute();
  const teams = new Map<number, OwnersTeam>();
  for (const row of rows) {
    const team = teams.get(row.org_id) ?? { name: `${row.org}#Owners`, role: 'owner' as const, users: [] };
    team.users.push(row.username);
    teams.set(row.org_id, team);
  }
  return teams;
}
