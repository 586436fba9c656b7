// SQL for forms, their roles, tags, versions and metadata.
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { DbOrTx } from '../../platform/db.ts';
import type { FormsTable } from '../../platform/schema.ts';
import type { Role } from '../../access/roles.ts';
import type { MemberRow } from '../projects/repository.ts';

type TimestampColumn = 'date_created' | 'date_modified' | 'last_updated_at' | 'deleted_at';

/**
 * A form without its (large) definition, which `findFormDefinition` loads. Timestamps come back as
 * onadata's ISO text (with real microseconds), formatted by the database: parsing thousands of
 * dates only to print them again is the costliest part of a long form list.
 */
export type FormRow = Omit<Selectable<FormsTable>, 'xml' | 'json' | 'itemsets_csv' | 'data_changes' | TimestampColumn> & {
  owner_username: string;
  created_by_username: string | null;
  date_created: string;
  date_modified: string;
  last_updated_at: string;
  last_submission_time: string | null;
  deleted_at: string | null;
  num_of_submissions: number;
  instances_with_geopoints: boolean;
};

/** A timestamp column as ISO 8601 UTC text with microseconds and Z. */
export function isoText(column: string) {
  return sql<string>`to_char(${sql.ref(column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

const SUMMARY_COLUMNS = [
  'f.id', 'f.project_id', 'f.owner_id', 'f.created_by', 'f.id_string', 'f.sms_id_string', 'f.title', 'f.description',
  'f.version', 'f.uuid', 'f.hash', 'f.shared', 'f.shared_data', 'f.downloadable', 'f.require_auth', 'f.public_key',
  'f.encrypted', 'f.allows_sms', 'f.has_hxl_support', 'f.instances_with_osm',
  'f.xls_blob', 'f.xls_filename', 'f.deleted_by',
] as const;
export type NewForm = Insertable<FormsTable>;
export type FormPatch = Updateable<FormsTable>;

/**
 * The live forms' query as built for each database handle: building it (its joins, the stats
 * subquery, thirty-odd columns) cost more than a form lookup's own statement, on every request
 * that loads a form. Query builders are immutable: each caller adds its own conditions to a copy.
 */
const LIVE_FORMS = new WeakMap<DbOrTx, ReturnType<typeof buildLiveForms>>();

function liveForms(db: DbOrTx): ReturnType<typeof buildLiveForms> {
  let query = LIVE_FORMS.get(db);
  if (query === undefined) {
    query = buildLiveForms(db);
    LIVE_FORMS.set(db, query);
  }
  return query;
}

function buildLiveForms(db: DbOrTx) {
  return db
    .selectFrom('forms as f')
    .innerJoin('users as o', 'o.id', 'f.owner_id')
    .leftJoin('users as c', 'c.id', 'f.created_by')
    // One aggregate per form over its 16 counter shards.
    .leftJoin(
      (eb) =>
        eb
          .selectFrom('form_stats')
          .select([
            'form_id',
            sql<number>`sum(submissions)::int`.as('submissions'),
            sql<number>`sum(geopoints)::int`.as('geopoints'),
            sql<Date | null>`max(last_submission_time)`.as('last_submission_time'),
          ])
          .groupBy('form_id')
          .as('st'),
      (join) => join.onRef('st.form_id', '=', 'f.id'),
    )
    .select(SUMMARY_COLUMNS)
    .select([
      isoText('f.date_created').as('date_created'),
      isoText('f.date_modified').as('date_modified'),
      isoText('f.last_updated_at').as('last_updated_at'),
      sql<string | null>`to_char(st.last_submission_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('last_submission_time'),
      sql<number>`coalesce(st.submissions, 0)`.as('num_of_submissions'),
      sql<boolean>`coalesce(st.geopoints > 0, false)`.as('instances_with_geopoints'),
      isoText('f.deleted_at').as('deleted_at'),
      'o.username as owner_username',
      'c.username as created_by_username',
    ])
    .where('f.deleted_at', 'is', null)
    .where('o.is_active', '=', true);
}

