// The form pages' calls: one form, its settings, its XLSForm, its files (media and supporting
// documents), clone, move and delete; and the owning account's require_auth.
import { ApiError, call, type Project } from '../api.ts';

export interface FormDetail {
  formid: number;
  title: string;
  id_string: string;
  version: string;
  description: string;
  owner: string;
  project: string;
  public: boolean;
  public_data: boolean;
  downloadable: boolean;
  num_of_submissions: number;
  last_submission_time: string | null;
  date_created: string;
  date_modified: string;
  enketo_url: string;
  enketo_preview_url: string;
  xls_available: boolean;
}

export type FormSettings = Partial<Pick<FormDetail, 'title' | 'description' | 'public' | 'public_data' | 'downloadable'>>;

export type FileKind = 'media' | 'supporting_doc';

export interface FormFile {
  id: number;
  data_type: string;
  data_value: string;
  data_file: string | null;
  data_file_type: string | null;
  media_url: string | null;
  date_created: string;
}

export interface Profile {
  username: string;
  require_auth: boolean;
}

/** One converter error, placed in the XLSForm where the converter knows (the publish refusal's `errors`). */
export interface ConversionIssue {
  message: string;
  sheet?: string;
  row?: number;
  column?: string;
}

/** The located errors of a refused publish or replace, or none when the refusal holds only text. */
export function conversionIssues(error: unknown): ConversionIssue[] {
  if (!(error instanceof ApiError) || typeof error.body !== 'object' || error.body === null) return [];
  const list = (error.body as Record<string, unknown>)['errors'];
  if (!Array.isArray(list)) return [];
  return list.flatMap((item: unknown): ConversionIssue[] => {
    if (typeof item !== 'object' || item === null) return [];
    const { message, sheet, row, column } = item as Record<string, unknown>;
    if (typeof message !== 'string') return [];
    return [{
      message,
      ...(typeof sheet === 'string' ? { sheet } : {}),
      ...(typeof row === 'number' ? { row } : {}),
      ...(typeof column === 'string' ? { column } : {}),
    }];
  });
}

/** The id at the end of an API URL (`…/api/v1/projects/7` → 7). */
export function idOf(url: string): number {
  return Number(url.replace(/\/+$/, '').split('/').pop());
}

/** Where the form's own files download from (the API's form.xml, form.json and form.xls). */
export function formFileUrl(formId: number, format: 'xml' | 'json' | 'xls'): string {
  return `/api/v1/forms/${formId}/form.${format}`;
}

export const formsApi = {
  form: (id: number) => call<FormDetail>('GET', `/forms/${id}`),
  update: (id: number, settings: FormSettings) => call<FormDetail>('PATCH', `/forms/${id}`, { ...settings }),
  replace: (id: number, file: File) => {
    const body = new FormData();
    body.append('xls_file', file, file.name);
    return call<FormDetail>('PATCH', `/forms/${id}`, body);
  },
  remove: (id: number) => call<void>('DELETE', `/forms/${id}`),
  clone: (id: number, username: string, projectId?: number) =>
    call<FormDetail>('POST', `/forms/${id}/clone`, { username, ...(projectId ? { project_id: projectId } : {}) }),
  move: (id: number, projectId: number) => call<FormDetail>('POST', `/projects/${projectId}/forms`, { formid: id }),
  projects: () => call<Project[]>('GET', '/projects'),
  project: (id: number) => call<Project>('GET', `/projects/${id}`),

  files: async (id: number, kind: FileKind) =>
    (await call<FormFile[]>('GET', `/metadata?xform=${id}`)).filter((entry) => entry.data_type === kind),
  addFile: (id: number, kind: FileKind, file: File) => {
    const body = new FormData();
    body.append('xform', String(id));
    body.append('data_type', kind);
    body.append('data_file', file, file.name);
    return call<FormFile>('POST', '/metadata', body);
  },
  removeFile: (entryId: number) => call<void>('DELETE', `/metadata/${entryId}`),

  profile: (username: string) => call<Profile>('GET', `/profiles/${encodeURIComponent(username)}`),
  setRequireAuth: (username: string, requireAuth: boolean) =>
    call<Profile>('PATCH', `/profiles/${encodeURIComponent(username)}`, { require_auth: requireAuth }),
};
