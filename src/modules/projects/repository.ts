// SQL for projects, their roles, tags and stars.
import { sql, type Selectable } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';
import type { ProjectsTable } from '../../platform/schema.ts';
import type { Role } from '../../access/roles.ts';

export type ProjectRow = Selectable<ProjectsTable> & { owner_username: string; created_by_username: string | null };

function liveProjects(db: DbOrTx) {
  return db
    .selectFrom('projects as p')
    .innerJoin('users as o', 'o.id', 'p.owner_id')
    .leftJoin('users as c', 'c.id', 'p.created_by')
    .selectAll('p')
    .select(['o.username as owner_username', 'c.username as created_by_username'])
    .where('p.deleted_at', 'is', null)
    .where('o.is_active', '=', true);
}

export async function findLiveProject(db: DbOrTx, id: number): Promise<ProjectRow | undefined> {
  return liveProjects(db).where('p.id', '=', id).executeTakeFirst();
}

export interface ProjectListFilter {
  /** Projects where this user holds a role. */
  memberId?: number;
  /** Public projects (anonymous callers, or with an owner filter). */
  includePublic: boolean;
  ownerId?: number;
  tags?: readonly string[];
}

/**
 * The ids of the projects a filter matches, newest first as onadata orders them. Lists page over
 * these ids and load full rows only for the page (listProjectsByIds).
 */
export async function listLiveProjectIds(db: DbOrTx, filter: ProjectListFilter): Promise<number[]> {
  let query = db
    .selectFrom('projects as p')
    .innerJoin('users as o', 'o.id', 'p.owner_id')
    .select('p.id')
    .where('p.deleted_at', 'is', null)
    .where('o.is_active', '=', true);
  query = query.where((eb) => {
    const visible = [];
    if (filter.memberId !== undefined) {
      const memberId = filter.memberId;
      visible.push(
        eb.exists(
          eb.selectFrom('project_roles as r').select('r.project_id').whereRef('r.project_id', '=', 'p.id').where('r.user_id', '=', memberId),
        ),
      );
    }
    if (filter.includePublic) visible.push(eb('p.shared', '=', true));
    return visible.length ? eb.or(visible) : eb.val(false);
  });
  if (filter.ownerId !== undefined) query = query.where('p.owner_id', '=', filter.ownerId);
  if (filter.tags && filter.tags.length) {
    const tags = filter.tags.map((t) => t.toLowerCase());
    query = query.where((eb) =>
      eb.exists(
        eb.selectFrom('project_tags as t').select('t.project_id').whereRef('t.project_id', '=', 'p.id').where(sql<string>`lower(t.tag)`, 'in', tags),
      ),
    );
  }
  const rows = await query.orderBy('p.date_created', 'desc').orderBy('p.id', 'desc').execute();
  return rows.map((r) => r.id);
}

