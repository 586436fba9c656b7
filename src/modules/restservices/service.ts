// REST services (onadata's /api/v1/restservices): a form's services receive each of its records by
// POST (src/modules/restservices/delivery.ts). Read by those holding a role on the form; added,
// changed and removed by its owners and managers (add_xform, as metadata entries are).
import type { RequestContext } from '../../context.ts';
import { errors, type FieldErrors } from '../../errors.ts';
import { isAuthenticated, requireUser, type FormPermission } from '../../access/index.ts';
import { remoteUrlProblem } from '../../platform/remote-fetch.ts';
import { requireForm, type FormGrant } from '../../access/load.ts';
import * as forms from '../forms/repository.ts';
import * as repo from './repository.ts';
import { restServiceToApi } from './to-api.ts';
import { fieldErrorsOf } from '../shared/field-errors.ts';

/** onadata's SERVICE_CHOICES. */
export const KNOWN_NAMES: readonly string[] = ['f2dhis2', 'generic_json', 'generic_xml', 'bamboo', 'textit', 'google_sheets'];
/** What this server can deliver. */
export const SUPPORTED_NAMES: readonly string[] = ['generic_json', 'generic_xml'];

function parseId(raw: string): number {
  if (!/^\d{1,9}$/.test(raw)) throw errors.notFound();
  return Number(raw);
}

function requireFormPermission(visible: FormGrant, permission: FormPermission): void {
  if (!visible.allows(permission)) throw errors.permissionDenied();
}

/** The form of a service the caller may read it through (a role on the form); 404 otherwise. */
async function loadReadable(ctx: RequestContext, rawId: string): Promise<{ row: repo.RestServiceRow; visible: FormGrant }> {
  const row = await repo.findService(ctx.db, parseId(rawId));
  if (!row) throw errors.noMatch('RestService');
  let visible: FormGrant;
  try {
    visible = await requireForm(ctx, String(row.form_id), 'view_xform');
  } catch {
    throw errors.noMatch('RestService');
  }
  // A public form is visible to everyone; its services' addresses are not.
  if (!visible.allows('view_xform')) throw errors.noMatch('RestService');
  return { row, visible };
}

async function represent(ctx: RequestContext, rows: readonly repo.RestServiceRow[]): Promise<Record<string, unknown>[]> {
  const pending = await repo.countPending(ctx.db, rows.map((r) => r.id));
  return rows.map((row) => restServiceToApi(row, pending.get(row.id) ?? 0));
}

/** GET /api/v1/restservices[?xform=<pk>]: one form's services, or those of every form the caller holds a role on. */
export async function listRestServices(ctx: RequestContext, rawFormId: string | undefined): Promise<Record<string, unknown>[]> {
  let formIds: number[];
  if (rawFormId !== undefined && rawFormId !== '') {
    const visible = await requireForm(ctx, rawFormId, 'view_xform');
    formIds = visible.allows('view_xform') ? [visible.form.id] : [];
  } else if (isAuthenticated(ctx.actor)) formIds = await forms.listLiveFormIds(ctx.db, { memberId: ctx.actor.user.id });
  else formIds = [];
  return represent(ctx, await repo.listServicesOfForms(ctx.db, formIds));
}

export async function getRestService(ctx: RequestContext, rawId: string): Promise<Record<string, unknown>> {
  const { row } = await loadReadable(ctx, rawId);
  return (await represent(ctx, [row]))[0] ?? {};
}

/** A service's fields as a request gave them (restservices/inputs.ts reads them). */
export interface RestServiceInput {
  /** The form's id as given in `xform`. */
  formRef?: string;
  name?: string;
  serviceUrl?: string;
  /** Absent: unchanged; null: none. */
  secret?: string | null;
  sendUpdates?: boolean;
  /** What was wrong with the fields as read; the service adds the address rule's. */
  fieldErrors: FieldErrors;
}

/** The input's fields once the address is checked too; one 400 for every field otherwise. */
function checkFields(ctx: RequestContext, input: RestServiceInput): RestServiceInput {
  const problems = fieldErrorsOf(input);
  const problem = input.serviceUrl === undefined || problems['service_url'] ? undefined : remoteUrlProblem(input.serviceUrl, ctx.config.allowPrivateUrls);
  if (problem) problems['service_url'] = [problem];
  if (Object.keys(problems).length > 0) throw errors.invalidFields(problems);
  return input;
}

/** The form named by `xform`, which the caller must manage; a 400 when it does not exist for them. */
async function loadManagedForm(ctx: RequestContext, formRef: string): Promise<FormGrant> {
  let visible: FormGrant;
  try {
    visible = await requireForm(ctx, formRef, 'view_xform');
  } catch {
    throw errors.xformDoesNotExist(formRef);
  }
  requireFormPermission(visible, 'add_xform');
  return visible;
}

/** POST /api/v1/restservices: {xform, name, service_url[, secret, send_updates]}. */
export async function createRestService(ctx: RequestContext, input: RestServiceInput): Promise<Record<string, unknown>> {
  const actor = requireUser(ctx.actor);
  const fields = checkFields(ctx, input);
  if (fields.formRef === undefined || fields.name === undefined || fields.serviceUrl === undefined) throw new Error('validated service lacks a field');
  const visible = await loadManagedForm(ctx, fields.formRef);
  const row = await repo.insertService(ctx.db, {
    formId: visible.form.id,
    name: fields.name,
    serviceUrl: fields.serviceUrl,
    secretSealed: fields.secret ? ctx.sealer.seal(fields.secret) : null,
    sendUpdates: fields.sendUpdates ?? false,
  }, actor.id, ctx.clock.now());
  if (!row) throw errors.restServiceNotUnique();
  return restServiceToApi(row, 0);
}

/** PUT (all fields) or PATCH (some) /api/v1/restservices/{id}; the secret is kept unless given. */
export async function updateRestService(ctx: RequestContext, rawId: string, input: RestServiceInput): Promise<Record<string, unknown>> {
  requireUser(ctx.actor);
  const { row, visible } = await loadReadable(ctx, rawId);
  requireFormPermission(visible, 'add_xform');
  const fields = checkFields(ctx, input);
  let formId = row.form_id;
  if (fields.formRef !== undefined && fields.formRef !== String(row.form_id)) formId = (await loadManagedForm(ctx, fields.formRef)).form.id;
  const secretSealed = fields.secret === undefined ? row.secret_sealed : fields.secret === null ? null : ctx.sealer.seal(fields.secret);
  const updated = await repo.updateService(ctx.db, row.id, {
    formId,
    name: fields.name ?? row.name,
    serviceUrl: fields.serviceUrl ?? row.service_url,
    secretSealed,
    sendUpdates: fields.sendUpdates ?? row.send_updates,
  }, ctx.clock.now());
  if (!updated) throw errors.restServiceNotUnique();
  return getRestService(ctx, String(row.id));
}

/** DELETE /api/v1/restservices/{id}: the service and its undelivered records' queue entries. */
export async function deleteRestService(ctx: RequestContext, rawId: string): Promise<void> {
  requireUser(ctx.actor);
  const { row, visible } = await loadReadable(ctx, rawId);
  requireFormPermission(visible, 'add_xform');
  await repo.deleteService(ctx.db, row.id);
}
