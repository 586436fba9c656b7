// Project use cases: create, list, read, update, delete, share, labels and stars.
import type { RequestContext } from '../../context.ts';
import { inTransaction, type DbOrTx } from '../../platform/db.ts';
import { errors, type FieldErrors } from '../../errors.ts';
import {
  canAddToAccount,
  canSeeProfileEmail,
  isAuthenticated,
  requireUser,
  ROLES,
  type Role,
} from '../../access/index.ts';
import { parseObjectId, requireProject, withProjectStandings, type ProjectGrant } from '../../access/load.ts';
import { pageOf, pageWindow, resolvePage, type PagePlace, type PageRequest } from '../../lib/pages.ts';
import { addError } from '../accounts/validation.ts';
import { findActiveUserByUsername, listUsersByIds, listUsersByUsernames, type UserRow } from '../accounts/repository.ts';
import { profileToApi } from '../accounts/to-api.ts';
import { groupBy, parseTags } from '../shared/members.ts';
import { fieldErrorsOf } from '../shared/field-errors.ts';
import * as repo from './repository.ts';
import { grantOrgOwners, orgRoleFor } from '../orgs/service.ts';
import { listOwnersTeams } from '../orgs/repository.ts';
import * as forms from '../forms/repository.ts';
import { grantFormRole } from '../forms/grants.ts';
import { deleteExportsOfForms, lockFormExports } from '../exports/stored-exports-repository.ts';
import { removeExportFiles } from '../exports/files.ts';
import { projectToApi } from './to-api.ts';

/** A project as shown: the caller's role on it and whether they see all of it. */
type ShownProject = Pick<ProjectGrant, 'project' | 'role' | 'full'>;

async function represent(
  ctx: RequestContext,
  projects: readonly ShownProject[],
  shape: 'detail' | 'list',
  listHasOwnerFilter = false,
): Promise<Record<string, unknown>[]> {
  const ids = projects.map((p) => p.project.id);
  const outsiderIds = projects.filter((p) => !p.full).map((p) => p.project.id);
  const [members, allForms, tags, stars, sharedForms, teams] = await Promise.all([
    repo.listProjectMembers(ctx.db, ids),
    forms.listProjectFormSummaries(ctx.db, ids),
    repo.listProjectTags(ctx.db, ids),
    isAuthenticated(ctx.actor) ? repo.starredProjectIds(ctx.db, ids, ctx.actor.user.id) : Promise.resolve(new Set<number>()),
    repo.listSharedFormIds(ctx.db, outsiderIds),
    listOwnersTeams(ctx.db, projects.map((p) => p.project.owner_id)),
  ]);
  // Outsiders of a public project see only its public forms (a private one is a 404 for them).
  const outsider = new Set(outsiderIds);
  const formRows = allForms.filter((f) => !outsider.has(f.project_id) || sharedForms.has(f.id));
  const membersBy = groupBy(members, (m) => m.object_id);
  const formsBy = groupBy(formRows, (f) => f.project_id);
  const actorId = isAuthenticated(ctx.actor) ? ctx.actor.user.id : undefined;
  const ownersTeam = (accountId: number) => {
    const team = teams.get(accountId);
    return team ? [team] : [];
  };
  return projects.map(({ project, role, full }) => {
    const narrow = shape === 'list' && !listHasOwnerFilter && role !== 'owner' && role !== 'manager';
    return projectToApi(
      project,
      ctx.baseUrl,
      {
        members: membersBy.get(project.id) ?? [],
        forms: formsBy.get(project.id) ?? [],
        tags: tags.get(project.id) ?? [],
        starred: stars.has(project.id),
        teams: ownersTeam(project.owner_id),
        full,
        ...(narrow ? { memberFilter: (m: repo.MemberRow) => m.user_id === actorId || m.user_id === project.owner_id } : {}),
      },
      shape,
    );
  });
}

export async function projectDetail(ctx: RequestContext, visible: ShownProject): Promise<Record<string, unknown>> {
  const [body] = await represent(ctx, [visible], 'detail');
  return body ?? {};
}

// ---------------------------------------------------------------- create

