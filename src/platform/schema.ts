// Table types for Kysely. One interface per table in migrations/, snake_case as in SQL.
import type { ColumnType, Generated, GeneratedAlways } from 'kysely';

/** A timestamp with a database default: optional on insert. */
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json = ColumnType<Record<string, unknown>, string | undefined, string>;

export interface UsersTable {
  id: Generated<number>;
  username: string;
  email: Generated<string>;
  first_name: Generated<string>;
  last_name: Generated<string>;
  password_hash: Generated<string>;
  is_active: Generated<boolean>;
  is_org: Generated<boolean>;
  city: Generated<string>;
  country: Generated<string>;
  organization: Generated<string>;
  home_page: Generated<string>;
  twitter: Generated<string>;
  require_auth: Generated<boolean>;
  metadata: Json;
  created_by: number | null;
  date_joined: DefaultedTimestamp;
  last_login: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** Sealed JSON `{realm, ha1: {login: HA1}}` for Digest (migrations/0006_digest.sql). */
  digest_ha1_sealed: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface OrganizationsTable {
  user_id: number;
  creator_id: number | null;
  description: Generated<string>;
  created_at: DefaultedTimestamp;
}

export interface OrganizationMembersTable {
  org_id: number;
  user_id: number;
  /** `member`, or a role of src/access/roles.ts (owner, manager, editor, dataentry, readonly…). */
  role: string;
  added_at: DefaultedTimestamp;
}

export interface PasswordHistoryTable {
  id: Generated<number>;
  user_id: number;
  password_hash: string;
  created_at: DefaultedTimestamp;
}

export interface TokenTable {
  user_id: number;
  key_hash: Uint8Array;
  key_sealed: string;
  created_at: DefaultedTimestamp;
}

export interface BrowserSessionsTable {
  key_hash: Uint8Array;
  user_id: number;
  created_at: Date;
  expires_at: Date;
}

export interface LoginFailuresTable {
  key: string;
  failures: number;
  first_failed_at: DefaultedTimestamp;
  locked_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface SchemaMigrationsTable {
  version: string;
  applied_at: DefaultedTimestamp;
}

type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface ProjectsTable {
  id: Generated<number>;
  name: string;
  owner_id: number;
  created_by: number | null;
  metadata: Json;
  shared: Generated<boolean>;
  date_created: DefaultedTimestamp;
  date_modified: DefaultedTimestamp;
  deleted_at: NullableTimestamp;
  deleted_by: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface RoleTable {
  user_id: number;
  role: string;
}
export interface ProjectRolesTable extends RoleTable {
  project_id: number;
}
export interface FormRolesTable extends RoleTable {
  form_id: number;
  /** The role granted before xform_meta_perms narrowed it (null: as `role`). */
  granted_role: string | null;
}
export interface ProjectTagsTable {
  project_id: number;
  tag: string;
}
export interface FormTagsTable {
  form_id: number;
  tag: string;
}
export interface ProjectStarsTable {
  project_id: number;
  user_id: number;
}

export interface FormsTable {
  id: Generated<number>;
  project_id: number;
  owner_id: number;
  created_by: number | null;
  id_string: string;
  sms_id_string: Generated<string>;
  title: string;
  description: Generated<string>;
  version: Generated<string>;
  uuid: string;
  xml: string;
  json: Json;
  hash: string;
  /** Bumped by trigger on every edit or deletion of the form's records (migration 0010). */
  data_changes: Generated<number>;
  shared: Generated<boolean>;
  shared_data: Generated<boolean>;
  downloadable: Generated<boolean>;
  require_auth: Generated<boolean>;
  public_key: Generated<string>;
  encrypted: Generated<boolean>;
  allows_sms: Generated<boolean>;
  has_hxl_support: Generated<boolean>;
  instances_with_osm: Generated<boolean>;
  xls_blob: string | null;
  xls_filename: string | null;
  itemsets_csv: string | null;
  date_created: DefaultedTimestamp;
  date_modified: DefaultedTimestamp;
  last_updated_at: DefaultedTimestamp;
  deleted_at: NullableTimestamp;
  deleted_by: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface FormVersionsTable {
  id: Generated<number>;
  form_id: number;
  version: string;
  xml: string;
  json: Json;
  created_by: number | null;
  date_created: DefaultedTimestamp;
  date_modified: DefaultedTimestamp;
  /** The XLSForm this version was converted from (blobs.sha256; migration 0025). */
  xls_blob: ColumnType<string | null, string | null | undefined, string | null>;
  xls_filename: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface FormMetadataTable {
  id: Generated<number>;
  form_id: number;
  data_type: string;
  data_value: Generated<string>;
  extra_data: Json;
  data_file: string | null;
  data_file_type: string | null;
  file_hash: string | null;
  /** The uploaded file (blobs.sha256), for media and supporting_doc entries with a data_file. */
  blob_sha256: Generated<string | null>;
  date_created: DefaultedTimestamp;
  deleted_at: NullableTimestamp;
}

export interface SurveyDraftsTable {
  id: Generated<number>;
  user_id: number;
  unique_string: string;
  body: string;
  created_at: DefaultedTimestamp;
}

export interface BlobsTable {
  sha256: string;
  content_type: Generated<string>;
  size: number;
  /** CRC-32 of the whole file; null for files stored before it was recorded (migration 0024). */
  crc32: number | null;
  created_at: DefaultedTimestamp;
}

export interface BlobChunksTable {
  sha256: string;
  seq: number;
  data: Uint8Array;
}

export interface RestServicesTable {
  id: Generated<number>;
  form_id: number;
  name: string;
  service_url: string;
  secret_sealed: string | null;
  send_updates: Generated<boolean>;
  created_by: number | null;
  date_created: DefaultedTimestamp;
  date_modified: DefaultedTimestamp;
  last_status: ColumnType<number | null, number | null | undefined, number | null>;
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  last_attempt_at: NullableTimestamp;
  last_delivery_at: NullableTimestamp;
  attempts: Generated<number>;
  delivered_count: ColumnType<string | number, never, string | number>;
  dropped_count: ColumnType<string | number, never, string | number>;
  retry_after: NullableTimestamp;
  locked_by: ColumnType<string | null, string | null | undefined, string | null>;
  locked_until: NullableTimestamp;
}

export interface RestServiceOutboxTable {
  id: ColumnType<string | number, never, never>;
  service_id: number;
  instance_id: number;
  event: 'created' | 'edited' | 'reviewed';
  created_at: DefaultedTimestamp;
}

export interface JobsTable {
  id: Generated<number>;
  uuid: string;
  type: string;
  payload: ColumnType<unknown, string, string>;
  status: ColumnType<'PENDING' | 'STARTED' | 'SUCCESS' | 'FAILURE', 'PENDING' | undefined, 'PENDING' | 'STARTED' | 'SUCCESS' | 'FAILURE'>;
  result: ColumnType<unknown, string | null | undefined, string | null>;
  error: ColumnType<string | null, string | null | undefined, string | null>;
  progress: ColumnType<{ current: number; total: number } | null, string | null | undefined, string | null>;
  attempts: ColumnType<number, number | undefined, number>;
  max_attempts: number | null;
  run_after: DefaultedTimestamp;
  locked_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
  locked_by: ColumnType<string | null, string | null | undefined, string | null>;
  created_by: number | null;
  created_at: DefaultedTimestamp;
  started_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  finished_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

// ---- OAuth 2 (migrations/0004_oauth.sql)

export interface OAuthApplicationsTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  client_id: string;
  client_secret_hash: Uint8Array | null;
  client_type: 'confidential' | 'public';
  authorization_grant_type: 'authorization-code';
  redirect_uris: string;
  created_at: DefaultedTimestamp;
}

export interface OAuthAuthorizationCodesTable {
  id: Generated<number>;
  code_hash: Uint8Array;
  application_id: number;
  user_id: number;
  redirect_uri: string;
  scope: string;
  code_challenge: string | null;
  code_challenge_method: string | null;
  expires_at: Date;
  created_at: DefaultedTimestamp;
}

export interface OAuthAccessTokensTable {
  id: Generated<number>;
  token_hash: Uint8Array;
  application_id: number;
  user_id: number;
  scope: string;
  expires_at: Date;
  created_at: DefaultedTimestamp;
}

export interface OAuthRefreshTokensTable {
  id: Generated<number>;
  token_hash: Uint8Array;
  access_token_id: number | null;
  application_id: number;
  user_id: number;
  scope: string;
  created_at: DefaultedTimestamp;
  revoked_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface FormStatsTable {
  form_id: number;
  shard: number;
  submissions: Generated<number>;
  geopoints: Generated<number>;
  last_submission_time: NullableTimestamp;
}

export interface InstancesTable {
  id: Generated<number>;
  form_id: number;
  uuid: string;
  xml: string;
  json: Json;
  /** `json` as text, kept by the database (a generated column). */
  json_text: GeneratedAlways<string>;
  version: Generated<string>;
  status: Generated<string>;
  submitted_by: number | null;
  date_created: DefaultedTimestamp;
  date_modified: DefaultedTimestamp;
  edited: Generated<boolean>;
  last_edited: NullableTimestamp;
  last_edited_by: ColumnType<number | null, number | null | undefined, number | null>;
  deleted_at: NullableTimestamp;
  deleted_by: ColumnType<number | null, number | null | undefined, number | null>;
  total_media: Generated<number>;
  media_count: Generated<number>;
  has_geopoint: Generated<boolean>;
  /** Items of each repeat (src/lib/writers/layout/repeat-counts.ts); NULL for records stored before it was kept. */
  repeat_counts: ColumnType<Record<string, number> | null, string | null | undefined, string | null>;
}

export interface InstanceHistoryTable {
  id: Generated<number>;
  instance_id: number;
  form_id: number;
  uuid: string;
  xml: string;
  date_created: DefaultedTimestamp;
}

export interface AttachmentsTable {
  id: Generated<number>;
  instance_id: number;
  name: string;
  mimetype: string;
  blob: string;
  size: number;
  date_created: DefaultedTimestamp;
}

/** What an osm answer's `.osm` file held (migrations/0025_osm_data_form_version_files.sql). */
export interface OsmDataTable {
  id: Generated<number>;
  instance_id: number;
  field_name: string;
  filename: string;
  osm_id: string;
  osm_type: string;
  tags: Json;
  geom: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  date_created: DefaultedTimestamp;
  date_modified: DefaultedTimestamp;
}

// ---- Exports (migrations/0008_exports.sql)

export interface ExportsTable {
  id: Generated<number>;
  form_id: number;
  export_type: string;
  options: Json;
  options_key: string;
  submitted_by: number | null;
  task_id: ColumnType<string | null, string | null | undefined, string | null>;
  status: ColumnType<'PENDING' | 'SUCCESS' | 'FAILURE', 'PENDING' | undefined, 'PENDING' | 'SUCCESS' | 'FAILURE'>;
  error_message: ColumnType<string | null, string | null | undefined, string | null>;
  file_path: ColumnType<string | null, string | null | undefined, string | null>;
  filename: ColumnType<string | null, string | null | undefined, string | null>;
  size: ColumnType<number | null, number | null | undefined, number | null>;
  external_url: ColumnType<string | null, string | null | undefined, string | null>;
  data_version: Generated<string>;
  created_by: number | null;
  created_at: DefaultedTimestamp;
  finished_at: NullableTimestamp;
}

export interface SpreadsheetCredentialsTable {
  user_id: number;
  sealed: string;
  created_at: DefaultedTimestamp;
  updated_at: DefaultedTimestamp;
}

export interface Schema {
  users: UsersTable;
  password_history: PasswordHistoryTable;
  api_tokens: TokenTable;
  temp_tokens: TokenTable;
  browser_sessions: BrowserSessionsTable;
  login_failures: LoginFailuresTable;
  schema_migrations: SchemaMigrationsTable;
  projects: ProjectsTable;
  project_roles: ProjectRolesTable;
  project_tags: ProjectTagsTable;
  project_stars: ProjectStarsTable;
  forms: FormsTable;
  form_roles: FormRolesTable;
  form_tags: FormTagsTable;
  form_versions: FormVersionsTable;
  form_metadata: FormMetadataTable;
  organizations: OrganizationsTable;
  organization_members: OrganizationMembersTable;
  survey_drafts: SurveyDraftsTable;
  blobs: BlobsTable;
  blob_chunks: BlobChunksTable;
  instances: InstancesTable;
  form_stats: FormStatsTable;
  instance_history: InstanceHistoryTable;
  attachments: AttachmentsTable;
  osm_data: OsmDataTable;
  jobs: JobsTable;
  rest_services: RestServicesTable;
  rest_service_outbox: RestServiceOutboxTable;
  oauth_applications: OAuthApplicationsTable;
  oauth_authorization_codes: OAuthAuthorizationCodesTable;
  oauth_access_tokens: OAuthAccessTokensTable;
  oauth_refresh_tokens: OAuthRefreshTokensTable;
  exports: ExportsTable;
  spreadsheet_credentials: SpreadsheetCredentialsTable;
}
