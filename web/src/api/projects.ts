// The projects pages' calls beyond listing and creating (web/src/api.ts): renaming, metadata, tags,
// stars, sharing and deleting.
import { call, type Project } from '../api.ts';

/** The spec's four roles first, then onadata's finer ones the API takes too. */
export const PROJECT_ROLES = [
  { value: 'readonly', label: 'Read only' },
  { value: 'dataentry', label: 'Data entry' },
  { value: 'editor', label: 'Editor' },
  { value: 'manager', label: 'Manager' },
  { value: 'owner', label: 'Owner' },
  { value: 'readonly-no-download', label: 'Read only, no downloads' },
  { value: 'dataentry-only', label: 'Data entry only (own records)' },
  { value: 'dataentry-minor', label: 'Data entry, sees own records' },
  { value: 'editor-minor', label: 'Editor of own records' },
  { value: 'editor-no-download', label: 'Editor, no downloads' },
] as const;

export function roleLabel(role: string): string {
  return PROJECT_ROLES.find((r) => r.value === role)?.label ?? role;
}

export interface ProjectWithMetadata extends Project {
  metadata?: Record<string, unknown>;
  tags?: string[];
}

const path = (id: number): string => `/projects/${id}`;

export const projectsApi = {
  project: (id: number) => call<ProjectWithMetadata>('GET', path(id)),
  starred: (username: string) => call<Project[]>('GET', `/user/${encodeURIComponent(username)}/starred`),
  /** PATCH merges metadata into what is stored. */
  update: (id: number, changes: { name?: string; metadata?: Record<string, unknown>; public?: boolean }) =>
    call<ProjectWithMetadata>('PATCH', path(id), changes),
  remove: (id: number) => call<void>('DELETE', path(id)),
  star: (id: number, starred: boolean) => call<void>(starred ? 'POST' : 'DELETE', `${path(id)}/star`),
  tags: (id: number) => call<string[]>('GET', `${path(id)}/labels`),
  addTags: (id: number, tags: string) => call<string[]>('POST', `${path(id)}/labels`, { tags }),
  removeTag: (id: number, tag: string) => call<string[]>('DELETE', `${path(id)}/labels/${encodeURIComponent(tag)}`),
  /** `username` may name a user or an organisation. */
  share: (id: number, username: string, role: string) => call<void>('PUT', `${path(id)}/share`, { username, role }),
  unshare: (id: number, username: string, role: string) => call<void>('PUT', `${path(id)}/share`, { username, role, remove: true }),
};