/** A project's writable fields as a request gave them (projects/inputs.ts reads them). */
export interface ProjectFieldsInput {
  name?: string;
  /** The username the `owner` field names; the service looks the account up. */
  owner?: string;
  shared?: boolean;
  metadata?: Record<string, unknown>;
  /** What was wrong with the fields as read; the service adds its lookups' and answers all in one 400. */
  fieldErrors: FieldErrors;
}

async function resolveOwner(ctx: RequestContext, username: string, fieldErrors: FieldErrors): Promise<UserRow | undefined> {
  const owner = await findActiveUserByUsername(ctx.db, username);
  if (!owner) addError(fieldErrors, 'owner', ['Invalid hyperlink - Object does not exist.']);
  return owner;
}

export async function createProject(ctx: RequestContext, input: ProjectFieldsInput): Promise<Record<string, unknown>> {
  const actor = requireUser(ctx.actor);
  const fieldErrors = fieldErrorsOf(input);
  const { name } = input;
  // Gather defaults the owner to the caller and `public` to false where onadata requires them.
  const owner = input.owner !== undefined ? await resolveOwner(ctx, input.owner, fieldErrors) : actor;
  const shared = input.shared ?? false;
  const metadata = input.metadata ?? {};
  if (Object.keys(fieldErrors).length || name === undefined || !owner) throw errors.invalidFields(fieldErrors);

  const clash = await repo.findProjectNameClash(ctx.db, owner.id, name);
  if (clash === 'exact') throw errors.projectNotUnique();
  if (clash === 'case') throw errors.projectNameExists(name);
  if (!canAddToAccount(ctx.actor, owner.id, await orgRoleFor(ctx, owner.id))) {
    throw errors.noRightToCreateProjectIn(owner.username);
  }
  const id = await inTransaction(ctx.db, async (trx) => {
      const projectId = await repo.insertProject(trx, { name, owner_id: owner.id, created_by: actor.id, metadata, shared, now: ctx.clock.now() });
      await repo.setProjectRole(trx, projectId, owner.id, 'owner');
      if (actor.id !== owner.id) await repo.setProjectRole(trx, projectId, actor.id, 'owner');
      await grantOrgOwners(trx, owner.id, projectId);
      return projectId;
    })
    .catch(uniqueNameClash);
  const [created] = await withProjectStandings(ctx, [await mustFind(ctx, id)]);
  if (!created) throw new Error('a project read back is missing');
  return projectDetail(ctx, created);
}

/** A concurrent create or rename that won the race for the name: the same 400 as the check above. */
function uniqueNameClash(error: unknown): never {
  if (typeof error === 'object' && error !== null && 'code' in error && error.code === '23505') {
    throw errors.projectNotUnique();
  }
  throw error;
}

async function mustFind(ctx: RequestContext, id: number): Promise<repo.ProjectRow> {
  const project = await repo.findLiveProject(ctx.db, id);
  if (!project) throw errors.notFound();
  return project;
}

/**
 * The account's default project, "<username>'s Project", created when missing inside the caller's
 * transaction (a publish's): a publish that fails leaves no project behind.
 */
export async function defaultProjectIn(trx: DbOrTx, owner: UserRow, now: Date): Promise<number> {
  const name = defaultProjectName(owner);
  await repo.lockDefaultProject(trx, owner.id);
  const existing = await repo.findDefaultProject(trx, owner.id, name);
  if (existing !== undefined) return existing;
  const id = await repo.insertProject(trx, { name, owner_id: owner.id, created_by: owner.id, metadata: {}, shared: false, now });
  await repo.setProjectRole(trx, id, owner.id, 'owner');
  await grantOrgOwners(trx, owner.id, id);
  return id;
}

function defaultProjectName(owner: UserRow): string {
  return `${owner.username}'s Project`;
}

// ---------------------------------------------------------------- list and read

export interface ProjectPage {
  items: Record<string, unknown>[];
  /** Where the page sits, for the pagination Link header. */
  place: PagePlace;
}

/**
 * One page of the projects the caller may see, newest first. Only the page is represented:
 * members, forms, tags and stars are loaded for the projects on it, not for every match.
 */