export async function findLiveForm(db: DbOrTx, id: number): Promise<FormRow | undefined> {
  return liveForms(db).where('f.id', '=', id).executeTakeFirst();
}

export async function findFormDefinition(db: DbOrTx, id: number): Promise<{ xml: string; json: Record<string, unknown>; itemsets_csv: string | null }> {
  return db.selectFrom('forms').select(['xml', 'json', 'itemsets_csv']).where('id', '=', id).executeTakeFirstOrThrow();
}

export interface FormListFilter {
  memberId?: number;
  sharedOnly?: boolean;
  /** Only forms whose records are public (public_data). */
  sharedDataOnly?: boolean;
  ownerId?: number;
  projectId?: number;
  tags?: readonly string[];
  instancesWithOsm?: boolean;
}

/** Ids of the live forms matching the filter, in id order. */
export async function listLiveFormIds(db: DbOrTx, filter: FormListFilter): Promise<number[]> {
  let query = db
    .selectFrom('forms as f')
    .innerJoin('users as o', 'o.id', 'f.owner_id')
    .select('f.id')
    .where('f.deleted_at', 'is', null)
    .where('o.is_active', '=', true);
  if (filter.memberId !== undefined) {
    const memberId = filter.memberId;
    query = query.where((eb) =>
      eb.exists(eb.selectFrom('form_roles as r').select('r.form_id').whereRef('r.form_id', '=', 'f.id').where('r.user_id', '=', memberId)),
    );
  }
  if (filter.sharedOnly) query = query.where('f.shared', '=', true);
  if (filter.sharedDataOnly) query = query.where('f.shared_data', '=', true);
  if (filter.ownerId !== undefined) query = query.where('f.owner_id', '=', filter.ownerId);
  if (filter.projectId !== undefined) query = query.where('f.project_id', '=', filter.projectId);
  if (filter.instancesWithOsm !== undefined) query = query.where('f.instances_with_osm', '=', filter.instancesWithOsm);
  if (filter.tags && filter.tags.length) {
    const tags = filter.tags.map((t) => t.toLowerCase());
    query = query.where((eb) =>
      eb.exists(eb.selectFrom('form_tags as t').select('t.form_id').whereRef('t.form_id', '=', 'f.id').where(sql<string>`lower(t.tag)`, 'in', tags)),
    );
  }
  return (await query.orderBy('f.id').execute()).map((r) => r.id);
}

export async function listLiveForms(db: DbOrTx, filter: FormListFilter): Promise<FormRow[]> {
  const ids = await listLiveFormIds(db, filter);
  return findLiveFormsByIds(db, ids);
}

export async function findLiveFormsByIds(db: DbOrTx, ids: readonly number[]): Promise<FormRow[]> {
  if (ids.length === 0) return [];
  return liveForms(db).where(sql<boolean>`f.id = ANY(${[...ids]}::int[])`).orderBy('f.id').execute();
}

/** All forms of a project, live or deleted, for role propagation. */
export async function listProjectFormIds(db: DbOrTx, projectId: number, includeDeleted: boolean): Promise<number[]> {
  let query = db.selectFrom('forms').select('id').where('project_id', '=', projectId);
  if (!includeDeleted) query = query.where('deleted_at', 'is', null);
  return (await query.execute()).map((r) => r.id);
}

export interface ProjectFormSummary {
  project_id: number;
  id: number;
  title: string;
  id_string: string;
  num_of_submissions: number;
  downloadable: boolean;
  encrypted: boolean;
  last_submission_time: Date | null;
  date_created: Date;
  last_updated_at: Date;
}

