// Routes for /api/v1/submissionreview: a schema, an access rule and one service call each.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import * as reviews from './service.ts';
import { createReviewsInput, updateReviewInput } from './inputs.ts';

const IdParams = Type.Object({ pk: Type.String({ description: 'review id' }) });
const Review = Type.Object({}, { additionalProperties: true, description: 'onadata submission review: id, instance, created_by, status, date_created, note, date_modified' });
type Pk = { Params: { pk: string } };

export function registerReviewRoutes(app: FastifyInstance): void {
  app.get<{ Querystring: reviews.ReviewListQuery }>('/api/v1/submissionreview', {
    config: { access: 'anyone', cache: 'private' },
    schema: {
      tags: ['reviews'],
      summary: 'Reviews of the records the caller may read, in id order',
      querystring: Type.Object({
        instance: Type.Optional(Type.String({ description: 'record id' })),
        instance__xform: Type.Optional(Type.String({ description: 'form id' })),
        status: Type.Optional(Type.String({ description: '1 approved, 2 rejected, 3 pending' })),
        created_by: Type.Optional(Type.String({ description: 'reviewer user id' })),
      }),
    },
    handler: (request) => reviews.listReviews(request.ctx, request.query),
  });

  app.post('/api/v1/submissionreview', {
    config: { access: 'authenticated' },
    schema: {
      tags: ['reviews'],
      summary: 'Review a record ({instance, status, note}), or several records with a list; owners and managers of the form',
    },
    handler: async (request, reply) => {
      const created = await reviews.createReviews(request.ctx, createReviewsInput(request.body));
      return reply.code(201).send(created.bulk ? created.items : created.items[0]);
    },
  });

  app.get<Pk>('/api/v1/submissionreview/:pk', {
    config: { access: 'anyone', cache: 'private' },
    schema: { tags: ['reviews'], summary: 'One review', params: IdParams, response: { 200: Review } },
    handler: (request) => reviews.getReview(request.ctx, request.params.pk),
  });

  for (const method of ['PATCH', 'PUT'] as const) {
    app.route<Pk>({
      method,
      url: '/api/v1/submissionreview/:pk',
      config: { access: 'authenticated' },
      schema: { tags: ['reviews'], summary: 'Change a review’s status and/or note (both methods change only what is given)', params: IdParams, response: { 200: Review } },
      handler: (request) => reviews.updateReview(request.ctx, request.params.pk, updateReviewInput(request.body)),
    });
  }

  app.delete<Pk>('/api/v1/submissionreview/:pk', {
    config: { access: 'authenticated' },
    schema: { tags: ['reviews'], summary: 'Delete a review (marked deleted, as onadata does)', params: IdParams },
    handler: async (request, reply) => {
      await reviews.deleteReview(request.ctx, request.params.pk);
      return reply.code(204).send();
    },
  });
}