export async function listProjects(
  ctx: RequestContext,
  query: { owner?: string | undefined; tags?: string | undefined; tag?: string | undefined } & PageRequest,
): Promise<ProjectPage> {
  const window = pageWindow(query);
  const tags = parseTags(query.tags ?? query.tag ?? '');
  let ownerId: number | undefined;
  if (query.owner) {
    const owner = await findActiveUserByUsername(ctx.db, query.owner);
    if (!owner) return { items: [], place: resolvePage(window, 0) };
    ownerId = owner.id;
  }
  const actorId = isAuthenticated(ctx.actor) ? ctx.actor.user.id : undefined;
  const ids = await repo.listLiveProjectIds(ctx.db, {
    ...(actorId !== undefined ? { memberId: actorId } : {}),
    includePublic: actorId === undefined || ownerId !== undefined,
    ...(ownerId !== undefined ? { ownerId } : {}),
    ...(tags.length ? { tags } : {}),
  });
  const { pageItems, place } = pageOf(ids, window);
  const rows = await repo.listProjectsByIds(ctx.db, pageItems);
  const items = await represent(ctx, await withProjectStandings(ctx, rows), 'list', ownerId !== undefined);
  return { items, place };
}

export async function getProject(ctx: RequestContext, rawId: string): Promise<Record<string, unknown>> {
  return projectDetail(ctx, await requireProject(ctx, rawId, 'view_project'));
}

// ---------------------------------------------------------------- update and delete

/** PUT (`full`: the input was read with every field required, and replaces the metadata) or PATCH. */
export async function updateProject(ctx: RequestContext, rawId: string, input: ProjectFieldsInput, full: boolean): Promise<Record<string, unknown>> {
  requireUser(ctx.actor);
  const { project, allows } = await requireProject(ctx, rawId, 'change_project');
  const fieldErrors = fieldErrorsOf(input);
  const { name, shared, metadata } = input;
  const newOwner = input.owner !== undefined ? await resolveOwner(ctx, input.owner, fieldErrors) : undefined;
  if (Object.keys(fieldErrors).length) throw errors.invalidFields(fieldErrors);
  const moving = newOwner !== undefined && newOwner.id !== project.owner_id;
  // Moving a project to another account is the owner role's transfer_project, and needs the
  // right to add projects to the target account; editors and managers may change the rest.
  if (moving && !allows('transfer_project')) throw errors.permissionDenied();
  if (moving && !canAddToAccount(ctx.actor, newOwner.id, await orgRoleFor(ctx, newOwner.id))) {
    throw errors.noRightToCreateProjectIn(newOwner.username);
  }
  const ownerId = newOwner?.id ?? project.owner_id;
  const finalName = name ?? project.name;
  if (finalName !== project.name || moving) {
    const clash = await repo.findProjectNameClash(ctx.db, ownerId, finalName, project.id);
    if (clash) throw errors.projectNotUnique();
  }
  if (moving) {
    // The project's forms move with it; an id_string the target account already uses would clash.
    const clashes = await repo.listFormIdStringClashes(ctx.db, project.id, newOwner.id);
    if (clashes.length) throw errors.idStringExistsInAccount();
  }
  const now = ctx.clock.now();
  await inTransaction(ctx.db, async (trx) => {
      await repo.updateProject(trx, project.id, {
        date_modified: now,
        ...(name !== undefined ? { name } : {}),
        ...(shared !== undefined ? { shared } : {}),
        ...(moving ? { owner_id: newOwner.id } : {}),
        // PUT replaces the metadata; PATCH merges the given keys one level deep.
        ...(metadata !== undefined ? { metadata: full ? metadata : { ...project.metadata, ...metadata } } : {}),
      });
      if (shared !== undefined) await forms.updateProjectForms(trx, project.id, { shared, shared_data: shared, date_modified: now });
      if (moving) {
        await repo.setProjectRole(trx, project.id, newOwner.id, 'owner');
        await forms.updateProjectForms(trx, project.id, { owner_id: newOwner.id, date_modified: now });
        for (const formId of await forms.listProjectFormIds(trx, project.id, true)) await forms.setFormRole(trx, formId, newOwner.id, 'owner');
      }
    })
    .catch(uniqueNameClash);
  const [updated] = await withProjectStandings(ctx, [await mustFind(ctx, project.id)]);
  if (!updated) throw new Error('a project read back is missing');
  return projectDetail(ctx, updated);
}