export async function listProjectFormSummaries(db: DbOrTx, projectIds: readonly number[]): Promise<ProjectFormSummary[]> {
  if (projectIds.length === 0) return [];
  return db
    .selectFrom('forms')
    .select(['project_id', 'id', 'title', 'id_string', 'downloadable', 'encrypted', 'date_created', 'last_updated_at'])
    .select([
      sql<number>`(SELECT coalesce(sum(s.submissions), 0)::int FROM form_stats s WHERE s.form_id = forms.id)`.as('num_of_submissions'),
      sql<Date | null>`(SELECT max(s.last_submission_time) FROM form_stats s WHERE s.form_id = forms.id)`.as('last_submission_time'),
    ])
    .where('project_id', 'in', projectIds)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
}

const OWNER_FORMS_LOCK_SPACE = 8021;

/**
 * Serialises publishes into one account until the transaction ends: each picks a free id_string
 * (`x`, `x_1`, …) after the previous one's is visible, instead of both taking the same and one
 * failing on the unique key.
 */
export async function lockOwnerForms(db: DbOrTx, ownerId: number): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${OWNER_FORMS_LOCK_SPACE}::integer, ${ownerId}::integer)`.execute(db);
}

export async function insertForm(db: DbOrTx, form: NewForm): Promise<number> {
  return (await db.insertInto('forms').values(form).returning('id').executeTakeFirstOrThrow()).id;
}

export async function updateForm(db: DbOrTx, id: number, patch: FormPatch): Promise<void> {
  await db.updateTable('forms').set(patch).where('id', '=', id).execute();
}

export async function updateProjectForms(db: DbOrTx, projectId: number, patch: FormPatch): Promise<void> {
  await db.updateTable('forms').set(patch).where('project_id', '=', projectId).execute();
}

export async function softDeleteForms(db: DbOrTx, where: { formId?: number; projectId?: number }, userId: number, now: Date): Promise<void> {
  const suffix = `-deleted-at-${Math.floor(now.getTime() / 1000)}`;
  let query = db
    .updateTable('forms')
    .set({
      deleted_at: now,
      deleted_by: userId,
      downloadable: false,
      date_modified: now,
      // The suffix frees the id_string for a new form, when it fits in 100 characters.
      id_string: sql<string>`CASE WHEN length(id_string) + ${suffix.length} <= 100 THEN id_string || ${suffix} ELSE id_string END`,
      sms_id_string: sql<string>`CASE WHEN length(sms_id_string) + ${suffix.length} <= 100 THEN sms_id_string || ${suffix} ELSE sms_id_string END`,
    })
    .where('deleted_at', 'is', null);
  if (where.formId !== undefined) query = query.where('id', '=', where.formId);
  if (where.projectId !== undefined) query = query.where('project_id', '=', where.projectId);
  await query.execute();
}

/** Live id_strings of an account that equal `idString` ignoring case, or start with it (for suffixes). */
export async function liveIdStringsLike(db: DbOrTx, ownerId: number, idString: string, exceptFormId?: number): Promise<string[]> {
  let query = db
    .selectFrom('forms')
    .select('id_string')
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null)
    .where(sql<string>`lower(id_string)`, 'like', `${idString.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  if (exceptFormId !== undefined) query = query.where('id', '!=', exceptFormId);
  return (await query.execute()).map((r) => r.id_string.toLowerCase());
}

// ---------------------------------------------------------------- roles

export async function listFormMembers(db: DbOrTx, formIds: readonly number[]): Promise<MemberRow[]> {
  if (formIds.length === 0) return [];
  const rows = await db
    .selectFrom('form_roles as r')
    .innerJoin('users as u', 'u.id', 'r.user_id')
    .select(['r.form_id as object_id', 'u.id as user_id', 'u.username', 'u.first_name', 'u.last_name', 'u.is_org', 'u.metadata', 'r.role'])
    .where(sql<boolean>`r.form_id = ANY(${[...formIds]}::int[])`)
    .where('u.is_active', '=', true)
    .orderBy('u.id')
    .execute();
  return rows.map((r) => ({ ...r, role: r.role as Role }));
}

