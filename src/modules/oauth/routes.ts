// Routes under /o/: the OAuth 2 authorization server (django-oauth-toolkit's paths, with and
// without the trailing slash where clients use both) and its HTML pages. These are not DRF
// endpoints: pages answer HTML, and the protocol endpoints answer RFC 6749 JSON errors
// themselves, never through the `{"detail"}` error handler.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { UserRow } from '../accounts/repository.ts';
import { clearSessionCookie, csrfToken, csrfValid, sessionCookie, setSessionCookie } from './cookies.ts';
import { checkAuthorizationRequest, decideAuthorization, issueToken, readParams, revokeToken, type AuthorizationCheck, type EndpointResult } from './grants.ts';
import { applicationsPage, consentPage, errorPage, loginPage, registeredPage, registerPage } from './pages.ts';
import { deleteApplication, listApplications, registerApplication, sessionUser, signIn, signOut, type ApplicationForm } from './service.ts';
import { registerOAuthApplicationRoutes } from './application-routes.ts';

const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";
const HOME = '/o/applications/';

function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', PAGE_CSP)
    .send(body);
}

function redirect(reply: FastifyReply, location: string, status = 302): FastifyReply {
  return reply.code(status).header('location', location).header('cache-control', 'no-store').send();
}

function sendResult(reply: FastifyReply, result: EndpointResult): FastifyReply {
  reply.code(result.status).headers(result.headers);
  return result.body === undefined ? reply.send() : reply.send(result.body);
}

/** Only our own pages are places to go back to after signing in (no open redirect). */
function safeNext(next: string | undefined): string {
  return next && /^\/o\/[^\\]*$/.test(next) && !next.startsWith('//') ? next : HOME;
}

function toLogin(reply: FastifyReply, next: string): FastifyReply {
  return redirect(reply, `/o/login/?next=${encodeURIComponent(next)}`);
}

async function signedInUser(request: FastifyRequest): Promise<UserRow | undefined> {
  return sessionUser(request.ctx, sessionCookie(request));
}

function field(body: unknown, name: string): string | undefined {
  return readParams(body).values[name];
}

function csrfFailed(reply: FastifyReply): FastifyReply {
  return html(reply, 403, errorPage('Forbidden', 'CSRF verification failed: reload the page and try again.'));
}

