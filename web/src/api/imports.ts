// The imports page's upload: POST /api/v1/forms/{pk}/import with the file, sent by XMLHttpRequest
// because fetch cannot report upload progress; a large file answers a job to poll.
import { call, currentCsrfToken } from '../api.ts';

export interface ImportSummary {
  additions: number;
  updates: number;
  duplicates: number;
  info?: string;
}

export interface ImportRowError {
  row: number;
  column: string;
  value: string;
  problem: string;
}

/** A refusal: the API's message and, for bad cells, where they are. */
export class ImportRefused extends Error {
  constructor(message: string, readonly rows: readonly ImportRowError[]) {
    super(message);
  }
}

export interface ImportJobState {
  job_status: 'PENDING' | 'PROGRESS' | 'SUCCESS' | 'FAILURE' | string;
  current?: number;
  total?: number;
  additions?: number;
  updates?: number;
  duplicates?: number;
  info?: string;
  error?: string;
}

export type ImportAnswer = ImportSummary | { task_id: string };

function refusalOf(status: number, body: unknown): ImportRefused {
  if (typeof body === 'object' && body !== null) {
    const record = body as Record<string, unknown>;
    const message = ['error', 'detail', 'message'].map((key) => record[key]).find((value): value is string => typeof value === 'string');
    const rows = Array.isArray(record['errors']) ? (record['errors'] as ImportRowError[]) : [];
    if (message) return new ImportRefused(message, rows);
  }
  return new ImportRefused(`The server answered ${status}.`, []);
}

/** Uploads the file (CSV as csv_file, a workbook as xls_file), reporting the bytes sent. */
export function uploadImport(formId: number, file: File, overwrite: boolean, onProgress: (sent: number, total: number) => void): Promise<ImportAnswer> {
  const body = new FormData();
  const workbook = /\.xlsx?$/i.test(file.name);
  body.append(workbook ? 'xls_file' : 'csv_file', file, file.name);
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', `/api/v1/forms/${formId}/import${overwrite ? '?overwrite=true' : ''}`);
    request.setRequestHeader('accept', 'application/json');
    request.setRequestHeader('x-requested-with', 'XMLHttpRequest');
    request.setRequestHeader('x-csrftoken', currentCsrfToken());
    request.upload.addEventListener('progress', (event) => onProgress(event.loaded, event.lengthComputable ? event.total : file.size));
    request.addEventListener('error', () => reject(new ImportRefused('The server cannot be reached. Check the connection and try again.', [])));
    request.addEventListener('load', () => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(request.responseText);
      } catch {
        parsed = undefined;
      }
      if (request.status >= 200 && request.status < 300) resolve(parsed as ImportAnswer);
      else reject(refusalOf(request.status, parsed));
    });
    request.send(body);
  });
}

export const importsApi = {
  poll: (formId: number, jobUuid: string) => call<ImportJobState>('GET', `/forms/${formId}/import?job_uuid=${encodeURIComponent(jobUuid)}`),
};
