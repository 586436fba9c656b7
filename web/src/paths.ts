// The app's pages. The server answers index.html for each (src/http/web-app.ts, whose test checks
// that every path here is served and starts with a name no user can take).
export const paths = {
  home: '/',
  signIn: '/login',
  register: '/register',
  projects: '/projects',
  project: '/projects/:id',
  form: '/projects/:id/forms/:pk',
} as const;

export function projectPath(id: number): string {
  return `/projects/${id}`;
}

export function formPath(projectId: number, formId: number): string {
  return `/projects/${projectId}/forms/${formId}`;
}

/** The web forms' pages (web/src/webform), served as webform.html rather than by this app's router. */
export function isWebFormPath(path: string): boolean {
  return /^\/forms\/\d+\//.test(path);
}
