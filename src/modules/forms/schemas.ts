// What the /forms routes answer, for the OpenAPI document (see src/http/documented-reply.ts).
import { Type } from 'typebox';
import { Nullable, OpenObject } from '../../http/documented-reply.ts';

const Member = Type.Object({
  is_org: Type.Boolean(),
  metadata: Type.Unknown(),
  first_name: Type.String(),
  last_name: Type.String(),
  user: Type.String({ description: 'username' }),
  role: Type.String(),
});

export const MetadataEntry = OpenObject({
  id: Type.Integer(),
  xform: Type.Integer({ description: 'form id' }),
  data_value: Type.String(),
  data_type: Type.String(),
  data_file: Nullable(Type.String({ description: 'download address of the uploaded file' })),
  extra_data: Type.Unknown(),
  data_file_type: Nullable(Type.String()),
  media_url: Nullable(Type.String()),
  file_hash: Nullable(Type.String()),
  url: Type.String(),
  date_created: Type.String(),
}, 'onadata metadata entry');

const formFields = {
  url: Type.String(),
  project: Type.String({ description: 'project URL' }),
  formid: Type.Integer(),
  title: Type.String(),
  id_string: Type.String(),
  sms_id_string: Type.String(),
  version: Type.String(),
  uuid: Type.String(),
  date_created: Type.String(),
  date_modified: Type.String(),
  last_updated_at: Type.String(),
  description: Type.String(),
  downloadable: Type.Boolean(),
  owner: Type.String({ description: 'owner URL' }),
  created_by: Nullable(Type.String({ description: 'creator URL' })),
  public: Type.Boolean(),
  public_data: Type.Boolean(),
  public_key: Type.String(),
  require_auth: Type.Boolean(),
  tags: Type.Array(Type.String()),
  enketo_url: Type.String({ description: 'this server’s web form that fills the form' }),
  enketo_preview_url: Type.String(),
  enketo_single_submit_url: Type.String(),
  num_of_submissions: Type.Integer(),
  num_of_pending_decryption_submissions: Type.Integer(),
  num_of_decrypted_submissions: Type.Integer(),
  last_submission_time: Nullable(Type.String()),
  xls_available: Type.Boolean(),
  allows_sms: Type.Boolean(),
  encrypted: Type.Boolean(),
  bamboo_dataset: Type.String(),
  instances_with_geopoints: Type.Boolean(),
  instances_with_osm: Type.Boolean(),
  has_hxl_support: Type.Boolean(),
  hash: Type.String(),
  is_merged_dataset: Type.Boolean(),
  is_instance_json_regenerated: Type.Boolean(),
  is_managed: Type.Boolean(),
  contributes_entities_to: Type.Array(Type.Unknown()),
  consumes_entities_from: Type.Array(Type.Unknown()),
  data_views: Type.Array(Type.Unknown()),
  users: Type.Array(Member),
};

/** A form as GET /forms/{pk} answers it. */
export const Form = OpenObject({
  ...formFields,
  submission_count_for_today: Type.Integer(),
  form_versions: Type.Array(Type.Object({ version: Type.String(), total: Type.Integer() })),
  metadata: Type.Array(MetadataEntry),
}, 'onadata form (retrieve)');

/** A published or cloned form: the full form and whether the id_string had to change. */
export const CreatedForm = OpenObject({
  ...Form.properties,
  has_id_string_changed: Type.Boolean(),
}, 'onadata form (create): the full form and has_id_string_changed');

/** A form in a list: the full form less the per-form counts and details. */
export const FormListItem = OpenObject(formFields, 'onadata form (list)');

export const FormVersion = OpenObject({
  xform: Type.String({ description: 'the form’s address' }),
  url: Type.String({ description: 'the version’s form JSON' }),
  xml: Type.String({ description: 'the version’s XForm' }),
  created_by: Nullable(Type.String({ description: 'publisher’s user URL' })),
  version: Type.String(),
  date_created: Type.String(),
  date_modified: Type.String(),
}, 'a published version of the form');

export const Labels = Type.Array(Type.String(), { description: 'the tags' });

export const AsyncJob = OpenObject({
  job_uuid: Type.String(),
  job_status: Type.String({ description: 'PENDING, STARTED, SUCCESS or FAILURE (when polled)' }),
}, 'an async job: its id when started, its state when polled');
