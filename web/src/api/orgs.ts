// The organisations pages' calls (/api/v1/orgs).
import { call } from '../api.ts';

export interface OrgMember {
  user: string;
  role: string;
  first_name: string;
  last_name: string;
}

export interface Organisation {
  org: string;
  name: string;
  email?: string;
  city?: string;
  country?: string;
  description?: string;
  users: OrgMember[];
}

export const ORG_ROLES = ['member', 'readonly', 'dataentry', 'editor', 'manager', 'owner'] as const;

const path = (org: string): string => `/orgs/${encodeURIComponent(org)}`;

export const orgsApi = {
  list: () => call<Organisation[]>('GET', '/orgs'),
  get: (org: string) => call<Organisation>('GET', path(org)),
  create: (fields: { org: string; name: string; email?: string; city?: string; country?: string }) => call<Organisation>('POST', '/orgs', { ...fields }),
  addMember: (org: string, username: string, role: string) => call<string[]>('POST', `${path(org)}/members`, { username, role }),
  changeRole: (org: string, username: string, role: string) => call<string[]>('PUT', `${path(org)}/members`, { username, role }),
  removeMember: (org: string, username: string) => call<string[]>('DELETE', `${path(org)}/members?username=${encodeURIComponent(username)}`),
};
