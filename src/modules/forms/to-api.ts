// Form rows → onadata's form shapes: full (retrieve), short (list) and create (full + has_id_string_changed).
import { isoTimestamp } from '../../platform/clock.ts';
import { memberToApi } from '../shared/members.ts';
import type { MemberRow } from '../projects/repository.ts';
import { formUrl, projectUrl, userUrl } from '../projects/to-api.ts';
import type { FormRow, MetadataRow } from './repository.ts';
import { fillUrl, previewUrl, singleSubmitUrl } from '../webforms/urls.ts';

export interface FormExtras {
  members: MemberRow[];
  tags: string[];
  metadata: MetadataRow[];
  formVersions: Array<{ version: string; total: number }>;
  submissionCountForToday: number;
}

export type FormShape = 'full' | 'short';

/** Where an entry's uploaded file downloads: the entry's address with the file's extension. */
export function metadataFileUrl(row: Pick<MetadataRow, 'id' | 'data_value'>, baseUrl: string): string {
  const dot = row.data_value.lastIndexOf('.');
  const extension = dot > 0 ? row.data_value.slice(dot + 1).toLowerCase().replace(/[^a-z0-9]/g, '') : '';
  return `${baseUrl}/api/v1/metadata/${row.id}.${extension || 'bin'}`;
}

export function metadataToApi(row: MetadataRow, baseUrl: string): Record<string, unknown> {
  // An uploaded file's data_file and media_url both give its download address (onadata answers a
  // storage URL in each when the file is kept on its own storage).
  const fileUrl = row.data_file === null ? null : metadataFileUrl(row, baseUrl);
  return {
    id: row.id,
    xform: row.form_id,
    data_value: row.data_value,
    data_type: row.data_type,
    data_file: fileUrl,
    extra_data: row.extra_data,
    data_file_type: row.data_file_type,
    media_url: fileUrl,
    file_hash: row.file_hash,
    url: `${baseUrl}/api/v1/metadata/${row.id}`,
    date_created: isoTimestamp(row.date_created),
  };
}

export function formToApi(form: FormRow, baseUrl: string, extras: FormExtras, shape: FormShape): Record<string, unknown> {
  const full = shape === 'full';
  const body: Record<string, unknown> = {
    url: formUrl(baseUrl, form.id),
    project: projectUrl(baseUrl, form.project_id),
    formid: form.id,
    title: form.title,
    id_string: form.id_string,
    sms_id_string: form.sms_id_string,
    version: form.version,
    uuid: form.uuid,
    date_created: form.date_created,
    date_modified: form.date_modified,
    last_updated_at: form.last_updated_at,
    description: form.description,
    downloadable: form.downloadable,
    owner: userUrl(baseUrl, form.owner_username),
    created_by: form.created_by_username ? userUrl(baseUrl, form.created_by_username) : null,
    public: form.shared,
    public_data: form.shared_data,
    public_key: form.public_key,
    require_auth: form.require_auth,
    tags: extras.tags,
    // The web forms this server serves itself (src/modules/webforms) stand where onadata links Enketo.
    enketo_url: fillUrl(baseUrl, form.id),
    enketo_preview_url: previewUrl(baseUrl, form.id),
    enketo_single_submit_url: singleSubmitUrl(baseUrl, form.id),
    num_of_submissions: form.num_of_submissions,
  };
  if (full) body['submission_count_for_today'] = extras.submissionCountForToday;
  Object.assign(body, {
    num_of_pending_decryption_submissions: 0,
    num_of_decrypted_submissions: 0,
    last_submission_time: form.last_submission_time,
    xls_available: form.xls_blob !== null,
    allows_sms: form.allows_sms,
    encrypted: form.encrypted,
    bamboo_dataset: '',
    instances_with_geopoints: form.instances_with_geopoints,
    instances_with_osm: form.instances_with_osm,
    has_hxl_support: form.has_hxl_support,
    hash: form.hash,
    is_merged_dataset: false,
    is_instance_json_regenerated: false,
    is_managed: false,
    contributes_entities_to: [],
    consumes_entities_from: [],
  });
  if (full) body['form_versions'] = extras.formVersions;
  body['data_views'] = [];
  if (full) body['metadata'] = extras.metadata.map((m) => metadataToApi(m, baseUrl));
  body['users'] = extras.members.map((m) => memberToApi(m));
  return body;
}
