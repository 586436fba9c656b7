// TypeBox schemas for the accounts routes: they validate input and document the API.
import { Type } from 'typebox';

export const UserEntrySchema = Type.Object(
  { id: Type.Integer(), username: Type.String(), first_name: Type.String(), last_name: Type.String() },
  { $id: 'UserEntry' },
);

export const ProfileSchema = Type.Object(
  {
    id: Type.Integer(),
    is_org: Type.Boolean(),
    url: Type.String({ format: 'uri' }),
    username: Type.String(),
    first_name: Type.String(),
    last_name: Type.String(),
    email: Type.Optional(Type.String({ description: 'only for the profile itself and its creator' })),
    city: Type.String(),
    country: Type.String(),
    organization: Type.String(),
    website: Type.String(),
    twitter: Type.String(),
    gravatar: Type.String(),
    require_auth: Type.Boolean(),
    user: Type.String({ format: 'uri' }),
    metadata: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'only for the profile itself' })),
    joined_on: Type.String(),
    name: Type.String(),
  },
  { $id: 'Profile' },
);

export const CurrentUserSchema = Type.Object({
  url: Type.String(),
  username: Type.String(),
  name: Type.String(),
  email: Type.String(),
  city: Type.String(),
  country: Type.String(),
  organization: Type.String(),
  website: Type.String(),
  twitter: Type.String(),
  gravatar: Type.String(),
  require_auth: Type.Boolean(),
  user: Type.String(),
  api_token: Type.String(),
  temp_token: Type.String(),
});

export const RegistrationBody = Type.Object(
  {
    username: Type.Optional(Type.String()),
    first_name: Type.Optional(Type.String()),
    last_name: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    email: Type.Optional(Type.String()),
    password: Type.Optional(Type.String()),
    city: Type.Optional(Type.String()),
    country: Type.Optional(Type.String()),
    organization: Type.Optional(Type.String()),
    website: Type.Optional(Type.String()),
    twitter: Type.Optional(Type.String()),
    require_auth: Type.Optional(Type.Unknown()),
  },
  { description: 'username, first_name (or name), email and password are required' },
);

export const ProfileUpdateBody = Type.Object(
  {
    username: Type.Optional(Type.String()),
    first_name: Type.Optional(Type.String()),
    last_name: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    email: Type.Optional(Type.String({ description: 'needs the current password in `password`' })),
    password: Type.Optional(Type.String({ description: 'current password, to confirm an e-mail change' })),
    city: Type.Optional(Type.String()),
    country: Type.Optional(Type.String()),
    organization: Type.Optional(Type.String()),
    website: Type.Optional(Type.String()),
    twitter: Type.Optional(Type.String()),
    require_auth: Type.Optional(Type.Unknown()),
    metadata: Type.Optional(Type.Unknown({ description: 'object or JSON text; replaces the metadata' })),
    overwrite: Type.Optional(Type.Unknown({ description: '"false" merges `metadata` into the stored metadata' })),
  },
);

export const ChangePasswordBody = Type.Object({
  current_password: Type.Optional(Type.String()),
  new_password: Type.Optional(Type.String()),
});

export const UsernameParams = Type.Object({ username: Type.String({ description: 'username or numeric user id' }) });
