// Routes for /projects: a schema, an access rule and one service call each.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { readBody } from '../../http/multipart.ts';
import { pageLinks } from '../../http/pagination.ts';
import { errors } from '../../errors.ts';
import * as projects from './service.ts';
import { labelsInput, projectFieldsInput, shareProjectInput } from './inputs.ts';
import { addFormToProject, formsOfProject } from '../forms/project-forms.ts';

const IdParams = Type.Object({ pk: Type.String({ description: 'project id' }) });
const TagParams = Type.Object({ pk: Type.String(), tag: Type.String({ description: 'URL-encoded tag' }) });
const PageQuery = {
  page: Type.Optional(Type.String({ description: 'page number, or `last`' })),
  page_size: Type.Optional(Type.String({ description: 'items per page (default 1000, at most 10000)' })),
};
const Project = Type.Object({}, { additionalProperties: true, description: 'onadata project representation' });
type Pk = { Params: { pk: string } };

const MAX_NESTING = 100;

/**
 * What is wrong with one field's value, if anything: a NUL character (PostgreSQL text cannot hold
 * one) or nesting deeper than MAX_NESTING (it would overflow the stack when stored). Iterative, so
 * a hostile body cannot overflow the stack here either.
 */
function problemIn(root: unknown): string | undefined {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: root, depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, depth } = item;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return 'Null characters are not allowed.';
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_NESTING) return `Nesting deeper than ${MAX_NESTING} levels is not allowed.`;
    for (const [key, inner] of Object.entries(value)) {
      if (key.includes('\u0000')) return 'Null characters are not allowed.';
      stack.push({ value: inner, depth: depth + 1 });
    }
  }
  return undefined;
}

/** DRF refuses NUL characters in text with a 400; without this check they reach the database as a 500. */
async function rejectHostileInput(request: FastifyRequest): Promise<void> {
  for (const source of [request.params, request.query, request.body]) {
    if (typeof source !== 'object' || source === null) continue;
    for (const [key, value] of Object.entries(source)) {
      const problem = key.includes('\u0000') ? 'Null characters are not allowed.' : problemIn(value);
      if (problem !== undefined) throw errors.invalidFields({ [key]: [problem] });
    }
  }
}

