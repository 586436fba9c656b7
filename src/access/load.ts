// The one loader of what a caller may touch. A service asks for a form or a project by id and a
// permission (src/access/roles.ts) and gets back the object, the caller's role on it and the
// records that permission reaches, or the refusal onadata answers: 404 for what the caller may not
// see, 403 for what they see but may not do. Role lookups and access facts are built here and in
// the access module only (eslint refuses them elsewhere).
import type { RequestContext } from '../context.ts';
import { errors, type AppError } from '../errors.ts';
// The loader reads forms and projects through their repositories (data access only, never a
// service): see the exception in eslint.config.js.
import { findLiveForm, type FormRow } from '../modules/forms/repository.ts';
import { findLiveProject, type ProjectRow } from '../modules/projects/repository.ts';
import { canReviewSubmissions, canSeeForm, canSeeProject, formAllows, inRecordScope, mayReplaceRecord, projectAllows, recordReadScope, recordWriteScope, seesFullProject, type FormAccessFacts, type RecordScope } from './index.ts';
import { isAuthenticated, type Principal } from './principal.ts';
import { formRoleOf, formRolesOf, projectRoleOf, projectRolesOf } from './repository.ts';
import type { FormPermission, ProjectPermission, Role } from './roles.ts';

type Caller = Pick<RequestContext, 'actor' | 'db' | 'challenge'>;

/**
 * A request's object id: a positive 32-bit integer. Anything else is 404 for an anonymous caller
 * (who learns nothing about ids) and 400 with `invalid()` for a signed-in one, as onadata answers.
 */
export function parseObjectId(ctx: Pick<RequestContext, 'actor'>, raw: string, invalid: () => AppError): number {
  if (/^\d+$/.test(raw) && Number(raw) <= 2_147_483_647) return Number(raw);
  // `/api/v1/forms/` (a trailing slash) names no object: 404, as onadata answers it.
  if (raw === '') throw errors.notFound();
  if (!isAuthenticated(ctx.actor)) throw errors.notFound();
  throw invalid();
}

// ---------------------------------------------------------------- forms

/** What a form's access is decided from: its sharing flags (no public data when absent). */
export interface SharedForm {
  shared: boolean;
  shared_data?: boolean;
}

/** The caller's standing on one form: their role and what it lets them do. */
export interface FormStanding {
  readonly role: Role | undefined;
  /** The caller sees the form: a role on it, or a public form. */
  readonly visible: boolean;
  /** Which records the caller reads (the data API's rule, public data included). */
  readonly readScope: RecordScope;
  /** Which records the caller's role changes, where it changes records at all (access.recordWriteScope). */
  readonly writeScope: 'all' | 'own';
  allows(permission: FormPermission): boolean;
  /** Whether the caller reads a record submitted by `submittedBy`. */
  reads(submittedBy: number | null): boolean;
  /**
   * Whether the caller may change (delete, tag, add files to) a record submitted by `submittedBy`,
   * where their role changes records at all: every record, or only their own for restricted roles.
   */
  changes(submittedBy: number | null): boolean;
  /** Whether the caller may replace (edit by deprecatedID) a record (access.mayReplaceRecord). */
  mayReplace(ownerRequireAuth: boolean, submittedBy: number | null): boolean;
  /** Owners and managers review records. */
  readonly reviews: boolean;
}

/** The caller's standing on a form whose role is already known (a batch, a cached decision). */
export function formStanding(actor: Principal, form: SharedForm, role: Role | undefined): FormStanding {
  const facts: FormAccessFacts = { shared: form.shared, role };
  const userId = isAuthenticated(actor) ? actor.user.id : undefined;
  const readScope = recordReadScope({ ...facts, sharedData: form.shared_data ?? false }, userId !== undefined);
  const writeScope = recordWriteScope(facts);
  return {
    role,
    visible: canSeeForm(facts),
    readScope,
    writeScope,
    allows: (permission) => formAllows(facts, permission),
    reads: (submittedBy) => inRecordScope(readScope, userId, submittedBy),
    changes: (submittedBy) => userId !== undefined && inRecordScope(writeScope, userId, submittedBy),
    mayReplace: (ownerRequireAuth, submittedBy) => userId !== undefined && mayReplaceRecord(facts, ownerRequireAuth, userId, submittedBy),
    reviews: canReviewSubmissions(facts),
  };
}

/** A form the caller may act on, with the records the asked permission reaches. */
export interface FormGrant extends FormStanding {
  readonly form: FormRow;
  /** The records the permission reaches: every one, or (restricted roles) the caller's own. */
  readonly scope: RecordScope;
  /** Set when the scope is the caller's own records: the caller. */
  readonly submittedBy: number | undefined;
}

export interface GrantOptions {
  /** The 403, where onadata words it (default: its generic permission message). */
  denied?: () => AppError;
  /** What a hidden object answers instead of "No XForm matches the given query." (or Project). */
  hidden?: () => AppError;
  /** Every refusal of an anonymous caller is a 401 with the challenge (Briefcase clients sign in on it). */
  anonymous?: 'challenge';
}

/** Permissions that change records: their scope is the records the caller may change. */
const CHANGES_RECORDS: ReadonlySet<FormPermission> = new Set(['change_xform', 'delete_submission']);

/**
 * The form `rawId` names, if the caller holds `need` on it. Besides the role's permission:
 * - `view_xform`: seeing the form (a role, or a public form);
 * - `view_xform_data`: reading records, the data API's rule: public data lets anyone read every
 *   record, even of a form they may not see (onadata's data viewset falls back to shared_data);
 *   a caller who reads none is 403, or 404 when anonymous;
 * - `can_export_xform_data`: public data lets anyone export; otherwise sign-in (401) and the
 *   permission (403); restricted roles export their own records, as the data API shows them.
 */
