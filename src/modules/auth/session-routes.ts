// /api/v1/session: the web app's sign-in. It answers who the caller is and the CSRF token the app
// sends back as X-CSRFToken; signing in checks the password through the same lockout as Basic and
// sets the same sealed, HttpOnly session cookie as the /o/login/ page (never a token a script can read).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { errors } from '../../errors.ts';
import { isAuthenticated } from '../../access/principal.ts';
import type { UserRow } from '../accounts/repository.ts';
import { userToApi } from '../accounts/to-api.ts';
import { clearSessionCookie, csrfToken, sessionCookie, setSessionCookie } from '../oauth/cookies.ts';
import { signIn, signOut } from '../oauth/service.ts';
import { checkCsrf } from '../../http/session-auth.ts';

const SessionUser = Type.Object({ id: Type.Integer(), username: Type.String(), first_name: Type.String(), last_name: Type.String() });

const SessionSchema = Type.Object({
  user: Type.Union([SessionUser, Type.Null()], { description: 'the caller, or null when signed out' }),
  csrf_token: Type.String({ description: 'send it as the X-CSRFToken header with every POST, PUT, PATCH and DELETE made with the session cookie' }),
  registration_open: Type.Boolean({ description: 'whether POST /api/v1/profiles takes anonymous registrations (DISABLE_CREATING_USERS)' }),
  map_tile_url: Type.String({ description: 'the tile address template the data map draws (MAP_TILE_URL, with {z}, {x} and {y}); empty: no tiles' }),
});

const SignInBody = Type.Object({
  username: Type.String({ description: 'username or e-mail address' }),
  password: Type.String(),
});

const COOKIE_NOTE =
  'The session is the HttpOnly cookie `gather_session`, shared with the /o/ pages. Requests it authenticates must come from this site: unsafe methods need an `X-CSRFToken` header equal to `csrf_token` and no foreign `Origin`.';

function answer(request: FastifyRequest, reply: FastifyReply, user: UserRow | undefined, status = 200): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .send({ user: user ? userToApi(user) : null, csrf_token: csrfToken(request, reply), registration_open: !request.ctx.config.disableCreatingUsers, map_tile_url: request.ctx.config.mapTileUrl });
}

function attemptOf(request: FastifyRequest) {
  return { method: request.method, uri: request.originalUrl, headers: request.headers, baseUrl: request.ctx.baseUrl };
}

export function registerSessionRoutes(app: FastifyInstance): void {
  app.get('/api/v1/session', {
    config: { access: 'anyone' },
    schema: {
      tags: ['session'],
      summary: 'The caller (null when signed out), the CSRF token for session requests, and whether registration is open',
      description: COOKIE_NOTE,
      response: { 200: SessionSchema },
    },
    handler: async (request, reply) => answer(request, reply, isAuthenticated(request.ctx.actor) ? request.ctx.actor.user : undefined),
  });

  app.post('/api/v1/session', {
    config: { access: 'anyone' },
    schema: {
      tags: ['session'],
      summary: 'Sign in with a username (or e-mail) and password: sets the session cookie',
      description: `${COOKIE_NOTE} Signing in needs the CSRF token too (GET this path first). Failed attempts count towards the same lockout as Basic and Digest (429 with Retry-After).`,
      body: SignInBody,
      response: { 201: SessionSchema },
    },
    handler: async (request, reply) => {
      // No session yet, so the authenticator has not checked: a foreign page must not sign a browser in.
      checkCsrf(attemptOf(request));
      const { username, password } = request.body as { username: string; password: string };
      const result = await signIn(request.ctx, username, password, request.ctx.ip);
      if (result.ok) {
        setSessionCookie(request, reply, result.session);
        return answer(request, reply, result.user, 201);
      }
      if (result.reason === 'locked') throw errors.throttled(result.retryAfterSeconds);
      throw errors.loginFailed();
    },
  });

  app.delete('/api/v1/session', {
    config: { access: 'anyone' },
    schema: { tags: ['session'], summary: 'Sign out: clears the session cookie', description: COOKIE_NOTE },
    handler: async (request, reply) => {
      checkCsrf(attemptOf(request));
      await signOut(request.ctx, sessionCookie(request));
      clearSessionCookie(request, reply);
      return reply.code(204).header('cache-control', 'no-store').send();
    },
  });
}
