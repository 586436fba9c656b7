// Routes for /api/v1/orgs: organisations and their members (onadata's OrganizationProfileViewSet).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import * as orgs from './service.ts';
import { createOrgInput, membersInput, updateOrgInput } from './inputs.ts';

const OrgParams = Type.Object({ org: Type.String({ description: 'organisation username' }) });
const Org = Type.Object({}, { additionalProperties: true, description: 'onadata organisation: url, org, name, email, city, country, website, twitter, gravatar, require_auth, user, creator, users, metadata, …' });
type OrgP = { Params: { org: string } };

export function registerOrgRoutes(app: FastifyInstance): void {
  app.get<{ Querystring: { shared_with?: string } }>('/api/v1/orgs', {
    config: { access: 'anyone', cache: 'private' },
    schema: {
      tags: ['orgs'],
      summary: 'The organisations the caller belongs to (?shared_with=username: those that user belongs to as well)',
      querystring: Type.Object({ shared_with: Type.Optional(Type.String()) }),
    },
    handler: (request) => orgs.listOrganizations(request.ctx, request.query.shared_with),
  });

  app.post('/api/v1/orgs', {
    config: { access: 'authenticated' },
    schema: { tags: ['orgs'], summary: 'Register an organisation: {org, name, email?, city?, country?, website?, twitter?, description?}; the caller is its first owner', response: { 201: Org } },
    handler: async (request, reply) => reply.code(201).send(await orgs.createOrganization(request.ctx, createOrgInput(request.body))),
  });

  app.get<OrgP>('/api/v1/orgs/:org', {
    config: { access: 'anyone', cache: 'private' },
    schema: { tags: ['orgs'], summary: 'One organisation (its members only)', params: OrgParams, response: { 200: Org } },
    handler: (request) => orgs.getOrganization(request.ctx, request.params.org),
  });

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route<OrgP>({
      method,
      url: '/api/v1/orgs/:org',
      config: { access: 'authenticated' },
      schema: { tags: ['orgs'], summary: 'Change the organisation’s profile fields (owners)', params: OrgParams, response: { 200: Org } },
      handler: (request) => orgs.updateOrganization(request.ctx, request.params.org, updateOrgInput(request.body)),
    });
  }

  app.get<OrgP>('/api/v1/orgs/:org/members', {
    config: { access: 'anyone', cache: 'private' },
    schema: { tags: ['orgs'], summary: 'The members’ usernames', params: OrgParams },
    handler: (request) => orgs.listMembers(request.ctx, request.params.org),
  });

  for (const method of ['POST', 'PUT', 'DELETE'] as const) {
    app.route<OrgP & { Querystring: Record<string, string | undefined> }>({
      method,
      url: '/api/v1/orgs/:org/members',
      config: { access: 'authenticated' },
      schema: {
        tags: ['orgs'],
        summary:
          method === 'POST'
            ? 'Add a member: {username, role?} (role member by default; owner, manager, editor, dataentry, readonly…) (owners)'
            : method === 'PUT'
              ? 'Change a member’s role: {username, role} (owners)'
              : 'Remove a member: {username} in the body or the query (owners)',
        params: OrgParams,
      },
      handler: async (request, reply) => {
        const members = await orgs.changeMembers(request.ctx, request.params.org, method, membersInput(method, request.query, request.body));
        return reply.code(method === 'POST' ? 201 : 200).send(members);
      },
    });
  }
}
