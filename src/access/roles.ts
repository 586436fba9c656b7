// Roles and the object permissions each grants on projects and forms (onadata's table, §5.1).
// A user holds at most one role per object; granting a role replaces the previous one.

export const ROLES = [
  'readonly-no-download',
  'readonly',
  'dataentry-only',
  'dataentry-minor',
  'dataentry',
  'editor-no-download',
  'editor-minor',
  'editor',
  'manager',
  'owner',
] as const;

export type Role = (typeof ROLES)[number];

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export type ProjectPermission =
  | 'add_project'
  | 'add_project_xform'
  | 'report_project_xform'
  | 'change_project'
  | 'delete_project'
  | 'can_export_project_data'
  | 'transfer_project'
  | 'view_project'
  | 'view_project_all'
  | 'view_project_data';

export type FormPermission =
  | 'report_xform'
  | 'add_xform'
  | 'change_xform'
  | 'delete_submission'
  | 'delete_xform'
  | 'can_export_xform_data'
  | 'view_xform'
  | 'view_xform_all'
  | 'view_xform_data'
  | 'move_xform'
  | 'transfer_xform';

const P = {
  AP: 'add_project', APX: 'add_project_xform', RPX: 'report_project_xform', CP: 'change_project',
  DP: 'delete_project', EXP: 'can_export_project_data', TP: 'transfer_project', VP: 'view_project',
  VPA: 'view_project_all', VPD: 'view_project_data',
} as const satisfies Record<string, ProjectPermission>;

const F = {
  RX: 'report_xform', AX: 'add_xform', CX: 'change_xform', DS: 'delete_submission', DX: 'delete_xform',
  EXX: 'can_export_xform_data', VX: 'view_xform', VXA: 'view_xform_all', VXD: 'view_xform_data',
  MX: 'move_xform', TX: 'transfer_xform',
} as const satisfies Record<string, FormPermission>;

export const PROJECT_PERMISSIONS: Readonly<Record<Role, ReadonlySet<ProjectPermission>>> = {
  'readonly-no-download': new Set([P.VP, P.VPA]),
  readonly: new Set([P.EXP, P.VP, P.VPA]),
  'dataentry-only': new Set([P.RPX, P.EXP, P.VP, P.VPA, P.VPD]),
  'dataentry-minor': new Set([P.RPX, P.EXP, P.VP, P.VPD]),
  dataentry: new Set([P.RPX, P.EXP, P.VP, P.VPA, P.VPD]),
  'editor-no-download': new Set([P.RPX, P.CP, P.EXP, P.VP, P.VPD]),
  'editor-minor': new Set([P.RPX, P.CP, P.EXP, P.VP, P.VPD]),
  editor: new Set([P.RPX, P.CP, P.EXP, P.VP, P.VPA, P.VPD]),
  manager: new Set([P.AP, P.APX, P.RPX, P.CP, P.EXP, P.VP, P.VPA, P.VPD]),
  owner: new Set([P.AP, P.APX, P.RPX, P.CP, P.DP, P.EXP, P.TP, P.VP, P.VPA, P.VPD]),
};

export const FORM_PERMISSIONS: Readonly<Record<Role, ReadonlySet<FormPermission>>> = {
  'readonly-no-download': new Set([F.VX, F.VXA, F.VXD]),
  readonly: new Set([F.EXX, F.VX, F.VXA, F.VXD]),
  'dataentry-only': new Set([F.VX, F.RX]),
  'dataentry-minor': new Set([F.RX, F.EXX, F.VX, F.VXD]),
  dataentry: new Set([F.RX, F.EXX, F.VX, F.VXA, F.VXD]),
  'editor-no-download': new Set([F.RX, F.CX, F.DS, F.VX, F.VXD]),
  'editor-minor': new Set([F.RX, F.CX, F.DS, F.EXX, F.VX, F.VXD]),
  editor: new Set([F.RX, F.CX, F.DS, F.EXX, F.VX, F.VXA, F.VXD]),
  manager: new Set([F.RX, F.AX, F.CX, F.DS, F.DX, F.EXX, F.VX, F.VXA, F.VXD]),
  owner: new Set([F.RX, F.AX, F.CX, F.DS, F.DX, F.EXX, F.VX, F.VXA, F.VXD, F.MX, F.TX]),
};

