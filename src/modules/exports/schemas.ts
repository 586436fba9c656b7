// What the export routes answer, for the OpenAPI document (see src/http/documented-reply.ts).
import { Type } from 'typebox';
import { Nullable, OpenObject } from '../../http/documented-reply.ts';

export const ExportRecord = OpenObject({
  id: Type.Integer(),
  job_status: Type.String({ description: 'PENDING, STARTED, SUCCESS or FAILURE' }),
  type: Type.String({ description: 'the export format' }),
  task_id: Nullable(Type.String()),
  xform: Type.String({ description: 'the form’s address' }),
  date_created: Type.String(),
  filename: Nullable(Type.String()),
  options: Type.Unknown(),
  export_url: Nullable(Type.String({ description: 'the download, once SUCCESS' })),
  error_message: Nullable(Type.String()),
}, 'onadata export record');

export const ExportJob = OpenObject({
  job_uuid: Type.String({ description: 'a started job: poll with ?job_uuid' }),
  job_status: Type.String({ description: 'PENDING, STARTED, SUCCESS or FAILURE' }),
  export_url: Type.String({ description: 'the export, once SUCCESS' }),
  progress: Type.Integer({ description: 'records written so far, while it runs' }),
  total: Type.Integer({ description: 'records to write' }),
  error_message: Type.String({ description: 'why it failed (also as `error`)' }),
}, 'an export job: started, reused, or polled');
