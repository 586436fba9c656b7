// Routes for /users, /user and /profiles: a schema, an access rule and one service call each.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import * as accounts from './service.ts';
import { passwordChangeInput, registrationInput, updateProfileInput } from './inputs.ts';
import { expireTempToken, regenerateApiToken } from '../auth/service.ts';
import { requireUser } from '../../access/index.ts';
import {
  ChangePasswordBody,
  CurrentUserSchema,
  ProfileSchema,
  ProfileUpdateBody,
  RegistrationBody,
  UserEntrySchema,
  UsernameParams,
} from './schemas.ts';

// fast-json-stringify writes required properties before optional ones; a profile's optional
// email and metadata sit mid-object in onadata's field order, so nothing is marked required.
const { required: _required, ...profileWithoutRequired } = ProfileSchema;
const Profile = Type.Unsafe<Record<string, unknown>>(profileWithoutRequired);

export function registerAccountRoutes(app: FastifyInstance): void {
  // ---- users
  app.get<{ Querystring: { orgs?: string; search?: string } }>('/api/v1/users', {
    config: { access: 'authenticated', cache: 'public' },
    schema: {
      tags: ['users'],
      summary: 'List active users',
      querystring: Type.Object({
        orgs: Type.Optional(Type.String({ description: '`false` leaves out organisations' })),
        search: Type.Optional(Type.String({ description: 'exact e-mail or part of a username' })),
      }),
      response: { 200: Type.Array(UserEntrySchema) },
    },
    handler: (request) => accounts.listUsers(request.ctx, request.query),
  });

  app.get<{ Params: { username: string } }>('/api/v1/users/:username', {
    config: { access: 'authenticated', cache: 'public' },
    schema: { tags: ['users'], summary: 'One user by username or id', params: UsernameParams, response: { 200: UserEntrySchema } },
    handler: (request) => accounts.getUser(request.ctx, request.params.username),
  });

  // ---- the current user
  app.get('/api/v1/user', {
    config: { access: 'authenticated', cache: 'private' },
    schema: { tags: ['user'], summary: 'The current user with api_token and temp_token', response: { 200: CurrentUserSchema } },
    handler: (request) => accounts.currentUser(request.ctx),
  });

  app.post('/api/v1/user', {
    config: { access: 'authenticated' },
    schema: { tags: ['user'], summary: 'The current user with api_token and temp_token', response: { 201: CurrentUserSchema } },
    handler: async (request, reply) => reply.code(201).send(await accounts.currentUser(request.ctx)),
  });

  app.delete('/api/v1/user/expire', {
    config: { access: 'authenticated' },
    schema: { tags: ['user'], summary: 'Expire the temporary token' },
    handler: async (request, reply) => {
      await expireTempToken(request.ctx, requireUser(request.ctx.actor).id);
      return reply.code(204).send();
    },
  });

  app.get('/api/v1/user/regenerate_auth_token', {
    config: { access: 'authenticated' },
    schema: { tags: ['user'], summary: 'Replace the API token; answers the new key as a JSON string' },
    handler: async (request, reply) =>
      reply.code(201).send(JSON.stringify(await regenerateApiToken(request.ctx, requireUser(request.ctx.actor).id))),
  });

  // ---- profiles
  app.post('/api/v1/profiles', {
    config: { access: 'anyone' },
    schema: { tags: ['profiles'], summary: 'Register an account', body: RegistrationBody, response: { 201: Profile } },
    handler: async (request, reply) => reply.code(201).send(await accounts.registerProfile(request.ctx, registrationInput(request.body))),
  });

  app.get<{ Querystring: { users?: string; ordering?: string } }>('/api/v1/profiles', {
    config: { access: 'anyone', cache: 'public' },
    schema: {
      tags: ['profiles'],
      summary: 'Your profile, or the profiles of `users`',
      querystring: Type.Object({
        users: Type.Optional(Type.String({ description: 'comma-separated usernames' })),
        ordering: Type.Optional(Type.String({ description: 'a profile field to sort by (username, first_name, last_name, city, country, organization, joined_on), `-` first for descending' })),
      }),
      response: { 200: Type.Array(Profile) },
    },
    handler: (request) => accounts.listProfiles(request.ctx, request.query.users, request.query.ordering),
  });

  app.get<{ Params: { username: string } }>('/api/v1/profiles/:username', {
    config: { access: 'authenticated', cache: 'public' },
    schema: { tags: ['profiles'], summary: 'One profile by username or user id', params: UsernameParams, response: { 200: Profile } },
    handler: (request) => accounts.getProfile(request.ctx, request.params.username),
  });

  for (const method of ['PATCH', 'PUT'] as const) {
    app.route<{ Params: { username: string } }>({
      method,
      url: '/api/v1/profiles/:username',
      config: { access: 'authenticated' },
      schema: {
        tags: ['profiles'],
        summary: method === 'PATCH' ? 'Change some profile fields' : 'Replace the profile fields',
        params: UsernameParams,
        body: ProfileUpdateBody,
      },
      handler: async (request) => {
        const result = await accounts.updateProfile(request.ctx, request.params.username, updateProfileInput(request.body, method === 'PUT'), method === 'PUT');
        return result.body;
      },
    });
  }

  for (const prefix of ['/api/v1/profiles', '/api/v1/profile']) {
    app.post<{ Params: { username: string } }>(`${prefix}/:username/change_password`, {
      config: { access: 'authenticated' },
      schema: {
        tags: ['profiles'],
        summary: 'Change your password; answers new tokens',
        params: UsernameParams,
        body: ChangePasswordBody,
        response: { 200: Type.Object({ username: Type.String(), access_token: Type.String(), temp_token: Type.String() }) },
      },
      handler: (request) => accounts.changePassword(request.ctx, request.params.username, passwordChangeInput(request.body)),
    });
  }

  app.get<{ Params: { username: string }; Querystring: { month?: string; year?: string } }>(
    '/api/v1/profiles/:username/monthly_submissions',
    {
      config: { access: 'authenticated' },
      schema: {
        tags: ['profiles'],
        summary: 'Submissions this month to the account’s public and private forms',
        params: UsernameParams,
        querystring: Type.Object({ month: Type.Optional(Type.String()), year: Type.Optional(Type.String()) }),
        response: { 200: Type.Object({ public: Type.Optional(Type.Integer()), private: Type.Optional(Type.Integer()) }) },
      },
      handler: (request) => accounts.monthlySubmissions(request.ctx, request.params.username, request.query),
    },
  );
}