/** Live projects by id, in the order of `ids`. */
export async function listProjectsByIds(db: DbOrTx, ids: readonly number[]): Promise<ProjectRow[]> {
  if (ids.length === 0) return [];
  const rows = await liveProjects(db).where('p.id', 'in', ids).execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

export async function insertProject(
  db: DbOrTx,
  values: { name: string; owner_id: number; created_by: number; metadata: Record<string, unknown>; shared: boolean; now: Date },
): Promise<number> {
  const row = await db
    .insertInto('projects')
    .values({
      name: values.name,
      owner_id: values.owner_id,
      created_by: values.created_by,
      metadata: JSON.stringify(values.metadata),
      shared: values.shared,
      date_created: values.now,
      date_modified: values.now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function updateProject(
  db: DbOrTx,
  id: number,
  patch: { name?: string; owner_id?: number; metadata?: Record<string, unknown>; shared?: boolean; date_modified: Date },
): Promise<void> {
  const { metadata, ...rest } = patch;
  await db
    .updateTable('projects')
    .set({ ...rest, ...(metadata !== undefined ? { metadata: JSON.stringify(metadata) } : {}) })
    .where('id', '=', id)
    .execute();
}

export async function softDeleteProject(db: DbOrTx, id: number, userId: number, now: Date): Promise<void> {
  const suffix = `-deleted-at-${Math.floor(now.getTime() / 1000)}`;
  await db
    .updateTable('projects')
    .set({ deleted_at: now, deleted_by: userId, name: sql<string>`name || ${suffix}`, date_modified: now })
    .where('id', '=', id)
    .execute();
}

/** Live project names of an account that equal `name`, exactly or ignoring case. */
export async function findProjectNameClash(
  db: DbOrTx,
  ownerId: number,
  name: string,
  exceptId?: number,
): Promise<'exact' | 'case' | undefined> {
  let query = db
    .selectFrom('projects')
    .select('name')
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null)
    .where(sql<string>`lower(name)`, '=', name.toLowerCase());
  if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
  const rows = await query.execute();
  if (rows.some((r) => r.name === name)) return 'exact';
  return rows.length ? 'case' : undefined;
}

export async function findDefaultProject(db: DbOrTx, ownerId: number, name: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('projects')
    .select('id')
    .where('owner_id', '=', ownerId)
    .where('name', '=', name)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row?.id;
}

/** The public (shared) live forms of some projects. */
export async function listSharedFormIds(db: DbOrTx, projectIds: readonly number[]): Promise<Set<number>> {
  if (projectIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('forms')
    .select('id')
    .where('project_id', 'in', projectIds)
    .where('deleted_at', 'is', null)
    .where('shared', '=', true)
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** id_strings of the project's live forms that `ownerId` already uses on another live form (any case). */
export async function listFormIdStringClashes(db: DbOrTx, projectId: number, ownerId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('forms as f')
    .innerJoin('forms as other', (join) =>
      join
        .on(sql<string>`lower(other.id_string)`, '=', sql<string>`lower(f.id_string)`)
        .on('other.owner_id', '=', ownerId)
        .on('other.deleted_at', 'is', null)
        .onRef('other.project_id', '!=', 'f.project_id'),
    )
    .select('f.id_string')
    .where('f.project_id', '=', projectId)
    .where('f.deleted_at', 'is', null)
    .execute();
  return rows.map((r) => r.id_string);
}

// ---------------------------------------------------------------- roles

/** The roles some users hold on one project. */
export async function projectRolesOfUsers(db: DbOrTx, projectId: number, userIds: readonly number[]): Promise<Map<number, Role>> {
  if (userIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('project_roles')
    .select(['user_id', 'role'])
    .where('project_id', '=', projectId)
    .where('user_id', 'in', userIds)
    .execute();
  return new Map(rows.map((r) => [r.user_id, r.role as Role]));
}

export interface MemberRow {
  object_id: number;
  user_id: number;
  username: string;
  first_name: string;
  last_name: string;
  is_org: boolean;
  metadata: Record<string, unknown>;
  role: Role;
}

export async function listProjectMembers(db: DbOrTx, projectIds: readonly number[]): Promise<MemberRow[]> {
  if (projectIds.length === 0) return [];
  const rows = await db
    .selectFrom('project_roles as r')
    .innerJoin('users as u', 'u.id', 'r.user_id')
    .select(['r.project_id as object_id', 'u.id as user_id', 'u.username', 'u.first_name', 'u.last_name', 'u.is_org', 'u.metadata', 'r.role'])
    .where('r.project_id', 'in', projectIds)
    .where('u.is_active', '=', true)
    .orderBy('u.id')
    .execute();
  return rows.map((r) => ({ ...r, role: r.role as Role }));
}

const DEFAULT_PROJECT_LOCK_SPACE = 8022;

/** Serialises the creation of an account's default project (first publishes may run at once). */
export async function lockDefaultProject(db: DbOrTx, ownerId: number): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${DEFAULT_PROJECT_LOCK_SPACE}::integer, ${ownerId}::integer)`.execute(db);
}

export async function setProjectRole(db: DbOrTx, projectId: number, userId: number, role: Role): Promise<void> {
  await db
    .insertInto('project_roles')
    .values({ project_id: projectId, user_id: userId, role })
    .onConflict((oc) => oc.columns(['project_id', 'user_id']).doUpdateSet({ role }))
    .execute();
}

export async function removeProjectRole(db: DbOrTx, projectId: number, userId: number): Promise<void> {
  await db.deleteFrom('project_roles').where('project_id', '=', projectId).where('user_id', '=', userId).execute();
}

export async function countProjectOwners(db: DbOrTx, projectId: number): Promise<number> {
  const row = await db
    .selectFrom('project_roles')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('project_id', '=', projectId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// ---------------------------------------------------------------- tags

export async function listProjectTags(db: DbOrTx, projectIds: readonly number[]): Promise<Map<number, string[]>> {
  const map = new Map<number, string[]>();
  if (projectIds.length === 0) return map;
  const rows = await db.selectFrom('project_tags').select(['project_id', 'tag']).where('project_id', 'in', projectIds).orderBy('tag').execute();
  for (const row of rows) (map.get(row.project_id) ?? map.set(row.project_id, []).get(row.project_id))?.push(row.tag);
  return map;
}

/** Adds the tags the project lacks; tags are case-insensitive, so `HELLO` beside `hello` is not added. */
export async function addProjectTags(db: DbOrTx, projectId: number, tags: readonly string[]): Promise<void> {
  if (tags.length === 0) return;
  await sql`INSERT INTO project_tags (project_id, tag)
    SELECT ${projectId}::int, t FROM unnest(${[...tags]}::text[]) AS t
    WHERE NOT EXISTS (SELECT 1 FROM project_tags p WHERE p.project_id = ${projectId}::int AND lower(p.tag) = lower(t))
    ON CONFLICT DO NOTHING`.execute(db);
}

export async function removeProjectTag(db: DbOrTx, projectId: number, tag: string): Promise<boolean> {
  const result = await db
    .deleteFrom('project_tags')
    .where('project_id', '=', projectId)
    .where(sql<string>`lower(tag)`, '=', tag.toLowerCase())
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

// ---------------------------------------------------------------- stars

export async function starredProjectIds(db: DbOrTx, projectIds: readonly number[], userId: number): Promise<Set<number>> {
  if (projectIds.length === 0) return new Set();
  const rows = await db.selectFrom('project_stars').select('project_id').where('project_id', 'in', projectIds).where('user_id', '=', userId).execute();
  return new Set(rows.map((r) => r.project_id));
}

export async function addStar(db: DbOrTx, projectId: number, userId: number): Promise<void> {
  await db.insertInto('project_stars').values({ project_id: projectId, user_id: userId }).onConflict((oc) => oc.doNothing()).execute();
}

export async function removeStar(db: DbOrTx, projectId: number, userId: number): Promise<void> {
  await db.deleteFrom('project_stars').where('project_id', '=', projectId).where('user_id', '=', userId).execute();
}

export async function listStarredProjectIds(db: DbOrTx, userId: number): Promise<number[]> {
  const rows = await db.selectFrom('project_stars').select('project_id').where('user_id', '=', userId).orderBy('project_id').execute();
  return rows.map((r) => r.project_id);
}

export async function listStargazerIds(db: DbOrTx, projectId: number): Promise<number[]> {
  const rows = await db.selectFrom('project_stars').select('user_id').where('project_id', '=', projectId).orderBy('user_id').execute();
  return rows.map((r) => r.user_id);
}
