// Sends a paginated list the onadata way: a page of the array, links in the Link header.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { pageWindow, paginate } from './pagination.ts';

export function sendPage<T>(request: FastifyRequest, reply: FastifyReply, items: readonly T[]): FastifyReply {
  const query = (request.query ?? {}) as Record<string, string | undefined>;
  const { pageItems, link } = paginate(items, pageWindow(query), request.url, request.ctx.baseUrl);
  if (link) reply.header('link', link);
  return reply.send(pageItems);
}
