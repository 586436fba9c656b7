// User rows → the wire shapes of /users, /profiles and /user.
import { hash } from 'node:crypto';
import { isoTimestamp } from '../../platform/clock.ts';
import type { UserRow } from './repository.ts';

export interface UserEntry {
  id: number;
  username: string;
  first_name: string;
  last_name: string;
}

export function userToApi(user: UserRow): UserEntry {
  return { id: user.id, username: user.username, first_name: user.first_name, last_name: user.last_name };
}

export function gravatarUrl(email: string): string {
  const digest = hash('md5', email.trim().toLowerCase());
  return `https://secure.gravatar.com/avatar/${digest}?d=mp&s=60`;
}

export function fullName(user: UserRow): string {
  return `${user.first_name} ${user.last_name}`.trim();
}

export interface ProfileView {
  includeEmail: boolean;
  includeMetadata: boolean;
}

/** The run of fields, city … user, that profiles and the current user share, in onadata's order. */
function contactFields(user: UserRow, baseUrl: string): Record<string, unknown> {
  return {
    city: user.city,
    country: user.country,
    organization: user.organization,
    website: user.home_page,
    twitter: user.twitter,
    gravatar: gravatarUrl(user.email),
    require_auth: user.require_auth,
    user: `${baseUrl}/api/v1/users/${encodeURIComponent(user.username)}`,
  };
}

/** Field order follows onadata's serializer: clients diff these objects. */
export function profileToApi(user: UserRow, baseUrl: string, view: ProfileView): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: user.id,
    is_org: user.is_org,
    url: `${baseUrl}/api/v1/profiles/${encodeURIComponent(user.username)}`,
    username: user.username,
    first_name: user.first_name,
    last_name: user.last_name,
  };
  if (view.includeEmail) body['email'] = user.email;
  Object.assign(body, contactFields(user, baseUrl));
  if (view.includeMetadata) body['metadata'] = user.metadata;
  body['joined_on'] = isoTimestamp(user.date_joined);
  body['name'] = fullName(user);
  return body;
}

export function currentUserToApi(user: UserRow, baseUrl: string, apiToken: string, tempToken: string): Record<string, unknown> {
  return {
    url: `${baseUrl}/api/v1/profiles/${encodeURIComponent(user.username)}`,
    username: user.username,
    name: fullName(user),
    email: user.email,
    ...contactFields(user, baseUrl),
    api_token: apiToken,
    temp_token: tempToken,
  };
}