export async function deleteProject(ctx: RequestContext, rawId: string): Promise<void> {
  const actor = requireUser(ctx.actor);
  const { project } = await requireProject(ctx, rawId, 'delete_project');
  const now = ctx.clock.now();
  const files = await inTransaction(ctx.db, async (trx) => {
    for (const formId of await forms.listProjectFormIds(trx, project.id, false)) await lockFormExports(trx, formId);
    await forms.softDeleteForms(trx, { projectId: project.id }, actor.id, now);
    await repo.softDeleteProject(trx, project.id, actor.id, now);
    // The forms' exports go with them; their files once this has committed.
    return deleteExportsOfForms(trx, { projectId: project.id });
  });
  await removeExportFiles(ctx.config.dataDir, files);
}

// ---------------------------------------------------------------- share

/** Gives `user` the role on the project and, through the meta-perms mapping, on each of its forms. */
export async function grantProjectRole(trx: Parameters<typeof repo.setProjectRole>[0], projectId: number, userId: number, role: Role): Promise<void> {
  await repo.setProjectRole(trx, projectId, userId, role);
  const formIds = await forms.listProjectFormIds(trx, projectId, true);
  const metaPerms = await forms.findMetaPerms(trx, formIds);
  for (const formId of formIds) await grantFormRole(trx, formId, userId, role, metaPerms.get(formId));
}

/** A share request (projects/inputs.ts reads it). */
export interface ShareProjectInput {
  /** Take the users' roles away instead of granting `role`. */
  remove: boolean;
  usernames: string[];
  /** Absent when the field was missing or wrong (fieldErrors says which). */
  role?: Role;
  /** The text mailed to the users a grant reaches, when one was given. */
  emailMessage?: string;
  fieldErrors: FieldErrors;
}

export async function shareProject(ctx: RequestContext, rawId: string, input: ShareProjectInput): Promise<void> {
  const actor = requireUser(ctx.actor);
  const visible = await requireProject(ctx, rawId, 'view_project');
  const { project } = visible;
  const { remove, usernames: names } = input;
  const removingSelf = remove && names.length === 1 && names[0]?.toLowerCase() === actor.username.toLowerCase();
  if (!removingSelf && !visible.allows('change_project')) throw errors.permissionDenied();

  const fieldErrors = fieldErrorsOf(input);
  const found = await listUsersByUsernames(ctx.db, names);
  const users = found.filter((u) => u.is_active);
  if (names.length) {
    const missing = names.filter((n) => !found.some((u) => u.username === n));
    const inactive = found.filter((u) => !u.is_active).map((u) => u.username);
    if (missing.length) addError(fieldErrors, 'username', [`The following user(s) does/do not exist: ${missing.join(', ')}`]);
    else if (inactive.length) addError(fieldErrors, 'username', [`The following user(s) is/are not active: ${inactive.join(', ')}`]);
    else if (!remove && users.some((u) => u.id === project.owner_id)) {
      addError(fieldErrors, 'username', [`Cannot share project with the owner (${project.owner_username})`]);
    }
  }
  const { role } = input;
  if (Object.keys(fieldErrors).length || role === undefined) throw errors.invalidFields(fieldErrors);

  if (remove) {
    for (const user of users) {
      const current = (await repo.projectRolesOfUsers(ctx.db, project.id, [user.id])).get(user.id);
      if (current === 'owner' && (await repo.countProjectOwners(ctx.db, project.id)) <= 1) {
        throw errors.projectNeedsOwner();
      }
      // The owning account keeps its project; onadata would strip it and leave the account locked out.
      if (user.id === project.owner_id) throw errors.projectOwnerUnremovable(project.owner_username);
    }
  }
  // onadata lets an editor grant owner (or demote a manager); Gather caps what a sharer may
  // grant, change or remove at the sharer's own role. Removing yourself is always allowed.
  if (!removingSelf) {
    const ownRank = visible.role === undefined ? -1 : ROLES.indexOf(visible.role);
    if (!remove && ROLES.indexOf(role) > ownRank) throw errors.projectRoleAboveOwn();
    const current = await repo.projectRolesOfUsers(ctx.db, project.id, users.map((u) => u.id));
    if ([...current.values()].some((r) => ROLES.indexOf(r) > ownRank)) {
      throw errors.projectRoleOfHigherUser();
    }
  }
  await inTransaction(ctx.db, async (trx) => {
    for (const user of users) {
      if (remove) {
        await repo.removeProjectRole(trx, project.id, user.id);
        await forms.removeFormRoles(trx, await forms.listProjectFormIds(trx, project.id, true), user.id);
      } else {
        await grantProjectRole(trx, project.id, user.id, role);
      }
    }
  });
  const message = input.emailMessage;
  if (!remove && message !== undefined) {
    for (const user of users) {
      if (!user.email) continue;
      // A name may hold line breaks; in a subject they could forge mail headers.
      const subject = `${project.name.replace(/[\r\n\t\v\f\u2028\u2029]+/g, ' ')} project has been shared with you.`;
      await ctx.mailer.send({ to: user.email, subject, text: message });
    }
  }
}

