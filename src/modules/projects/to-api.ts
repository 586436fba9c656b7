// Project rows → onadata's project shapes (detail, list item, and the public-only reduction).
import { isoTimestamp } from '../../platform/clock.ts';
import { displayedProjectRole } from '../../access/roles.ts';
import { memberToApi } from '../shared/members.ts';
import type { MemberRow, ProjectRow } from './repository.ts';
import type { ProjectFormSummary } from '../forms/repository.ts';

export interface ProjectExtras {
  members: MemberRow[];
  forms: ProjectFormSummary[];
  tags: string[];
  starred: boolean;
  /** The owner organisation's teams with their role on the project ([] for personal accounts). */
  teams: ReadonlyArray<{ readonly name: string; readonly role: string; readonly users: readonly string[] }>;
  /** Outsiders seeing a public project get no owner, created_by, users, teams or metadata. */
  full: boolean;
  /** Whose entries appear in `users` (list responses narrow it). */
  memberFilter?: (member: MemberRow) => boolean;
}

export const userUrl = (baseUrl: string, username: string): string => `${baseUrl}/api/v1/users/${encodeURIComponent(username)}`;
export const projectUrl = (baseUrl: string, id: number): string => `${baseUrl}/api/v1/projects/${id}`;
export const formUrl = (baseUrl: string, id: number): string => `${baseUrl}/api/v1/forms/${id}`;

function lastSubmission(forms: readonly ProjectFormSummary[]): string | null {
  let newest: Date | null = null;
  for (const form of forms) if (form.last_submission_time && (!newest || form.last_submission_time > newest)) newest = form.last_submission_time;
  return newest ? isoTimestamp(newest) : null;
}

function formEntry(baseUrl: string, form: ProjectFormSummary, detail: boolean): Record<string, unknown> {
  const base: Record<string, unknown> = { name: form.title, formid: form.id, id_string: form.id_string };
  if (detail) {
    Object.assign(base, {
      num_of_submissions: form.num_of_submissions,
      downloadable: form.downloadable,
      encrypted: form.encrypted,
      published_by_formbuilder: null,
      last_submission_time: form.last_submission_time ? isoTimestamp(form.last_submission_time) : null,
      date_created: isoTimestamp(form.date_created),
      url: formUrl(baseUrl, form.id),
      last_updated_at: isoTimestamp(form.last_updated_at),
    });
  } else {
    base['encrypted'] = form.encrypted;
  }
  return { ...base, is_merged_dataset: false, contributes_entities_to: [], consumes_entities_from: [] };
}

export function projectToApi(project: ProjectRow, baseUrl: string, extras: ProjectExtras, shape: 'detail' | 'list'): Record<string, unknown> {
  const members = extras.memberFilter ? extras.members.filter(extras.memberFilter) : extras.members;
  const common = {
    owner: userUrl(baseUrl, project.owner_username),
    created_by: project.created_by_username ? userUrl(baseUrl, project.created_by_username) : null,
    metadata: project.metadata,
    starred: extras.starred,
    users: members.map((m) => memberToApi(m, displayedProjectRole)),
    forms: extras.forms.map((f) => formEntry(baseUrl, f, shape === 'detail')),
    public: project.shared,
    tags: extras.tags,
    num_datasets: extras.forms.length,
    last_submission_date: lastSubmission(extras.forms),
    teams: extras.teams,
  };
  const body: Record<string, unknown> =
    shape === 'detail'
      ? {
          url: projectUrl(baseUrl, project.id),
          projectid: project.id,
          name: project.name,
          ...common,
          data_views: [],
          date_created: isoTimestamp(project.date_created),
          date_modified: isoTimestamp(project.date_modified),
        }
      : {
          url: projectUrl(baseUrl, project.id),
          projectid: project.id,
          ...common,
          name: project.name,
          date_created: isoTimestamp(project.date_created),
          date_modified: isoTimestamp(project.date_modified),
          deleted_at: project.deleted_at ? isoTimestamp(project.deleted_at) : null,
        };
  if (!extras.full) for (const key of ['owner', 'created_by', 'users', 'teams', 'metadata']) delete body[key];
  return body;
}