/** The roles some users hold on one form. */
export async function formRolesOfUsers(db: DbOrTx, formId: number, userIds: readonly number[]): Promise<Map<number, Role>> {
  if (userIds.length === 0) return new Map();
  const rows = await db.selectFrom('form_roles').select(['user_id', 'role']).where('form_id', '=', formId).where('user_id', 'in', [...userIds]).execute();
  return new Map(rows.map((r) => [r.user_id, r.role as Role]));
}

/** Sets the role `userId` holds on the form, and the role granted (before xform_meta_perms narrowed it). */
export async function setFormRole(db: DbOrTx, formId: number, userId: number, role: Role, granted: Role = role): Promise<void> {
  await db
    .insertInto('form_roles')
    .values({ form_id: formId, user_id: userId, role, granted_role: granted })
    .onConflict((oc) => oc.columns(['form_id', 'user_id']).doUpdateSet({ role, granted_role: granted }))
    .execute();
}

export interface FormGrant {
  user_id: number;
  role: Role;
  granted: Role;
}

/** Every member of the form with the role they hold and the role they were granted. */
export async function listFormGrants(db: DbOrTx, formId: number): Promise<FormGrant[]> {
  const rows = await db.selectFrom('form_roles').select(['user_id', 'role', 'granted_role']).where('form_id', '=', formId).orderBy('user_id').execute();
  return rows.map((r) => ({ user_id: r.user_id, role: r.role as Role, granted: (r.granted_role ?? r.role) as Role }));
}

export async function removeFormRoles(db: DbOrTx, formIds: readonly number[], userId: number): Promise<void> {
  if (formIds.length === 0) return;
  await db.deleteFrom('form_roles').where('form_id', 'in', formIds).where('user_id', '=', userId).execute();
}

export async function clearFormRoles(db: DbOrTx, formId: number, keepUserIds: readonly number[]): Promise<void> {
  let query = db.deleteFrom('form_roles').where('form_id', '=', formId);
  if (keepUserIds.length) query = query.where('user_id', 'not in', keepUserIds);
  await query.execute();
}

// ---------------------------------------------------------------- tags

export async function listFormTags(db: DbOrTx, formIds: readonly number[]): Promise<Map<number, string[]>> {
  const map = new Map<number, string[]>();
  if (formIds.length === 0) return map;
  const rows = await db.selectFrom('form_tags').select(['form_id', 'tag']).where(sql<boolean>`form_id = ANY(${[...formIds]}::int[])`).orderBy('tag').execute();
  for (const row of rows) (map.get(row.form_id) ?? map.set(row.form_id, []).get(row.form_id))?.push(row.tag);
  return map;
}

/** Adds the tags the form lacks; tags are case-insensitive, so `HELLO` beside `hello` is not added. */
export async function addFormTags(db: DbOrTx, formId: number, tags: readonly string[]): Promise<void> {
  if (tags.length === 0) return;
  await sql`INSERT INTO form_tags (form_id, tag)
    SELECT ${formId}::int, t FROM unnest(${[...tags]}::text[]) AS t
    WHERE NOT EXISTS (SELECT 1 FROM form_tags f WHERE f.form_id = ${formId}::int AND lower(f.tag) = lower(t))
    ON CONFLICT DO NOTHING`.execute(db);
}