// ---------------------------------------------------------------- labels

const MAX_TAG_LENGTH = 100;

export async function projectLabels(ctx: RequestContext, rawId: string): Promise<string[]> {
  const { project } = await requireProject(ctx, rawId, 'view_project');
  return (await repo.listProjectTags(ctx.db, [project.id])).get(project.id) ?? [];
}

/** `tags` as read from the request (comma- or space-separated, taggit's way). */
export async function addProjectLabels(ctx: RequestContext, rawId: string, tags: readonly string[]): Promise<{ status: number; tags: string[] }> {
  requireUser(ctx.actor);
  const { project } = await requireProject(ctx, rawId, 'add_project');
  // taggit's limit; a longer tag would also overflow the tag index (a 500 on PostgreSQL).
  if (tags.some((t) => t.length > MAX_TAG_LENGTH)) throw errors.tagTooLong(MAX_TAG_LENGTH);
  if (tags.length) await repo.addProjectTags(ctx.db, project.id, tags);
  return { status: tags.length ? 201 : 200, tags: (await repo.listProjectTags(ctx.db, [project.id])).get(project.id) ?? [] };
}

export async function removeProjectLabel(ctx: RequestContext, rawId: string, tag: string): Promise<{ status: number; tags: string[] }> {
  requireUser(ctx.actor);
  const { project } = await requireProject(ctx, rawId, 'delete_project');
  const removed = await repo.removeProjectTag(ctx.db, project.id, tag);
  return { status: removed ? 200 : 202, tags: (await repo.listProjectTags(ctx.db, [project.id])).get(project.id) ?? [] };
}

// ---------------------------------------------------------------- stars

async function loadForStar(ctx: RequestContext, rawId: string): Promise<repo.ProjectRow> {
  const id = parseObjectId(ctx, rawId, errors.projectIdInvalid);
  const project = await repo.findLiveProject(ctx.db, id);
  if (!project) throw errors.notFound();
  return project;
}

export async function starProject(ctx: RequestContext, rawId: string, starred: boolean): Promise<void> {
  const actor = requireUser(ctx.actor);
  const project = await loadForStar(ctx, rawId);
  if (starred) await repo.addStar(ctx.db, project.id, actor.id);
  else await repo.removeStar(ctx.db, project.id, actor.id);
}

/**
 * GET /api/v1/user/{username}/starred: the projects that user starred, as project list items.
 * onadata answers every starred project to any caller; here only those the caller may see.
 */
export async function listStarredProjects(ctx: RequestContext, username: string): Promise<Record<string, unknown>[]> {
  requireUser(ctx.actor);
  const user = await findActiveUserByUsername(ctx.db, username);
  if (!user || user.username !== username) throw errors.notFound();
  const starred: repo.ProjectRow[] = [];
  for (const id of await repo.listStarredProjectIds(ctx.db, user.id)) {
    const project = await repo.findLiveProject(ctx.db, id);
    if (project) starred.push(project);
  }
  return represent(ctx, (await withProjectStandings(ctx, starred)).filter((p) => p.visible), 'list');
}

export async function listStargazers(ctx: RequestContext, rawId: string): Promise<Record<string, unknown>[]> {
  const project = await loadForStar(ctx, rawId);
  const ids = await repo.listStargazerIds(ctx.db, project.id);
  const users = (await listUsersByIds(ctx.db, ids)).filter((u) => u.is_active);
  return users.map((u) => profileToApi(u, ctx.baseUrl, { includeEmail: canSeeProfileEmail(ctx.actor, u), includeMetadata: false }));
}