export async function requireForm(ctx: Caller, rawId: string, need: FormPermission, options: GrantOptions = {}): Promise<FormGrant> {
  const form = await findLiveForm(ctx.db, parseObjectId(ctx, rawId, errors.formIdInvalid));
  if (!form) throw errors.notFound();
  return grantForm(ctx, form, need, options);
}

/** requireForm's decision on a form found otherwise (by id_string, through a record or entry). */
export async function grantForm(ctx: Caller, form: FormRow, need: FormPermission, options: GrantOptions = {}): Promise<FormGrant> {
  const authenticated = isAuthenticated(ctx.actor);
  const role = authenticated ? await formRoleOf(ctx.db, form.id, ctx.actor.user.id) : undefined;
  const standing = formStanding(ctx.actor, form, role);
  const refuse = (error: AppError): never => {
    throw !authenticated && options.anonymous === 'challenge' ? errors.notAuthenticated(ctx.challenge) : error;
  };
  const hidden = (): AppError => options.hidden?.() ?? errors.noMatch('XForm');
  let scope: RecordScope;
  if (need === 'view_xform_data') {
    if (!standing.visible && !form.shared_data) refuse(hidden());
    scope = standing.readScope;
    if (scope === 'none') refuse(authenticated ? (options.denied ?? errors.permissionDenied)() : errors.notFound());
  } else if (need === 'can_export_xform_data') {
    if (!standing.visible) refuse(hidden());
    if (!form.shared_data) {
      if (!authenticated) throw errors.notAuthenticated(ctx.challenge);
      if (!standing.allows(need)) refuse((options.denied ?? errors.permissionDenied)());
    }
    // Every role that exports reads at least its own records, so this is never 'none'.
    scope = standing.readScope;
  } else {
    if (!standing.visible) refuse(hidden());
    if (need !== 'view_xform' && !standing.allows(need)) refuse((options.denied ?? errors.permissionDenied)());
    scope = CHANGES_RECORDS.has(need) && authenticated ? standing.writeScope : standing.readScope;
  }
  const submittedBy = scope === 'own' && authenticated ? ctx.actor.user.id : undefined;
  return { ...standing, form, scope, submittedBy };
}

/** The caller's role on a form, for decisions remembered with the role they rest on (submissions). */
export async function callerFormRole(ctx: Caller, formId: number): Promise<Role | undefined> {
  return isAuthenticated(ctx.actor) ? formRoleOf(ctx.db, formId, ctx.actor.user.id) : undefined;
}

/** The forms among `rows` on which the caller holds `permission` (one role lookup for all). */
export async function formsAllowing<F extends SharedForm & { id: number }>(ctx: Caller, rows: readonly F[], permission: FormPermission): Promise<F[]> {
  if (!isAuthenticated(ctx.actor)) return rows.filter((row) => formStanding(ctx.actor, row, undefined).allows(permission));
  const roles = await formRolesOf(ctx.db, rows.map((r) => r.id), ctx.actor.user.id);
  return rows.filter((row) => formStanding(ctx.actor, row, roles.get(row.id)).allows(permission));
}

// ---------------------------------------------------------------- projects

/** The caller's standing on one project. */
export interface ProjectStanding {
  readonly role: Role | undefined;
  /** The caller sees the project: a role on it, or a public project. */
  readonly visible: boolean;
  /** Outsiders seeing a public project get onadata's reduced shape. */
  readonly full: boolean;
  allows(permission: ProjectPermission): boolean;
}

function projectStanding(project: { shared: boolean }, role: Role | undefined): ProjectStanding {
  const facts = { shared: project.shared, role };
  return { role, visible: canSeeProject(facts), full: seesFullProject(facts), allows: (permission) => projectAllows(facts, permission) };
}

export interface ProjectGrant extends ProjectStanding {
  readonly project: ProjectRow;
}

/**
 * The project `rawId` names if the caller holds `need` on it (`view_project`: sees it): 404 "Not
 * found." when missing, "No Project matches…" when hidden, 403 when seen but not allowed.
 */
export async function requireProject(ctx: Caller, rawId: string, need: ProjectPermission, options: GrantOptions = {}): Promise<ProjectGrant> {
  const project = await findLiveProject(ctx.db, parseObjectId(ctx, rawId, errors.projectIdInvalid));
  if (!project) throw errors.notFound();
  return grantProject(ctx, project, need, options);
}

/** requireProject's decision on a project found otherwise. */
export async function grantProject(ctx: Caller, project: ProjectRow, need: ProjectPermission, options: GrantOptions = {}): Promise<ProjectGrant> {
  const role = isAuthenticated(ctx.actor) ? await projectRoleOf(ctx.db, project.id, ctx.actor.user.id) : undefined;
  const standing = projectStanding(project, role);
  if (!standing.visible) throw options.hidden?.() ?? errors.noMatch('Project');
  if (need !== 'view_project' && !standing.allows(need)) throw (options.denied ?? errors.permissionDenied)();
  return { ...standing, project };
}

/** Some projects with the caller's standing on each (one role lookup for all; nothing refused). */
export async function withProjectStandings(ctx: Caller, projects: readonly ProjectRow[]): Promise<ProjectGrant[]> {
  const roles = isAuthenticated(ctx.actor) ? await projectRolesOf(ctx.db, projects.map((p) => p.id), ctx.actor.user.id) : new Map<number, Role>();
  return projects.map((project) => ({ ...projectStanding(project, roles.get(project.id)), project }));
}
