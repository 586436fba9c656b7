// Route schemas compiled on a route's first request instead of when the route is registered.
// Fastify compiles every route's validators (Ajv) and response serializers (fast-json-stringify)
// at start; a small server is asked for few of its routes, and the generated functions of the
// rest would stay in the heap for nothing. The price: a broken schema shows at
// the route's first request, not at start, so a test compiles every route's schemas
// (compileAllSchemas, used by test/api/route-schemas.test.ts).
import type { FastifyInstance, FastifySchemaCompiler, FastifySerializerCompiler, FastifyServerOptions } from 'fastify';
import AjvCompiler from '@fastify/ajv-compiler';
import SerializerCompiler from '@fastify/fast-json-stringify-compiler';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type Validator = ReturnType<FastifySchemaCompiler<unknown>>;
type Serializer = ReturnType<FastifySerializerCompiler<unknown>>;
/** What both packages' pool builders return (their own typings describe Ajv's, not Fastify's, call). */
type RouteCompiler<F> = (route: Parameters<FastifySchemaCompiler<unknown>>[0]) => F;
type PoolBuilder<F> = (externalSchemas: unknown, options: unknown) => RouteCompiler<F>;

export interface LazySchemas {
  readonly compilersFactory: CompilersFactory;
  /** Compiles every schema not yet compiled (how many); throws the first error with its route. */
  compileAll(): number;
}

/** `compile`'s result, made on the first call and kept; listed in `pending` until then. */
function onFirstUse<F>(compile: () => F, pending: Set<() => unknown>): () => F {
  let compiled: F | undefined;
  const get = (): F => {
    if (compiled === undefined) {
      compiled = compile();
      pending.delete(get);
    }
    return compiled;
  };
  pending.add(get);
  return get;
}

/** A validator that compiles its schema when first used, and behaves as Ajv's function after. */
function lazyValidator(compile: () => Validator, pending: Set<() => unknown>): Validator {
  const get = onFirstUse(compile, pending);
  const validate = ((data: unknown, context?: unknown) => {
    const inner = get();
    const result = (inner as (data: unknown, context?: unknown) => ReturnType<Validator>)(data, context);
    validate.errors = inner.errors ?? null;
    return result;
  }) as Validator;
  // Fastify gives Ajv's functions the request as the parent of the value (so that a coerced
  // query string or params object can be replaced) when it finds `schemaEnv` on the function.
  Object.defineProperty(validate, 'schemaEnv', { get: () => (get() as Validator & { schemaEnv?: unknown }).schemaEnv });
  return validate;
}

function lazySerializer(compile: () => Serializer, pending: Set<() => unknown>): Serializer {
  const get = onFirstUse(compile, pending);
  return (data: unknown) => get()(data);
}

export function lazySchemas(): LazySchemas {
  const pending = new Set<() => unknown>();
  const ajvPool = AjvCompiler() as unknown as PoolBuilder<Validator>;
  const serializerPool = SerializerCompiler() as unknown as PoolBuilder<Serializer>;
  const named = <F>(route: Parameters<RouteCompiler<F>>[0], compile: RouteCompiler<F>) => (): F => {
    try {
      return compile(route);
    } catch (error) {
      const part = route.httpPart ?? `response ${route.httpStatus ?? ''}`;
      throw new Error(`${route.method} ${route.url}: the ${part} schema does not compile: ${(error as Error).message}`, { cause: error });
    }
  };
  const compilersFactory = {
    buildValidator: (externalSchemas: unknown, options: unknown) => {
      const compile = ajvPool(externalSchemas, options);
      return (route: Parameters<RouteCompiler<Validator>>[0]) => lazyValidator(named(route, compile), pending);
    },
    buildSerializer: (externalSchemas: unknown, options: unknown) => {
      const compile = serializerPool(externalSchemas, options);
      return (route: Parameters<RouteCompiler<Serializer>>[0]) => lazySerializer(named(route, compile), pending);
    },
  } as unknown as CompilersFactory;
  return {
    compilersFactory,
    compileAll() {
      const waiting = [...pending];
      for (const get of waiting) get();
      return waiting.length;
    },
  };
}

const registry = new WeakMap<FastifyInstance, LazySchemas>();

export function rememberLazySchemas(app: FastifyInstance, schemas: LazySchemas): void {
  registry.set(app, schemas);
}

/** Compiles every route schema of `app` not yet compiled, now (how many). */
export function compileAllSchemas(app: FastifyInstance): number {
  const schemas = registry.get(app);
  if (!schemas) throw new Error('this app does not compile its schemas lazily');
  return schemas.compileAll();
}