export function registerProjectRoutes(app: FastifyInstance): void {
  app.get<{ Querystring: { owner?: string; tags?: string; tag?: string; page?: string; page_size?: string } }>('/api/v1/projects', {
    preHandler: rejectHostileInput,
    config: { access: 'anyone', cache: 'public' },
    schema: {
      tags: ['projects'],
      summary: 'Projects visible to the caller, newest first',
      querystring: Type.Object({
        owner: Type.Optional(Type.String()),
        tags: Type.Optional(Type.String({ description: 'comma-separated; any match' })),
        tag: Type.Optional(Type.String()),
        ...PageQuery,
      }),
    },
    handler: async (request, reply) => {
      const { items, place } = await projects.listProjects(request.ctx, request.query);
      const link = pageLinks(request.ctx.baseUrl, request.url, place);
      if (link) reply.header('link', link);
      return reply.send(items);
    },
  });

  app.post('/api/v1/projects', {
    preHandler: rejectHostileInput,
    config: { access: 'authenticated' },
    schema: {
      tags: ['projects'],
      summary: 'Create a project',
      body: Type.Object({
        name: Type.Optional(Type.String()),
        owner: Type.Optional(Type.Unknown({ description: 'user URL or username; defaults to the caller' })),
        public: Type.Optional(Type.Unknown()),
        metadata: Type.Optional(Type.Unknown()),
      }),
      response: { 201: Project },
    },
    handler: async (request, reply) => reply.code(201).send(await projects.createProject(request.ctx, projectFieldsInput(request.body, true))),
  });

  app.get<Pk>('/api/v1/projects/:pk', {
    preHandler: rejectHostileInput,
    config: { access: 'anyone', cache: 'public' },
    schema: { tags: ['projects'], summary: 'One project', params: IdParams },
    handler: (request) => projects.getProject(request.ctx, request.params.pk),
  });

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route<Pk>({
      method,
      url: '/api/v1/projects/:pk',
      preHandler: rejectHostileInput,
      config: { access: 'authenticated' },
      schema: {
        tags: ['projects'],
        summary: method === 'PUT' ? 'Replace name, owner, public and metadata' : 'Change some fields; metadata is merged',
        params: IdParams,
      },
      handler: (request) => projects.updateProject(request.ctx, request.params.pk, projectFieldsInput(request.body, method === 'PUT'), method === 'PUT'),
    });
  }

  app.delete<Pk>('/api/v1/projects/:pk', {
    preHandler: rejectHostileInput,
    config: { access: 'authenticated' },
    schema: { tags: ['projects'], summary: 'Delete a project and its forms', params: IdParams },
    handler: async (request, reply) => {
      await projects.deleteProject(request.ctx, request.params.pk);
      return reply.code(204).send();
    },
  });

  for (const method of ['PUT', 'POST'] as const) {
    app.route<Pk>({
      method,
      url: '/api/v1/projects/:pk/share',
      preHandler: rejectHostileInput,
      config: { access: 'authenticated' },
      schema: {
        tags: ['projects'],
        summary: 'Share with users (username, comma-separated), or remove them (remove=true)',
        params: IdParams,
        body: Type.Object({
          username: Type.Optional(Type.String()),
          usernames: Type.Optional(Type.String()),
          role: Type.Optional(Type.Unknown()),
          remove: Type.Optional(Type.Unknown()),
          email_msg: Type.Optional(Type.String()),
        }),
      },
      handler: async (request, reply) => {
        await projects.shareProject(request.ctx, request.params.pk, shareProjectInput(request.body));
        return reply.code(204).send();
      },
    });
  }

  app.get<Pk>('/api/v1/projects/:pk/forms', {
    preHandler: rejectHostileInput,
    config: { access: 'anyone', cache: 'public' },
    schema: { tags: ['projects'], summary: 'The project’s forms (full representation)', params: IdParams },
    handler: (request) => formsOfProject(request.ctx, request.params.pk),
  });

  app.post<Pk>('/api/v1/projects/:pk/forms', {
    preHandler: rejectHostileInput,
    config: { access: 'authenticated', upload: true },
    schema: {
      tags: ['projects'],
      summary: 'Publish an XLSForm into the project (multipart xls_file, or xls_url), or move a form in ({formid})',
      params: IdParams,
    },
    handler: async (request, reply) =>
      reply.code(201).send(await addFormToProject(request.ctx, request.params.pk, await readBody(request, request.ctx.config.uploadLimitBytes))),
  });

  for (const prefix of ['/api/v1/projects', '/api/v1/project']) {
    app.get<Pk>(`${prefix}/:pk/labels`, {
      preHandler: rejectHostileInput,
      config: { access: 'anyone', cache: 'public' },
      schema: { tags: ['projects'], summary: 'The project’s tags', params: IdParams },
      handler: (request) => projects.projectLabels(request.ctx, request.params.pk),
    });
    app.post<Pk>(`${prefix}/:pk/labels`, {
      preHandler: rejectHostileInput,
      config: { access: 'authenticated' },
      schema: { tags: ['projects'], summary: 'Add tags (comma- or space-separated `tags`)', params: IdParams },
      handler: async (request, reply) => {
        const result = await projects.addProjectLabels(request.ctx, request.params.pk, labelsInput(request.body));
        return reply.code(result.status).send(result.tags);
      },
    });
    app.delete<{ Params: { pk: string; tag: string } }>(`${prefix}/:pk/labels/:tag`, {
      preHandler: rejectHostileInput,
      config: { access: 'authenticated' },
      schema: { tags: ['projects'], summary: 'Remove a tag: 200 with the rest, 202 if it was not there', params: TagParams },
      handler: async (request, reply) => {
        const result = await projects.removeProjectLabel(request.ctx, request.params.pk, request.params.tag);
        return reply.code(result.status).send(result.tags);
      },
    });
  }

  app.get<{ Params: { username: string } }>('/api/v1/user/:username/starred', {
    config: { access: 'authenticated', cache: 'private' },
    schema: {
      tags: ['projects'],
      summary: 'The projects a user starred (those the caller may see)',
      params: Type.Object({ username: Type.String() }),
    },
    handler: (request) => projects.listStarredProjects(request.ctx, request.params.username),
  });

  app.get<Pk>('/api/v1/projects/:pk/star', {
    preHandler: rejectHostileInput,
    config: { access: 'anyone', cache: 'public' },
    schema: { tags: ['projects'], summary: 'Profiles of the users who starred the project', params: IdParams },
    handler: (request) => projects.listStargazers(request.ctx, request.params.pk),
  });
  for (const [method, starred] of [['POST', true], ['DELETE', false]] as const) {
    app.route<Pk>({
      method,
      url: '/api/v1/projects/:pk/star',
      preHandler: rejectHostileInput,
      config: { access: 'authenticated' },
      schema: { tags: ['projects'], summary: starred ? 'Star the project' : 'Unstar the project', params: IdParams },
      handler: async (request, reply) => {
        await projects.starProject(request.ctx, request.params.pk, starred);
        return reply.code(204).send();
      },
    });
  }
}
