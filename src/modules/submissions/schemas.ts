// What the data and submission routes answer, for the OpenAPI document (see
// src/http/documented-reply.ts). A record carries the form's own fields besides these.
import { Type } from 'typebox';
import { Nullable, OpenObject } from '../../http/documented-reply.ts';

export const DataFormEntry = OpenObject({
  id: Type.Integer(),
  id_string: Type.String(),
  title: Type.String(),
  description: Type.String(),
  url: Type.String({ description: 'the form’s records' }),
}, 'a form whose records the caller may read');

export const DataRecord = OpenObject({
  _id: Type.Integer(),
  _uuid: Type.String(),
  _xform_id: Type.Integer(),
  _xform_id_string: Type.String(),
  _submission_time: Type.String(),
  _date_modified: Type.String(),
  _edited: Type.Boolean(),
  _last_edited: Type.String({ description: 'present once edited' }),
  _last_edited_by: Nullable(Type.String()),
  _submitted_by: Nullable(Type.String()),
  _tags: Type.Array(Type.String()),
  _notes: Type.Array(Type.Unknown()),
  _attachments: Type.Array(OpenObject({
    id: Type.Integer(),
    name: Type.String(),
    filename: Type.String(),
    mimetype: Type.String(),
    download_url: Type.String(),
  }, 'an attached file')),
  _geolocation: Type.Array(Nullable(Type.Number())),
  _media_count: Type.Integer(),
  _total_media: Type.Integer(),
  _media_all_received: Type.Boolean(),
  _status: Type.String(),
  _version: Type.String(),
}, 'a record: the form’s answers by field name (groups as `group/field`, repeats as lists) and these system fields');

export const Labels = Type.Array(Type.String(), { description: 'the record’s tags' });

export const DeletedRecords = OpenObject({ message: Type.String({ description: '`N records were deleted`' }) }, 'how many records were deleted');

const JsonSubmissionAnswer = OpenObject({
  message: Type.String(),
  formid: Type.String({ description: 'the form’s id_string' }),
  encrypted: Type.Boolean(),
  instanceID: Type.String(),
  submissionDate: Type.String(),
  markedAsCompleteDate: Type.String(),
}, 'a JSON submission ({id, submission}) stored');

/** 201 for a stored submission: OpenRosa's XML answer, or JSON for a JSON submission. */
export const SubmissionAnswer = {
  description: 'stored',
  content: {
    'application/json': { schema: JsonSubmissionAnswer },
    'text/xml': { schema: Type.String({ description: 'OpenRosaResponse with the submissionMetadata (instanceID, submissionDate)' }) },
  },
};
