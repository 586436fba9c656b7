// The account page's calls: the profile, the password, the API token and OAuth applications.
import { call } from '../api.ts';

export interface Profile {
  id: number;
  username: string;
  first_name: string;
  last_name: string;
  email?: string;
  city: string;
  country: string;
  organization: string;
  website: string;
  twitter: string;
  require_auth: boolean;
  joined_on: string;
}

export type ProfileChanges = Partial<Pick<Profile, 'first_name' | 'last_name' | 'email' | 'city' | 'country' | 'organization' | 'website' | 'twitter' | 'require_auth'>> & {
  /** The current password, which an e-mail change needs. */
  password?: string;
};

export interface CurrentUser {
  username: string;
  api_token: string;
}

export interface OAuthApplication {
  id: number;
  name: string;
  client_id: string;
  client_type: string;
  authorization_grant_type: string;
  redirect_uris: string;
  created: string;
}

export interface NewOAuthApplication extends OAuthApplication {
  client_secret: string | null;
}

const profilePath = (username: string): string => `/profiles/${encodeURIComponent(username)}`;

export const accountApi = {
  profile: (username: string) => call<Profile>('GET', profilePath(username)),
  updateProfile: (username: string, changes: ProfileChanges) => call<Profile>('PATCH', profilePath(username), { ...changes }),
  /** Ends every session of the account (the caller signs in again with the new password). */
  changePassword: (username: string, currentPassword: string, newPassword: string) =>
    call<{ username: string }>('POST', `${profilePath(username)}/change_password`, { current_password: currentPassword, new_password: newPassword }),
  currentUser: () => call<CurrentUser>('GET', '/user'),
  /** The new token; the old one stops working at once. */
  regenerateToken: () => call<string>('GET', '/user/regenerate_auth_token'),
  oauthApplications: () => call<OAuthApplication[]>('GET', '/user/oauth_applications'),
  createOAuthApplication: (fields: { name: string; client_type: string; redirect_uris: string }) =>
    call<NewOAuthApplication>('POST', '/user/oauth_applications', fields),
  deleteOAuthApplication: (id: number) => call<void>('DELETE', `/user/oauth_applications/${id}`),
};
