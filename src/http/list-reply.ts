// Sends a paginated list the onadata way: a page of the array, links in the Link header.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { pageWindow, paginate } from './pagination.ts';

export function sendPage<T>(request: FastifyRequest, reply: FastifyReply, items: readonly T[]): FastifyReply {
  const query = (request.query ?? {}) as Record<string, string | undefined>;
  const { pageItems, link } = paginate(items, pageWindow(query), request.url, request.ctx.baseUrl);
  if (link) reply.header('link', link);
  return reply.send(pageItems);
}

/**
 * Answers a GET from the process's short-lived response cache (see response-cache.ts), or
 * computes the JSON body, sends it and keeps it for the caller's next identical request.
 */
export async function sendCachedJson(
  request: FastifyRequest,
  reply: FastifyReply,
  compute: () => Promise<{ body: unknown; headers?: Record<string, string> }>,
): Promise<FastifyReply> {
  const { ctx } = request;
  const cache = ctx.responseCache;
  const who = ctx.actor.kind === 'user' ? `u${ctx.actor.user.id}` : 'anonymous';
  const key = `${who} ${ctx.baseUrl}${request.url}`;
  const hit = cache.get(key, ctx.clock.now().getTime());
  if (hit) return reply.headers(hit.headers).type('application/json; charset=utf-8').send(hit.body);
  const epoch = cache.epoch;
  const { body, headers = {} } = await compute();
  const text = JSON.stringify(body);
  cache.set(key, epoch, ctx.clock.now().getTime(), { body: text, headers });
  return reply.headers(headers).type('application/json; charset=utf-8').send(text);
}
