// How a granted role lands on a form: a form share, or a project role reaching the project's forms
// (shared, published later, moved in). The form's xform_meta_perms may narrow it, never widen it;
// the role granted is kept beside the one held, so new meta permissions are applied to it afresh.
import { roleOnForm, type Role } from '../../access/index.ts';
import type { DbOrTx } from '../../platform/db.ts';
import * as repo from './repository.ts';

/** Gives `userId` on the form the role `granted` comes to under `metaPerms` (the form's, when it has them). */
export async function grantFormRole(db: DbOrTx, formId: number, userId: number, granted: Role, metaPerms: string | undefined): Promise<void> {
  await repo.setFormRole(db, formId, userId, roleOnForm(granted, metaPerms), granted);
}

/** After the form's meta permissions change: each member holds what their granted role comes to now. */
export async function regrantFormRoles(db: DbOrTx, formId: number, metaPerms: string): Promise<void> {
  for (const member of await repo.listFormGrants(db, formId)) {
    const role = roleOnForm(member.granted, metaPerms);
    if (role !== member.role) await repo.setFormRole(db, formId, member.user_id, role, member.granted);
  }
}
