// Routes for /api/v1/stats: a schema, an access rule and one service call each.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import * as stats from './service.ts';

export function registerStatsRoutes(app: FastifyInstance): void {
  app.get<{ Params: { pk: string }; Querystring: stats.StatsQuery }>('/api/v1/stats/submissions/:pk', {
    config: { access: 'anyone' },
    schema: {
      tags: ['data'],
      summary: 'Record counts of a form grouped by one field: group=_submission_time (per day), _submitted_by, or an answer',
      description: 'Answers `[{"<name>": value, "count": n}, …]` in value order, for the records the caller may read.',
      params: Type.Object({ pk: Type.String({ description: 'form id' }) }),
      querystring: Type.Object({
        group: Type.Optional(Type.String({ description: 'the field: _submission_time, _submitted_by, or a question path such as grp/colour' })),
        name: Type.Optional(Type.String({ description: 'the key the value has in each answer (default: the group field)' })),
      }),
    },
    handler: (request) => stats.submissionStats(request.ctx, request.params.pk, request.query),
  });
}
