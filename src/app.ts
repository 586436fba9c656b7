// buildApp(deps): the Fastify instance with plugins, conventions and every module's routes,
// registered explicitly in one place.
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import cors from '@fastify/cors';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { AppDeps } from './context.ts';
import { installConventions, stripFormatSuffix } from './http/conventions.ts';
import { AuthenticatorRegistry } from './http/authenticate.ts';
import type { CredentialChecks } from './http/credentials.ts';
import { installBodyIdleTimeout, serverTimeoutOptions } from './http/timeouts.ts';
import { installSessionReplies } from './http/session-auth.ts';
import { checkApiToken, checkPassword, checkTempToken } from './modules/auth/service.ts';
import { digestChecker } from './modules/auth/digest-service.ts';
import { checkBearerToken, sessionUser } from './modules/oauth/service.ts';
import { registerWebAppRoutes } from './http/web-app.ts';
import { WEB_FORM_PAGES } from './modules/webforms/urls.ts';
import { registerSessionRoutes } from './modules/auth/session-routes.ts';
import { registerAccountRoutes } from './modules/accounts/routes.ts';
import { registerMetaRoutes } from './modules/meta/routes.ts';
import { registerProjectRoutes } from './modules/projects/routes.ts';
import { registerFormRoutes } from './modules/forms/routes.ts';
import { registerOpenRosaRoutes } from './modules/openrosa/routes.ts';
import { registerDataRoutes, registerSubmissionRoutes } from './modules/submissions/routes.ts';
import { registerOAuthRoutes } from './modules/oauth/routes.ts';
import { registerExportJobRoutes } from './modules/exports/routes.ts';
import { registerImportRoutes } from './modules/imports/routes.ts';
import { registerReviewRoutes } from './modules/reviews/routes.ts';
import { registerMetadataRoutes } from './modules/metadata/routes.ts';
import { registerWebFormRoutes } from './modules/webforms/routes.ts';
import { registerOrgRoutes } from './modules/orgs/routes.ts';
import { registerRestServiceRoutes } from './modules/restservices/routes.ts';
import { registerBriefcaseRoutes } from './modules/briefcase/routes.ts';
import { registerODataRoutes } from './modules/odata/routes.ts';
import { registerStatsRoutes } from './modules/stats/routes.ts';
import { lazySchemas, rememberLazySchemas } from './http/lazy-schemas.ts';

export interface BuildOptions {
  logger?: boolean | { level: string };
}

export async function buildApp(deps: AppDeps, options: BuildOptions = {}): Promise<FastifyInstance> {
  const schemas = lazySchemas();
  const app = Fastify({
    logger: options.logger ?? false,
    schemaController: { compilersFactory: schemas.compilersFactory },
    // Per-request log lines are info level; above it, they are not produced at all.
    logController: new LogController({
      disableRequestLogging: typeof options.logger !== 'object' || !['info', 'debug', 'trace'].includes(options.logger.level),
    }),
    bodyLimit: deps.config.bodyLimitBytes,
    rewriteUrl: (request) => stripFormatSuffix(request.url ?? '/'),
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: true } },
    exposeHeadRoutes: true,
    return503OnClosing: true,
    ...serverTimeoutOptions(deps.config),
  });
  rememberLazySchemas(app, schemas);
  // Before authentication: the body's clock starts as soon as its headers are in.
  installBodyIdleTimeout(app, deps.config.bodyIdleTimeoutMs);

  // DRF parses JSON, form-encoded and multipart bodies; anything else is a 415.
  app.removeContentTypeParser('text/plain');
  await app.register(formbody);
  await app.register(multipart, { limits: { fileSize: deps.config.uploadLimitBytes, files: 10, fields: 100 } });
  await app.register(cors, {
    origin: deps.config.corsOrigins === '*' ? '*' : [...deps.config.corsOrigins],
    methods: ['DELETE', 'GET', 'OPTIONS', 'PATCH', 'POST', 'PUT'],
    allowedHeaders: ['accept', 'authorization', 'content-type', 'user-agent', 'x-csrftoken', 'x-requested-with'],
    exposedHeaders: ['link', 'etag', 'allow'],
    credentials: false,
    maxAge: 86400,
    optionsSuccessStatus: 200,
    // Every OPTIONS reaches its path's own route (Allow and a description, as DRF answers); a
    // preflight collects the CORS headers on the way instead of being answered in the hook.
    strictPreflight: false,
    preflightContinue: true,
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Gather API', version: '1', description: 'Survey data collection, compatible with onadata’s API v1.' },
      components: {
        securitySchemes: {
          basic: { type: 'http', scheme: 'basic' },
          token: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`Token <api_token>` or `TempToken <temp_token>`' },
          bearer: { type: 'http', scheme: 'bearer', description: 'an OAuth 2 access token from /o/token' },
          session: { type: 'apiKey', in: 'cookie', name: 'gather_session', description: 'the browser session from POST /api/v1/session (writes need X-CSRFToken)' },
        },
      },
      security: [{ basic: [] }, { token: [] }, { bearer: [] }, { session: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs', staticCSP: true });

  installConventions(app, deps, new AuthenticatorRegistry(deps, credentialChecks(deps)));
  installSessionReplies(app);
  registerMetaRoutes(app);
  registerAccountRoutes(app);
  registerProjectRoutes(app);
  registerFormRoutes(app);
  registerOpenRosaRoutes(app);
  registerBriefcaseRoutes(app);
  registerSubmissionRoutes(app);
  registerDataRoutes(app);
  registerODataRoutes(app);
  registerStatsRoutes(app);
  registerImportRoutes(app);
  registerReviewRoutes(app);
  registerMetadataRoutes(app);
  registerWebFormRoutes(app);
  registerOrgRoutes(app);
  registerRestServiceRoutes(app);
  registerOAuthRoutes(app);
  registerExportJobRoutes(app);
  registerSessionRoutes(app);
  registerWebAppRoutes(app, WEB_FORM_PAGES);
  app.addMethodNotAllowedRoutes();
  return app;
}

/** The auth and OAuth modules' credential checks, handed to src/http's authenticators. */
function credentialChecks(deps: AppDeps): CredentialChecks {
  return {
    apiToken: checkApiToken,
    tempToken: checkTempToken,
    password: checkPassword,
    bearerToken: checkBearerToken,
    sessionUser,
    digest: digestChecker(deps),
  };
}
