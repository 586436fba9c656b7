// Response schemas describe answers in the OpenAPI document (/api/docs); they never reshape them.
// Fastify serialises a route's replies through its response schema, dropping the fields the
// schema does not name and coercing values to the declared types. onadata's bodies are open-ended
// (records carry the form's own fields), so a route whose answer is documented this way replies
// with JSON.stringify, exactly as a route without a response schema does.
import type { FastifySerializerCompiler } from 'fastify';
import { Type, type TSchema } from 'typebox';

export const replyAsWritten: FastifySerializerCompiler<unknown> = () => (data) => JSON.stringify(data);

/** A value or null. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/** An object whose named fields are described; others (a form's own fields) may come too. */
export function OpenObject<P extends Record<string, TSchema>>(properties: P, description: string) {
  return Type.Object(properties, { additionalProperties: true, description });
}
