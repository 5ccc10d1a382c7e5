import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyReply } from 'fastify';
import { isObjectName, type ExecutionRequest } from '../../api/v1alpha1/index.ts';
import { ownedBy, ownRequest, requestNotFound } from '../ownRequest.ts';
import { clientOf } from '../auth.ts';
import type { GatewayContext } from '../context.ts';
import { GatewayError } from '../errors.ts';
import { presentStatus } from '../../api/http/presentStatus.ts';
import {
  parseIfNoneMatch,
  preferredWait,
  StatusHeadersSchema,
  StatusParamsSchema,
  StatusQuerySchema,
  StatusRecordSchema,
  type StatusRecord,
} from '../../api/http/index.ts';
import { errorResponses, jsonResponse } from '../../http/openapi.ts';
import { statusEtag } from '../statusEtag.ts';
import { answersAtOnce, namesKnownState, waitForStatusChange, type KnownState } from '../statusWait.ts';


function answer(reply: FastifyReply, request: ExecutionRequest): StatusRecord {
  const record = presentStatus(request);
  reply.header('etag', statusEtag(record));
  return record;
}

export function statusRoutes(ctx: GatewayContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/status/:id',
      {
        schema: {
          tags: ['execution'],
          operationId: 'getStatus',
          summary: 'State of an execution request (source of truth); with a wait, answered when it changes',
          description:
            'Without a wait: the record at once. With `?wait=N` or `Prefer: wait=N` (seconds, at most 30) and the state the caller ' +
            'knows (`known_status`, or the ETag it was given as `If-None-Match`): answered at once if the record is already another ' +
            'or terminal, else on its next change, else after N s with the record as it is (always 200). Open waits per API key are bounded ' +
            '(20 by default; over: 429 too_many_waits). docs/api.md.',
          security: [{ apiKey: [] }],
          params: StatusParamsSchema,
          querystring: StatusQuerySchema,
          headers: StatusHeadersSchema,
          response: {
            200: jsonResponse('The status record (spec §2.3)', StatusRecordSchema),
            ...errorResponses(400, 401, 404, 414, 429, 500, 503),
          },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        if (!isObjectName(id)) throw requestNotFound();
        const client = clientOf(request);
        const owner = client.metadata.name;
        const prefer = request.headers.prefer === undefined ? undefined : preferredWait(request.headers.prefer);
        const seconds = request.query.wait ?? (prefer === 'invalid' ? undefined : prefer); // the schema refused 'invalid'
        if (seconds === undefined) return answer(reply, await ownRequest(ctx, id, client));

        const inm = request.headers['if-none-match'];
        const known: KnownState = { status: request.query.known_status, etags: inm === undefined ? undefined : parseIfNoneMatch(inm) };
        // The cache first (it follows the store within milliseconds). When it has no such object, or would answer at
        // once (possibly only because it is behind the state the caller read elsewhere), the store decides.
        const cached = ctx.informer.get(id);
        if (cached !== undefined && !ownedBy(cached, client)) throw requestNotFound();
        // Nothing known, nothing to wait for: a caller that never saw the record gets it now.
        if (!namesKnownState(known)) return answer(reply, await ownRequest(ctx, id, client));
        reply.header('preference-applied', `wait=${seconds}`);
        const cacheWaits = cached !== undefined && !answersAtOnce(presentStatus(cached), known);
        const initial = cacheWaits ? cached : await ownRequest(ctx, id, client);
        if (seconds === 0 || answersAtOnce(presentStatus(initial), known)) return answer(reply, initial);

        const release = ctx.statusWaits.acquire(owner);
        if (release === undefined) {
          throw new GatewayError(429, 'too_many_waits', `this API key has ${ctx.statusWaits.max} status waits open already; retry when one has answered`, {
            headers: { 'retry-after': '1' },
            details: { retry_after_seconds: 1 },
          });
        }
        // A client that goes away frees its slot and its subscription at once, not when the wait would have ended.
        const gone = new AbortController();
        const onClose = () => {
          if (!reply.raw.writableFinished) gone.abort();
        };
        reply.raw.once('close', onClose);
        try {
          const end = await waitForStatusChange(ctx.informer, id, initial, known, seconds * 1000, gone.signal, !cacheWaits);
          if (end.kind === 'answer') return answer(reply, end.request);
          if (end.kind === 'deleted') return answer(reply, await ownRequest(ctx, id, client));
          return reply.hijack(); // aborted: the socket is gone, nothing to send
        } finally {
          release();
          reply.raw.off('close', onClose);
        }
      },
    );
  };
}
