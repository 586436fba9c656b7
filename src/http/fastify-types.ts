// Request decorations and per-route settings that every route declares.
import type { RouteAccess } from '../access/index.ts';
import type { RequestContext } from '../context.ts';

export type CachePolicy = 'public' | 'private' | 'none';

declare module 'fastify' {
  interface FastifyRequest {
    ctx: RequestContext;
  }
  interface FastifyContextConfig {
    /** Who may call the route; a route without one cannot be registered. */
    access?: RouteAccess;
    /** Cache-Control on successful GETs (onadata's CacheControlMixin viewsets). */
    cache?: CachePolicy;
    /** Set on the generated 405 routes, which must not count as allowed methods. */
    methodNotAllowed?: boolean;
    /** The handler reads a multipart body itself (file uploads); other routes get its fields as their body. */
    upload?: boolean;
    /** The OPTIONS answer of a path (its Allow header and a description), added for every path. */
    optionsRoute?: boolean;
    /** OpenRosa endpoints (ODK Collect, Enketo): OpenRosa headers, and errors as OpenRosa XML. */
    openrosa?: boolean;
    /**
     * The route reads the Authorization header itself (OAuth client credentials at /o/token):
     * the user authenticators leave it alone and the caller is anonymous.
     */
    clientAuthentication?: boolean;
    /**
     * The route also accepts `?temp_token=<key>` when no Authorization header authenticated the
     * request (onadata's TempTokenURLParameterAuthentication, on its export viewset only).
     */
    urlTempToken?: boolean;
  }
}

export {};
