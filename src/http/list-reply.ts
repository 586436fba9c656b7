// Sends a paginated list the onadata way: a page of the array, links in the Link header.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { pageWindow } from '../lib/pages.ts';
import { paginate } from './pagination.ts';
import type { CachedResponse } from './response-cache.ts';

export function sendPage<T>(request: FastifyRequest, reply: FastifyReply, items: readonly T[]): FastifyReply {
  const query = (request.query ?? {}) as Record<string, string | undefined>;
  const { pageItems, link } = paginate(items, pageWindow(query), request.url, request.ctx.baseUrl);
  if (link) reply.header('link', link);
  return reply.send(pageItems);
}

/**
 * Answers a GET from the process's short-lived response cache (see response-cache.ts), or
 * computes the JSON body, sends it and keeps it for the caller's next identical request. An
 * entry past its lifetime is answered once more while a fresh one is computed behind it.
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
  const render = async (): Promise<CachedResponse> => {
    const epoch = cache.epoch;
    const { body, headers = {} } = await compute();
    const response = { body: Buffer.from(JSON.stringify(body)), headers };
    cache.set(key, epoch, ctx.clock.now().getTime(), response);
    return response;
  };
  const found = cache.lookup(key, ctx.clock.now().getTime());
  if (found?.stale && cache.beginRefresh(key)) {
    render()
      .catch((error: unknown) => request.log.warn({ err: error }, 'refreshing a cached response failed'))
      .finally(() => cache.endRefresh(key));
  }
  const response = found?.response ?? (await render());
  return reply.headers(response.headers).type('application/json; charset=utf-8').send(response.body);
}
