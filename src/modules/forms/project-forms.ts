// /projects/{pk}/forms: list a project's forms, publish a new one into it, or move one in.
import type { RequestContext } from '../../context.ts';
import { errors } from '../../errors.ts';
import { requireUser } from '../../access/index.ts';
import { grantForm, requireProject } from '../../access/load.ts';
import type { ParsedBody } from '../../lib/uploaded-body.ts';
import { findActiveUserById } from '../accounts/repository.ts';
import { listProjectMembers } from '../projects/repository.ts';
import * as repo from './repository.ts';
import { grantFormRole } from './grants.ts';
import { publishNewForm } from './publish.ts';
import { formDetail, listProjectForms, representForms, sourceFromRequest } from './service.ts';
import { inTransaction } from '../../platform/db.ts';

export async function formsOfProject(ctx: RequestContext, rawProjectId: string): Promise<Record<string, unknown>[]> {
  const { project, role } = await requireProject(ctx, rawProjectId, 'view_project');
  if (role !== undefined) return listProjectForms(ctx, project.id);
  // Outsiders of a public project see its public forms only: a form made private is a 404 on
  // /forms/{pk}, and its full representation (users, metadata) must not leak through here.
  return representForms(ctx, await repo.listLiveForms(ctx.db, { projectId: project.id, sharedOnly: true }), 'full');
}

export async function addFormToProject(ctx: RequestContext, rawProjectId: string, body: ParsedBody): Promise<Record<string, unknown>> {
  const actor = requireUser(ctx.actor);
  const { project } = await requireProject(ctx, rawProjectId, 'add_project');

  const formField = body.fields['formid'];
  if (formField !== undefined && formField !== '') {
    // Only ids PostgreSQL's integer can hold reach the query; anything else is no form (404).
    const formId = /^\d{1,10}$/.test(String(formField)) ? Number(formField) : NaN;
    const form = formId <= 2_147_483_647 ? await repo.findLiveForm(ctx.db, formId) : undefined;
    // A form the caller cannot see is not found, rather than named in a refusal.
    if (!form) throw errors.notFound();
    const { role } = await grantForm(ctx, form, 'view_xform', { hidden: () => errors.notFound() });
    if (role !== 'manager' && role !== 'owner') {
      throw errors.noManagerRole(actor.username, form.id_string);
    }
    if (project.owner_id !== form.owner_id) {
      const clash = await repo.liveIdStringsLike(ctx.db, project.owner_id, form.id_string, form.id);
      if (clash.includes(form.id_string.toLowerCase())) throw errors.idStringExistsInAccount();
    }
    const now = ctx.clock.now();
    await inTransaction(ctx.db, async (trx) => {
      // A private form takes the project's public flag (onadata's set_project_perms_to_xform).
      const sync = !form.shared && !form.shared_data && project.shared ? { shared: true, shared_data: true } : {};
      await repo.updateForm(trx, form.id, { project_id: project.id, owner_id: project.owner_id, date_modified: now, ...sync });
      // Roles the form had through its old project go; the new project's roles replace them.
      const keep = [project.owner_id, actor.id, ...(project.created_by !== null ? [project.created_by] : [])];
      await repo.clearFormRoles(trx, form.id, keep);
      await repo.setFormRole(trx, form.id, project.owner_id, 'owner');
      await repo.setFormRole(trx, form.id, actor.id, 'owner');
      const metaPerms = (await repo.findMetaPerms(trx, [form.id])).get(form.id);
      for (const member of await listProjectMembers(trx, [project.id])) {
        if (member.user_id === actor.id) continue;
        await grantFormRole(trx, form.id, member.user_id, member.role, metaPerms);
      }
    });
    return formDetail(ctx, form.id);
  }

  const source = await sourceFromRequest(ctx, body);
  if (!source) throw errors.xlsFormMissing();
  const owner = await findActiveUserById(ctx.db, project.owner_id);
  if (!owner) throw errors.notFound();
  const { formId, idStringChanged } = await publishNewForm(ctx, { source, owner, projectId: project.id, createdBy: actor });
  return { ...(await formDetail(ctx, formId)), has_id_string_changed: idStringChanged };
}
