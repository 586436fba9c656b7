// How the app talks to the server: the public /api/v1 API, authenticated by the session cookie the
// browser keeps (HttpOnly; no token is ever held by the page). Writes carry the CSRF token that
// GET /api/v1/session hands out. Pages reach the API only through this module and web/src/api/*.ts
// (one per area), which call it.

export interface User {
  id: number;
  username: string;
  first_name: string;
  last_name: string;
}

export interface Session {
  user: User | null;
  csrf_token: string;
  registration_open: boolean;
}

export interface ProjectMember {
  user: string;
  role: string;
  is_org?: boolean;
}

export interface ProjectFormSummary {
  formid: number;
  name: string;
  id_string: string;
  num_of_submissions: number;
}

export interface Project {
  projectid: number;
  name: string;
  owner: string;
  created_by: string;
  public: boolean;
  starred: boolean;
  users: ProjectMember[];
  forms: ProjectFormSummary[];
  date_created: string;
  date_modified: string;
}

export interface Form {
  formid: number;
  title: string;
  id_string: string;
  num_of_submissions: number;
  date_created: string;
  downloadable: boolean;
  last_submission_time: string | null;
}

export interface Registration {
  name: string;
  username: string;
  email: string;
  password: string;
}

/** A refusal from the API, with the message a person can act on. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fields: Readonly<Record<string, string>> = {},
    /** The parsed answer as sent, for refusals that carry more than a message (publish `errors`). */
    readonly body: unknown = undefined,
  ) {
    super(message);
  }
}

let csrfToken = '';
let signedOut: () => void = () => undefined;

/** The session's CSRF token (after api.session()), for the web forms' OpenRosa posts. */
export function currentCsrfToken(): string {
  return csrfToken;
}

/** What to do when the API says the session is gone (expired, or ended in another tab). */
export function onSignedOut(handler: () => void): void {
  signedOut = handler;
}

/** The message of an API error body: `detail`, the publish errors' `text`, or field errors. */
function describe(status: number, body: unknown): ApiError {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const record = body as Record<string, unknown>;
    for (const key of ['detail', 'text', 'message', 'error']) {
      const value = record[key];
      if (typeof value === 'string' && value) return new ApiError(status, value);
    }
    const fields: Record<string, string> = {};
    for (const [key, value] of Object.entries(record)) {
      const text = Array.isArray(value) ? value.map(String).join(' ') : typeof value === 'string' ? value : '';
      if (text) fields[key] = text;
    }
    const summary = Object.entries(fields).map(([key, text]) => (key === 'non_field_errors' ? text : `${key}: ${text}`));
    if (summary.length) return new ApiError(status, summary.join(' '), fields);
  }
  if (Array.isArray(body) && body.length) return new ApiError(status, body.map(String).join(' '));
  return new ApiError(status, `The server answered ${status}.`);
}

/**
 * One call to /api/v1 with the session's cookie and CSRF token, answering the parsed JSON or
 * throwing an ApiError with the API's message. The app's other API modules (web/src/api/*.ts) use it.
 */
export async function call<T>(method: string, path: string, body?: Record<string, unknown> | FormData): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', 'x-requested-with': 'XMLHttpRequest' };
  if (method !== 'GET') headers['x-csrftoken'] = csrfToken;
  let payload: BodyInit | undefined;
  if (body instanceof FormData) payload = body;
  else if (body) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  let response: Response;
  try {
    response = await fetch(`/api/v1${path}`, { method, headers, body: payload ?? null, credentials: 'same-origin', cache: 'no-cache' });
  } catch {
    throw new ApiError(0, 'The server cannot be reached. Check the connection and try again.');
  }
  const text = await response.text();
  let parsed: unknown = undefined;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (response.status === 401 && path !== '/session') signedOut();
  if (!response.ok) {
    const error = describe(response.status, parsed);
    throw new ApiError(error.status, error.message, error.fields, parsed);
  }
  return parsed as T;
}

async function session(request: Promise<Session>): Promise<Session> {
  const answer = await request;
  csrfToken = answer.csrf_token;
  return answer;
}

export const api = {
  session: () => session(call<Session>('GET', '/session')),
  signIn: (username: string, password: string) => session(call<Session>('POST', '/session', { username, password })),
  signOut: () => call<void>('DELETE', '/session'),
  register: (fields: Registration) => call<User>('POST', '/profiles', { ...fields }),

  projects: () => call<Project[]>('GET', '/projects'),
  project: (id: number) => call<Project>('GET', `/projects/${id}`),
  createProject: (name: string) => call<Project>('POST', '/projects', { name }),
  projectForms: (id: number) => call<Form[]>('GET', `/projects/${id}/forms`),
  publishForm: (projectId: number, file: File) => {
    const body = new FormData();
    body.append('xls_file', file, file.name);
    return call<Form>('POST', `/projects/${projectId}/forms`, body);
  },
  /** Publishes the XLSForm at an address the server fetches (http or https; private addresses are refused). */
  publishFormFromUrl: (projectId: number, address: string) => call<Form>('POST', `/projects/${projectId}/forms`, { xls_url: address }),
};
