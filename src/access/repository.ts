// SQL for the roles callers hold on forms and projects: what the access decisions are made from.
// Sharing (granting, listing members) writes and lists roles in the forms and projects modules.
import { sql } from 'kysely';
import type { DbOrTx } from '../platform/db.ts';
import type { Role } from './roles.ts';

export async function formRoleOf(db: DbOrTx, formId: number, userId: number): Promise<Role | undefined> {
  const row = await db.selectFrom('form_roles').select('role').where('form_id', '=', formId).where('user_id', '=', userId).executeTakeFirst();
  return row?.role as Role | undefined;
}

/** The roles a user holds on some forms. */
export async function formRolesOf(db: DbOrTx, formIds: readonly number[], userId: number): Promise<Map<number, Role>> {
  if (formIds.length === 0) return new Map();
  const rows = await db.selectFrom('form_roles').select(['form_id', 'role']).where(sql<boolean>`form_id = ANY(${[...formIds]}::int[])`).where('user_id', '=', userId).execute();
  return new Map(rows.map((r) => [r.form_id, r.role as Role]));
}

export async function projectRoleOf(db: DbOrTx, projectId: number, userId: number): Promise<Role | undefined> {
  const row = await db
    .selectFrom('project_roles')
    .select('role')
    .where('project_id', '=', projectId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.role as Role | undefined;
}

/** The roles a user holds on some projects. */
export async function projectRolesOf(db: DbOrTx, projectIds: readonly number[], userId: number): Promise<Map<number, Role>> {
  if (projectIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('project_roles')
    .select(['project_id', 'role'])
    .where('project_id', 'in', projectIds)
    .where('user_id', '=', userId)
    .execute();
  return new Map(rows.map((r) => [r.project_id, r.role as Role]));
}