export function projectRoleAllows(role: Role | undefined, permission: ProjectPermission): boolean {
  return role !== undefined && PROJECT_PERMISSIONS[role].has(permission);
}

export function formRoleAllows(role: Role | undefined, permission: FormPermission): boolean {
  return role !== undefined && FORM_PERMISSIONS[role].has(permission);
}

/**
 * The role onadata reports for a project member: the highest role whose project permissions
 * the member holds. Roles with identical project permissions collapse, so dataentry-only is
 * shown as dataentry and editor-no-download as editor-minor.
 */
export function displayedProjectRole(role: Role): Role {
  const held = PROJECT_PERMISSIONS[role];
  for (let i = ROLES.length - 1; i >= 0; i--) {
    const candidate = ROLES[i];
    if (candidate && [...PROJECT_PERMISSIONS[candidate]].every((p) => held.has(p))) return candidate;
  }
  return role;
}

/** Default `xform_meta_perms`: what editor-, dataentry- and readonly-family roles become on a form. */
export const DEFAULT_META_PERMS = 'editor|dataentry|readonly';

function grantsNoMoreThan(narrower: Role, wider: Role): boolean {
  return [...FORM_PERMISSIONS[narrower]].every((p) => FORM_PERMISSIONS[wider].has(p));
}

/** The slot of `xform_meta_perms` that speaks for `role`'s family, if any. */
function metaPermsSlot(role: Role, metaPerms: string): Role | undefined {
  const [editorSlot, dataentrySlot, readonlySlot] = metaPerms.split('|');
  const slot = role.startsWith('editor') ? editorSlot : role.startsWith('dataentry') ? dataentrySlot : role.startsWith('readonly') ? readonlySlot : undefined;
  return slot !== undefined && isRole(slot) ? slot : undefined;
}

/**
 * The role a grant of `asked` (a form share, or a project role reaching the form) takes on a form
 * with these meta permissions. The slot for the asked role's family may narrow it, never widen it:
 * the result grants no form permission the asked role does not. Where slot and asked role are of
 * different families, it is the highest role granting nothing beyond both (the asked role when no
 * role fits). Managers and owners are applied as asked, as in onadata.
 *
 * onadata instead lands every family member on its slot's role, so under the default
 * `editor|dataentry|readonly` a share of dataentry-only or dataentry-minor becomes dataentry and
 * one of editor-minor or editor-no-download becomes editor: reading and exporting every record.
 * A client asking for a restricted role expects it, so Gather keeps it.
 */
export function roleOnForm(asked: Role, metaPerms: string | undefined): Role {
  const slot = metaPerms === undefined ? undefined : metaPermsSlot(asked, metaPerms);
  if (slot === undefined || grantsNoMoreThan(asked, slot)) return asked;
  if (grantsNoMoreThan(slot, asked)) return slot;
  for (let i = ROLES.length - 1; i >= 0; i--) {
    const candidate = ROLES[i];
    if (candidate && grantsNoMoreThan(candidate, asked) && grantsNoMoreThan(candidate, slot)) return candidate;
  }
  return asked;
}

/** A well-formed `xform_meta_perms` value: three roles, for the editor, data-entry and read-only slots. */
export function isMetaPerms(value: string): boolean {
  const slots = value.split('|');
  return slots.length === 3 && slots.every((slot) => isRole(slot));
}

export function higherRole(a: Role, b: Role): Role {
  return ROLES.indexOf(a) >= ROLES.indexOf(b) ? a : b;
}
