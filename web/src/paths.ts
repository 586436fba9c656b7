// The app's pages. The server answers index.html for each (src/http/web-app.ts, whose test checks
// that every path here is served and starts with a name no user can take).
export const paths = {
  home: '/',
  signIn: '/login',
  register: '/register',
  projects: '/projects',
  project: '/projects/:id',
  account: '/account',
  orgs: '/account/orgs',
  org: '/account/orgs/:name',
  formExports: '/projects/:id/forms/:pk/exports',
  formImports: '/projects/:id/forms/:pk/imports',
  form: '/projects/:id/forms/:pk',
  formData: '/projects/:id/forms/:pk/data',
  formRecord: '/projects/:id/forms/:pk/data/:dataid',
  formMap: '/projects/:id/forms/:pk/map',
  formSummary: '/projects/:id/forms/:pk/summary',
} as const;

export function projectPath(id: number): string {
  return `/projects/${id}`;
}

export function orgPath(name: string): string {
  return `/account/orgs/${encodeURIComponent(name)}`;
}

/** A form's exports page: the export form, the job's progress and the past exports. */
export function formExportsPath(projectId: number, formId: number): string {
  return `/projects/${projectId}/forms/${formId}/exports`;
}

/** A form's imports page: upload CSV/XLS/XLSX records. */
export function formImportsPath(projectId: number, formId: number): string {
  return `/projects/${projectId}/forms/${formId}/imports`;
}

export function formPath(projectId: number, formId: number): string {
  return `/projects/${projectId}/forms/${formId}`;
}

/** A form's records as a table. */
export function formDataPath(projectId: number, formId: number): string {
  return `/projects/${projectId}/forms/${formId}/data`;
}

/** One record: its answers, files, history, review and tags. */
export function recordPath(projectId: number, formId: number, dataId: number): string {
  return `/projects/${projectId}/forms/${formId}/data/${dataId}`;
}

/** A form's records on a map. */
export function formMapPath(projectId: number, formId: number): string {
  return `/projects/${projectId}/forms/${formId}/map`;
}

/** A form's submissions per day and enumerator, and its select questions' answer counts. */
export function formSummaryPath(projectId: number, formId: number): string {
  return `/projects/${projectId}/forms/${formId}/summary`;
}

/** The web forms' pages (web/src/webform), served as webform.html rather than by this app's router. */
export function isWebFormPath(path: string): boolean {
  return /^\/forms\/\d+\//.test(path);
}