export async function removeFormTag(db: DbOrTx, formId: number, tag: string): Promise<boolean> {
  const result = await db.deleteFrom('form_tags').where('form_id', '=', formId).where(sql<string>`lower(tag)`, '=', tag.toLowerCase()).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

// ---------------------------------------------------------------- versions and metadata

export async function insertFormVersion(
  db: DbOrTx,
  version: { form_id: number; version: string; xml: string; json: string; created_by: number | null; now: Date; xls_blob: string | null; xls_filename: string | null },
): Promise<void> {
  await db
    .insertInto('form_versions')
    .values({
      form_id: version.form_id, version: version.version, xml: version.xml, json: version.json, created_by: version.created_by,
      date_created: version.now, date_modified: version.now, xls_blob: version.xls_blob, xls_filename: version.xls_filename,
    })
    .execute();
}

export async function listFormVersionNames(db: DbOrTx, formId: number): Promise<string[]> {
  return (await db.selectFrom('form_versions').select('version').where('form_id', '=', formId).execute()).map((r) => r.version);
}

export interface FormVersionRow {
  version: string;
  created_by_username: string | null;
  date_created: Date;
  date_modified: Date;
}

export async function listFormVersions(db: DbOrTx, formId: number): Promise<FormVersionRow[]> {
  return db
    .selectFrom('form_versions as v')
    .leftJoin('users as u', 'u.id', 'v.created_by')
    .select(['v.version', 'u.username as created_by_username', 'v.date_created', 'v.date_modified'])
    .where('v.form_id', '=', formId)
    .orderBy('v.date_created')
    .orderBy('v.id')
    .execute();
}

export async function findFormVersion(
  db: DbOrTx,
  formId: number,
  version: string,
): Promise<{ xml: string; json: Record<string, unknown>; xls_blob: string | null; xls_filename: string | null } | undefined> {
  return db.selectFrom('form_versions').select(['xml', 'json', 'xls_blob', 'xls_filename']).where('form_id', '=', formId).where('version', '=', version).executeTakeFirst();
}

export interface MetadataRow {
  id: number;
  form_id: number;
  data_type: string;
  data_value: string;
  extra_data: Record<string, unknown>;
  data_file: string | null;
  data_file_type: string | null;
  file_hash: string | null;
  date_created: Date;
}

export async function listFormMetadata(db: DbOrTx, formIds: readonly number[]): Promise<MetadataRow[]> {
  if (formIds.length === 0) return [];
  return db
    .selectFrom('form_metadata')
    .select(['id', 'form_id', 'data_type', 'data_value', 'extra_data', 'data_file', 'data_file_type', 'file_hash', 'date_created'])
    .where('form_id', 'in', formIds)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
}

export async function insertFormMetadata(db: DbOrTx, formId: number, dataType: string, dataValue: string, now: Date): Promise<void> {
  await db.insertInto('form_metadata').values({ form_id: formId, data_type: dataType, data_value: dataValue, extra_data: '{}', data_file: null, data_file_type: null, file_hash: null, date_created: now }).execute();
}

/** The `data_value` of one live `external_export` entry of the form ("<name>|<template url>"). */
export async function findReportTemplateEntry(db: DbOrTx, formId: number, metadataId: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('form_metadata')
    .select('data_value')
    .where('id', '=', metadataId)
    .where('form_id', '=', formId)
    .where('data_type', '=', 'external_export')
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row?.data_value;
}

export async function findMetaPerms(db: DbOrTx, formIds: readonly number[]): Promise<Map<number, string>> {
  if (formIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('form_metadata')
    .select(['form_id', 'data_value'])
    .where('form_id', 'in', formIds)
    .where('data_type', '=', 'xform_meta_perms')
    .where('deleted_at', 'is', null)
    .execute();
  return new Map(rows.map((r) => [r.form_id, r.data_value]));
}

/** Which of these forms carry an itemsets CSV (their media for OpenRosa clients). */
export async function formsWithItemsets(db: DbOrTx, formIds: readonly number[]): Promise<number[]> {
  if (formIds.length === 0) return [];
  const rows = await db.selectFrom('forms').select('id').where(sql<boolean>`id = ANY(${[...formIds]}::int[])`).where('itemsets_csv', 'is not', null).execute();
  return rows.map((r) => r.id);
}

export async function findLiveFormByUuid(db: DbOrTx, uuid: string): Promise<FormRow | undefined> {
  return liveForms(db).where('f.uuid', '=', uuid).executeTakeFirst();
}

export async function findLiveFormByIdString(db: DbOrTx, ownerId: number, idString: string): Promise<FormRow | undefined> {
  return liveForms(db).where('f.owner_id', '=', ownerId).where(sql<string>`lower(f.id_string)`, '=', idString.toLowerCase()).executeTakeFirst();
}
