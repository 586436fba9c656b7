// The one place where "may this caller do this?" is decided. Routes declare a RouteAccess rule
// (checked before the handler runs); services load forms and projects through ./load.ts
// (requireForm, requireProject), which asks the object-level questions below.
import { errors } from '../errors.ts';
import type { UserRow } from '../modules/accounts/repository.ts';
import { isAuthenticated, type Principal } from './principal.ts';
import { formRoleAllows, isRole, projectRoleAllows, ROLES, type FormPermission, type ProjectPermission, type Role } from './roles.ts';

export type { Principal } from './principal.ts';
export { anonymous, isAuthenticated } from './principal.ts';

/** Who may call a route at all. `anyone` includes anonymous callers. */
export type RouteAccess = 'anyone' | 'authenticated';

export const ROUTE_ACCESS_VALUES: readonly RouteAccess[] = ['anyone', 'authenticated'];

/** Throws 401 when the route needs an authenticated caller and there is none. */
export function checkRouteAccess(rule: RouteAccess, actor: Principal, challenge: string): void {
  if (rule === 'authenticated' && !isAuthenticated(actor)) throw errors.notAuthenticated(challenge);
}

/** The acting user, for services behind `authenticated` routes. */
export function requireUser(actor: Principal): UserRow {
  if (!isAuthenticated(actor)) throw errors.notAuthenticated('Basic realm="Gather"');
  return actor.user;
}

/** A profile's own user, and whoever created it through the API, may change it. */
export function canChangeProfile(actor: Principal, profile: UserRow): boolean {
  return isAuthenticated(actor) && (actor.user.id === profile.id || profile.created_by === actor.user.id);
}

/** onadata's `view_profile`: the same holders as change; only they see the e-mail address. */
export function canSeeProfileEmail(actor: Principal, profile: UserRow): boolean {
  return canChangeProfile(actor, profile);
}

/** Profile metadata is shown only to the profile's own user. */
export function canSeeProfileMetadata(actor: Principal, profile: UserRow): boolean {
  return isAuthenticated(actor) && actor.user.id === profile.id;
}

/** Only the account itself may change its password. */
export function canChangePassword(actor: Principal, profile: UserRow): boolean {
  return isAuthenticated(actor) && actor.user.id === profile.id;
}

// ---------------------------------------------------------------- projects and forms

export * from './roles.ts';

/** What the access decisions need to know about a project and the caller's role on it. */
export interface ProjectAccessFacts {
  shared: boolean;
  role: Role | undefined;
}

export interface FormAccessFacts {
  shared: boolean;
  role: Role | undefined;
}

/** A project is visible to its role holders, and to everyone when public. */
export function canSeeProject(project: ProjectAccessFacts): boolean {
  return project.role !== undefined || project.shared;
}

/** Public projects seen by outsiders get onadata's reduced shape. */
export function seesFullProject(project: ProjectAccessFacts): boolean {
  return projectRoleAllows(project.role, 'view_project');
}

export function projectAllows(project: ProjectAccessFacts, permission: ProjectPermission): boolean {
  return projectRoleAllows(project.role, permission);
}

export function canSeeForm(form: FormAccessFacts): boolean {
  return form.role !== undefined || form.shared;
}

export function formAllows(form: FormAccessFacts, permission: FormPermission): boolean {
  return formRoleAllows(form.role, permission);
}

/**
 * Whether the caller may create projects or publish forms in `accountId`'s account
 * (onadata's can_add_project / can_add_xform on the account's profile). For personal accounts
 * that is the account itself; for an organisation, its owners and managers (`orgRole`, the caller's
 * role in the organisation, from its membership).
 */
export function canAddToAccount(actor: Principal, accountId: number, orgRole?: string): boolean {
  return isAuthenticated(actor) && (actor.user.id === accountId || orgRole === 'owner' || orgRole === 'manager');
}

/** The roles a person may hold in an organisation: `member` (no rights of its own) or a role. */
export function isOrgRole(value: string): boolean {
  return value === 'member' || isRole(value);
}

/** Who may see an organisation and its members: anyone in it. */
export function canSeeOrg(orgRole: string | undefined): boolean {
  return orgRole !== undefined;
}

/** Who may change an organisation's profile and its members: its owners. */
export function canManageOrg(orgRole: string | undefined): boolean {
  return orgRole === 'owner';
}

// ---------------------------------------------------------------- records and their reviews

/** Which of a form's records a rule lets the caller reach: every one, those they submitted, or none. */
export type RecordScope = 'all' | 'own' | 'none';

/**
 * Which of a form's records the caller reads (the data API's rule): all of them with public data
 * (even of a private form: onadata's data viewset falls back to shared_data) or a role holding
 * view_xform_all, their own with view_xform_data alone, else none.
 */
export function recordReadScope(form: FormAccessFacts & { sharedData: boolean }, authenticated: boolean): RecordScope {
  if (form.sharedData) return 'all';
  return roleRecordScope(form, authenticated);
}

/**
 * Which records the caller's role reaches, public data aside: all with view_xform_all, their own
 * with view_xform_data alone (editor-minor, editor-no-download, dataentry-minor), else none.
 */
function roleRecordScope(form: FormAccessFacts, authenticated: boolean): RecordScope {
  if (formAllows(form, 'view_xform_all')) return 'all';
  if (authenticated && formAllows(form, 'view_xform_data')) return 'own';
  return 'none';
}

/**
 * Which records the caller may change (delete, tag, edit) where their role lets them change records
 * at all (delete_submission, change_xform): every record with view_xform_all, else only their own.
 * A role reading only its own records changes only those; public data, which lets anyone read every
 * record, lets no one change them.
 */
export function recordWriteScope(form: FormAccessFacts): 'all' | 'own' {
  return roleRecordScope(form, true) === 'all' ? 'all' : 'own';
}

/** Whether a record submitted by `submittedBy` is within `scope` for the user `userId` (undefined: anonymous). */
export function inRecordScope(scope: RecordScope, userId: number | undefined, submittedBy: number | null): boolean {
  return scope === 'all' || (scope === 'own' && userId !== undefined && submittedBy === userId);
}

/**
 * Whether the authenticated user `userId` may replace (edit by deprecatedID) a record submitted by
 * `submittedBy`. onadata: where the owner requires auth, with change_xform; elsewhere anyone may.
 * Gather adds that a role which does not read every record replaces only the caller's own records,
 * require_auth or not: an open account lets anyone add records, but a role that keeps its holder
 * to their own records is not widened by it. A caller without a role on the form is treated as
 * onadata treats anyone.
 */
export function mayReplaceRecord(form: FormAccessFacts, ownerRequireAuth: boolean, userId: number, submittedBy: number | null): boolean {
  if (ownerRequireAuth && !formAllows(form, 'change_xform')) return false;
  return form.role === undefined || inRecordScope(recordWriteScope(form), userId, submittedBy);
}

/** The form roles whose holders read every record, and those who read only their own. */
export function recordReadingRoles(): { all: Role[]; own: Role[] } {
  const all = ROLES.filter((role) => formRoleAllows(role, 'view_xform_all'));
  const own = ROLES.filter((role) => !formRoleAllows(role, 'view_xform_all') && formRoleAllows(role, 'view_xform_data'));
  return { all, own };
}

/**
 * Who may review a form's submissions (create, change and delete reviews): its owners and
 * managers, as onadata's SubmissionReviewPermissions has it (editors may not).
 */
export function canReviewSubmissions(form: FormAccessFacts): boolean {
  return form.role === 'owner' || form.role === 'manager';
}