function clientHeaders(request: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

function answerCheck(request: FastifyRequest, reply: FastifyReply, check: AuthorizationCheck, user: UserRow): FastifyReply {
  switch (check.kind) {
    case 'refused':
      return html(reply, 400, errorPage('Authorization failed', `${check.error}: ${check.description}`, user.username));
    case 'redirect':
      return redirect(reply, check.location);
    case 'consent':
      return html(
        reply,
        200,
        consentPage({ csrf: csrfToken(request, reply), username: user.username, application: check.application, scopes: check.scopes, params: check.params }),
      );
  }
}

export function registerOAuthRoutes(app: FastifyInstance): void {
  registerOAuthApplicationRoutes(app);
  const page = { config: { access: 'anyone' as const }, schema: { hide: true } };

  // ---- signing in to the /o/ pages
  app.get('/o/login/', {
    ...page,
    handler: async (request, reply) => {
      const next = safeNext(readParams(request.query).values['next']);
      return html(reply, 200, loginPage({ csrf: csrfToken(request, reply), next }));
    },
  });

  app.post('/o/login/', {
    ...page,
    handler: async (request, reply) => {
      const next = safeNext(field(request.body, 'next'));
      if (!csrfValid(request, field(request.body, 'csrf_token'))) return csrfFailed(reply);
      const login = field(request.body, 'username') ?? '';
      const result = await signIn(request.ctx, login, field(request.body, 'password') ?? '', request.ctx.ip);
      if (result.ok) {
        setSessionCookie(request, reply, result.session);
        return redirect(reply, next, 303);
      }
      const csrf = csrfToken(request, reply);
      if (result.reason === 'locked') {
        reply.header('retry-after', String(result.retryAfterSeconds));
        const minutes = Math.ceil(result.retryAfterSeconds / 60);
        const error = `Too many failed sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
        return html(reply, 429, loginPage({ csrf, next, login, error }));
      }
      return html(reply, 400, loginPage({ csrf, next, login, error: 'Please enter a correct username and password.' }));
    },
  });

  app.post('/o/logout/', {
    ...page,
    handler: async (request, reply) => {
      if (!csrfValid(request, field(request.body, 'csrf_token'))) return csrfFailed(reply);
      await signOut(request.ctx, sessionCookie(request));
      clearSessionCookie(request, reply);
      return redirect(reply, '/o/login/', 303);
    },
  });

  // ---- authorization endpoint: sign in, consent, redirect with a code or an error
  for (const url of ['/o/authorize', '/o/authorize/']) {
    app.get(url, {
      ...page,
      handler: async (request, reply) => {
        const check = await checkAuthorizationRequest(request.ctx, readParams(request.query));
        if (check.kind === 'refused') return html(reply, 400, errorPage('Authorization failed', `${check.error}: ${check.description}`));
        if (check.kind === 'redirect') return redirect(reply, check.location);
        const user = await signedInUser(request);
        if (!user) return toLogin(reply, request.url);
        return answerCheck(request, reply, check, user);
      },
    });

    app.post(url, {
      ...page,
      handler: async (request, reply) => {
        if (!csrfValid(request, field(request.body, 'csrf_token'))) return csrfFailed(reply);
        const params = readParams(request.body);
        const { csrf_token: _csrf, decision, ...forwarded } = params.values;
        const user = await signedInUser(request);
        if (!user) return toLogin(reply, `/o/authorize/?${new URLSearchParams(forwarded).toString()}`);
        const check = await decideAuthorization(request.ctx, user, { values: forwarded, repeated: params.repeated }, decision === 'allow');
        return answerCheck(request, reply, check, user);
      },
    });
  }

  // ---- token and revocation endpoints (client-authenticated JSON)
  for (const url of ['/o/token', '/o/token/']) {
    app.post(url, {
      config: { access: 'anyone', clientAuthentication: true },
      schema: {
        tags: ['oauth'],
        summary: 'Exchange an authorization code or a refresh token for an access token (RFC 6749 §4.1.3, §6)',
        hide: url.endsWith('/'),
        // No body schema: every failure must be an RFC 6749 error, which the handler writes itself.
        description:
          'Form-encoded: `grant_type`, `code`, `redirect_uri`, `client_id`, `client_secret` (or Basic client credentials), `code_verifier`, `refresh_token`, `scope`.',
      },
      handler: async (request, reply) =>
        sendResult(reply, await issueToken(request.ctx, { headers: clientHeaders(request), params: readParams(request.body) })),
    });
  }

  for (const url of ['/o/revoke_token', '/o/revoke_token/']) {
    app.post(url, {
      config: { access: 'anyone', clientAuthentication: true },
      schema: {
        tags: ['oauth'],
        summary: 'Revoke an access or refresh token (RFC 7009)',
        hide: !url.endsWith('/'),
        description: 'Form-encoded: `token`, `token_type_hint`, `client_id`, `client_secret` (or Basic client credentials).',
      },
      handler: async (request, reply) =>
        sendResult(reply, await revokeToken(request.ctx, { headers: clientHeaders(request), params: readParams(request.body) })),
    });
  }

  // ---- client applications of the signed-in user
  for (const url of ['/o/applications', '/o/applications/']) {
    app.get(url, {
      ...page,
      handler: async (request, reply) => {
        const user = await signedInUser(request);
        if (!user) return toLogin(reply, HOME);
        const applications = await listApplications(request.ctx, user);
        return html(reply, 200, applicationsPage({ csrf: csrfToken(request, reply), username: user.username, applications }));
      },
    });
  }

  app.get('/o/applications/register/', {
    ...page,
    handler: async (request, reply) => {
      const user = await signedInUser(request);
      if (!user) return toLogin(reply, '/o/applications/register/');
      const form: ApplicationForm = { name: '', client_type: 'confidential', authorization_grant_type: 'authorization-code', redirect_uris: '' };
      return html(reply, 200, registerPage({ csrf: csrfToken(request, reply), username: user.username, form, problems: {} }));
    },
  });

  app.post('/o/applications/register/', {
    ...page,
    handler: async (request, reply) => {
      if (!csrfValid(request, field(request.body, 'csrf_token'))) return csrfFailed(reply);
      const user = await signedInUser(request);
      if (!user) return toLogin(reply, '/o/applications/register/');
      const values = readParams(request.body).values;
      const form: ApplicationForm = {
        name: values['name'] ?? '',
        client_type: values['client_type'] ?? '',
        authorization_grant_type: values['authorization_grant_type'] ?? '',
        redirect_uris: values['redirect_uris'] ?? values['redirect_uri'] ?? '',
      };
      const result = await registerApplication(request.ctx, user, form);
      if (!result.ok) {
        return html(reply, 400, registerPage({ csrf: csrfToken(request, reply), username: user.username, form, problems: result.problems }));
      }
      return html(reply, 201, registeredPage({ username: user.username, application: result.application, clientSecret: result.clientSecret }));
    },
  });

  app.post<{ Params: { id: string } }>('/o/applications/:id/delete/', {
    config: { access: 'anyone' },
    schema: { hide: true, params: Type.Object({ id: Type.String() }) },
    handler: async (request, reply) => {
      if (!csrfValid(request, field(request.body, 'csrf_token'))) return csrfFailed(reply);
      const user = await signedInUser(request);
      if (!user) return toLogin(reply, HOME);
      const id = /^\d{1,9}$/.test(request.params.id) ? Number(request.params.id) : undefined;
      if (id === undefined || !(await deleteApplication(request.ctx, user, id))) {
        return html(reply, 404, errorPage('Not found', 'You have no such application.', user.username));
      }
      return redirect(reply, HOME, 303);
    },
  });
}
