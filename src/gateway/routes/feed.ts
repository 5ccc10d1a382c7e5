import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { GatewayContext } from '../context.ts';
import { FeedQuerySchema, FeedSchema } from '../../api/http/index.ts';
import { errorResponses, jsonResponse } from '../../http/openapi.ts';
import { presentFeedItem } from '../presenters.ts';
import { GatewayError } from '../errors.ts';

const SYNC_WAIT_MS = 2_000;

export function feedRoutes(ctx: GatewayContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/feed/recent',
      {
        schema: {
          tags: ['public'],
          operationId: 'getRecentExecutions',
          summary: 'Recent executions across all keys, newest first, without anything that identifies a tenant',
          querystring: FeedQuerySchema,
          response: { 200: jsonResponse('Recent executions, newest first', FeedSchema), ...errorResponses(400, 429, 500, 503) },
        },
      },
      async (request) => {
        if (!ctx.informer.synced) {
          let timer: NodeJS.Timeout | undefined;
          const synced = await Promise.race([
            ctx.informer.waitForSync().then(() => true),
            new Promise<false>((r) => (timer = setTimeout(() => r(false), SYNC_WAIT_MS))),
          ]);
          clearTimeout(timer);
          if (!synced) {
            throw new GatewayError(503, 'store_unavailable', 'recent executions are not available yet; retry shortly', {
              headers: { 'retry-after': '1' },
            });
          }
        }
        return { executions: ctx.informer.recent(request.query.limit).map(presentFeedItem) };
      },
    );
  };
}
