// Reading the metadata routes' bodies into the service's typed inputs: each field as DRF reads it
// (types, required, blank, length). Nothing here throws: the service checks the values (types,
// links, files), adds those errors and answers one 400 after its access checks.
import type { FieldErrors } from '../../errors.ts';
import type { ParsedBody } from '../../lib/uploaded-body.ts';
import { asPayload, has, readString, type Payload } from '../../http/payload.ts';
import type { CreateMetadataInput, UpdateMetadataInput } from './service.ts';

function readValue(payload: Payload, problems: FieldErrors, required: boolean): string | undefined {
  const value = readString(payload, 'data_value', problems, { required, allowBlank: false });
  if (value !== undefined && value.length > 255) (problems['data_value'] ??= []).push('Ensure this field has no more than 255 characters.');
  return value;
}

/** POST /api/v1/metadata: JSON, a form, or multipart with a data_file. */
export function createMetadataInput(body: ParsedBody): CreateMetadataInput {
  const payload = asPayload(body.fields);
  const file = body.files.get('data_file');
  const problems: FieldErrors = {};
  const dataType = readString(payload, 'data_type', problems, { required: true });
  const dataValue = readValue(payload, problems, file === undefined);
  if (file === undefined && has(payload, 'data_file') && payload['data_file'] !== '') problems['data_file'] = ['The submitted data was not a file. Check the encoding type on the form.'];
  for (const field of ['project', 'instance'] as const) {
    if (has(payload, field)) problems[field] = [`${field === 'project' ? 'Project' : 'Record'} metadata is not supported by this server yet; give \`xform\`.`];
  }
  const rawForm = payload['xform'];
  if (rawForm === undefined || rawForm === null || rawForm === '') {
    if (!problems['project'] && !problems['instance']) problems['missing_field'] = ['`xform` or `project` or `instance` field is required.'];
  }
  return {
    formRef: typeof rawForm === 'string' || typeof rawForm === 'number' ? String(rawForm) : '',
    ...(dataType !== undefined ? { dataType } : {}),
    ...(dataValue !== undefined ? { dataValue } : {}),
    ...(file !== undefined ? { file } : {}),
    fieldErrors: problems,
  };
}

/** PUT or PATCH /api/v1/metadata/{id}. */
export function updateMetadataInput(body: unknown): UpdateMetadataInput {
  const payload = asPayload(body);
  const problems: FieldErrors = {};
  const dataValue = readValue(payload, problems, false);
  const dataType = readString(payload, 'data_type', problems);
  return {
    ...(dataType !== undefined ? { dataType } : {}),
    ...(dataValue !== undefined ? { dataValue } : {}),
    fieldErrors: problems,
  };
}
