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

/**
 * onadata's form "meta permissions": a project or form share of an editor-, dataentry- or
 * readonly-family role lands on the form as the role named in the form's meta-perms slot.
 */
export function applyMetaPerms(role: Role, metaPerms: string = DEFAULT_META_PERMS): Role {
  if (role === 'readonly-no-download' || role === 'manager' || role === 'owner') return role;
  const [editorSlot, dataentrySlot, readonlySlot] = metaPerms.split('|');
  const pick = (slot: string | undefined, fallback: Role): Role => (slot && isRole(slot) ? slot : fallback);
  if (role.startsWith('editor')) return pick(editorSlot, 'editor');
  if (role.startsWith('dataentry')) return pick(dataentrySlot, 'dataentry');
  return pick(readonlySlot, 'readonly');
}

/** A well-formed `xform_meta_perms` value: three roles, for the editor, data-entry and read-only slots. */
export function isMetaPerms(value: string): boolean {
  const slots = value.split('|');
  return slots.length === 3 && slots.every((slot) => isRole(slot));
}

/**
 * A form member's role after the form's meta permissions change, as onadata re-maps them: each
 * editor- and data-entry-family role becomes its slot's role; a read-only-family role becomes the
 * read-only slot's unless the member holds a stricter read-only role on the project itself.
 */
export function remapByMetaPerms(role: Role, metaPerms: string, projectRole: Role | undefined): Role {
  const [editorSlot, dataentrySlot, readonlySlot] = metaPerms.split('|');
  const slot = (value: string | undefined): Role => (value && isRole(value) ? value : role);
  if (role.startsWith('editor')) return slot(editorSlot);
  if (role.startsWith('dataentry')) return slot(dataentrySlot);
  if (role.startsWith('readonly') && (projectRole === undefined || projectRole === 'readonly')) return slot(readonlySlot);
  return role;
}

export function higherRole(a: Role, b: Role): Role {
  return ROLES.indexOf(a) >= ROLES.indexOf(b) ? a : b;
}
