// The exports page's calls: export_async (start, then poll by job_uuid), the form's past exports,
// and deleting one.
import { call } from '../api.ts';

/** Formats export_async makes (gsheets only where the server has a Google client). */
export const EXPORT_FORMATS = [
  { value: 'csv', label: 'CSV' },
  { value: 'xlsx', label: 'Excel (XLSX)' },
  { value: 'xls', label: 'Excel 97 (XLS)' },
  { value: 'csvzip', label: 'CSV files in a ZIP (one per repeat)' },
  { value: 'savzip', label: 'SPSS (SAV files in a ZIP)' },
  { value: 'kml', label: 'KML (geopoints)' },
  { value: 'osm', label: 'OpenStreetMap (OSM)' },
  { value: 'zip', label: 'Attached media files (ZIP)' },
  { value: 'gsheets', label: 'Google Sheets' },
] as const;

export type ExportFormat = (typeof EXPORT_FORMATS)[number]['value'];

/** The job's state as export_async answers it. */
export interface ExportJobState {
  job_uuid?: string;
  job_status?: 'PENDING' | 'SUCCESS' | 'FAILURE' | string;
  export_url?: string;
  progress?: number;
  total?: number;
  error_message?: string;
}

export interface PastExport {
  id: number;
  job_status: string;
  type: string;
  date_created: string;
  filename: string | null;
  options: Record<string, unknown>;
  export_url: string | null;
  error_message: string | null;
}

export interface FormHeading {
  formid: number;
  title: string;
  id_string: string;
  num_of_submissions: number;
}

/** Query-string options, as export_async reads them: booleans as `true`/`false`. */
export type ExportOptions = Record<string, string | boolean>;

function query(options: ExportOptions): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(options)) {
    if (value === '' || value === undefined) continue;
    params.set(key, typeof value === 'boolean' ? String(value) : value);
  }
  return params.toString();
}

/** The export's download path on this server (export_url names the server's public address). */
export function downloadPath(exportUrl: string): string {
  try {
    return new URL(exportUrl, window.location.origin).pathname;
  } catch {
    return exportUrl;
  }
}

export const exportsApi = {
  form: (formId: number) => call<FormHeading>('GET', `/forms/${formId}`),
  start: (formId: number, format: ExportFormat, options: ExportOptions) =>
    call<ExportJobState>('GET', `/forms/${formId}/export_async?${query({ ...options, format })}`),
  poll: (formId: number, jobUuid: string) => call<ExportJobState>('GET', `/forms/${formId}/export_async?job_uuid=${encodeURIComponent(jobUuid)}`),
  list: (formId: number) => call<PastExport[]>('GET', `/export?xform=${formId}`),
  remove: (id: number) => call<void>('DELETE', `/export/${id}`),
};
