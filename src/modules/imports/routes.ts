// Routes for record imports: POST a file to import it (at once, or as a job), GET with job_uuid to
// follow the job.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errors } from '../../errors.ts';
import { importStatus, startImport, type ImportEndpoint } from './service.ts';
import { spoolUpload } from './upload.ts';

const Params = Type.Object({ pk: Type.String({ description: 'form id' }) });
const PostQuery = Type.Object({ overwrite: Type.Optional(Type.String({ description: '`true` deletes all existing records first' })) });
const GetQuery = Type.Object({ job_uuid: Type.Optional(Type.String({ description: 'the task_id a POST answered' })) });

type Post = { Params: { pk: string }; Querystring: { overwrite?: string } };
type Get = { Params: { pk: string }; Querystring: { job_uuid?: string } };

const ENDPOINTS: ReadonlyArray<{ endpoint: ImportEndpoint; fields: readonly string[]; summary: string }> = [
  { endpoint: 'csv_import', fields: ['csv_file'], summary: 'Import records from a CSV file (multipart csv_file)' },
  { endpoint: 'import', fields: ['csv_file', 'xls_file'], summary: 'Import records from a CSV file (csv_file) or an XLS/XLSX workbook (xls_file)' },
];

export function registerImportRoutes(app: FastifyInstance): void {
  for (const { endpoint, fields, summary } of ENDPOINTS) {
    app.post<Post>(`/api/v1/forms/:pk/${endpoint}`, {
      config: { access: 'authenticated', upload: true },
      schema: {
        tags: ['forms'],
        summary: `${summary}: {additions, updates, duplicates, info} at once, or {task_id} for a larger file`,
        params: Params,
        querystring: PostQuery,
      },
      handler: async (request) => {
        const upload = await spoolUpload(request, fields, request.ctx.config.uploadLimitBytes);
        try {
          const oversized = [...upload.files.values()].find((file) => file.tooLarge);
          if (oversized) throw errors.fileTooLarge(oversized.fileName, request.ctx.config.uploadLimitBytes);
          const overwrite = (request.query.overwrite ?? '').toLowerCase() === 'true';
          return await startImport(request.ctx, request.params.pk, upload, { endpoint, overwrite });
        } finally {
          await upload.discard();
        }
      },
    });

    app.get<Get>(`/api/v1/forms/:pk/${endpoint}`, {
      config: { access: 'authenticated' },
      schema: { tags: ['forms'], summary: 'Progress of an import job: {current, total} while running, the summary when done', params: Params, querystring: GetQuery },
      handler: async (request, reply) => {
        const { status, body } = await importStatus(request.ctx, request.params.pk, request.query.job_uuid);
        return reply.code(status).send(body);
      },
    });
  }
}
