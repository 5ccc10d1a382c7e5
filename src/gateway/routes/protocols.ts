import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncZod, ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ExecuteHeadersSchema, ExecutionResultSchema, PaymentRequiredSchema, PaymentVerificationFailedSchema } from '../../api/http/index.ts';
import { effectsOf, effectsSchema, observedReads } from '../../protocols/common/effects.ts';
import { protocolActionOf, withBounds } from '../../protocols/action.ts';
import { SPEC_PROTOCOLS } from '../../protocols/index.ts';
import { familyChain, type ActionEndpoint, type AnyFamily, type ReadEndpoint } from '../../protocols/types.ts';
import type { ChainName } from '../../config/chains.ts';
import { clientOf } from '../auth.ts';
import type { GatewayContext } from '../context.ts';
import { GatewayError } from '../errors.ts';
import { executeAndAnswer, paymentOf, refuseActionByPolicy, requestAskedAgain, simulateExecution, type ExecutionHeaders } from '../execution/index.ts';
import { errorResponses, jsonResponse } from '../../http/openapi.ts';
import { agentContext, protocolContext } from '../protocols/context.ts';
import { availabilityOf } from '../protocols/availability.ts';
import { answering } from '../protocols/errors.ts';

type App = FastifyInstance<never, never, never, never, ZodTypeProvider>;
type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- endpoints of every schema

/** The calls a simulated action would make, as the API takes them (spec 2.4). */
const PlannedCallSchema = z.object({ target_contract: z.string(), calldata: z.string(), value: z.string() });

/** What `.../simulate` of an action answers: the result of POST /simulate, the calls, and what they change. */
export const actionSimulationSchema = (family: AnyFamily) =>
  ExecutionResultSchema.extend({
    calls: z.array(PlannedCallSchema).meta({ description: 'The batch the action executes, approvals included (one UserOperation)' }),
    effects: effectsSchema(family.position),
    bounds: z
      .record(z.string(), z.union([z.string(), z.number()]))
      .optional()
      .meta({
        description:
          'The absolute bounds the plan fixed from relative ones (a minimum received from slippage_bps and the quote, a deadline in unix seconds): ' +
          'sent with the same fields, the action is held to them. Absent where the action has none (lending).',
      }),
    ...(family.preview && {
      preview: family.preview.optional().meta({
        description: 'What the order would do when the protocol’s keeper executes it at the current price (it is only created by this action)',
      }),
    }),
  });

const PAYMENT_402 = jsonResponse(
  'Payment required (spec §2.8), as for POST /execute: pay, then send the same request again with X-Payment-Proof or PAYMENT-SIGNATURE',
  z.union([PaymentRequiredSchema, PaymentVerificationFailedSchema]),
);

/** `lend-b-v3` + `supply/simulate` → `lendBV3SupplySimulate`. */
const operationId = (slug: string, path: string, prefix = '') =>
  (prefix + [...slug.split('-'), ...path.split(/[/-]/)].map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')).replace(/^./, (c) => c.toLowerCase());

/**
 * Every endpoint of every family (src/protocols), generated from the registry: reads as GET, actions as POST with
 * their `.../simulate`, under the spec's slug and under the protocol's own name (an alias, left out of
 * /openapi.json). Actions run the execute flow (src/gateway/execution) exactly as POST /execute does: the same
 * payments and 402, idempotency, status and webhooks. In the protected scope: no key, 401.
 */
export function protocolRoutes(ctx: GatewayContext): FastifyPluginAsyncZod {
  return async (app) => {
    const served = new Map<string, string[]>(); // path → methods, for a 405's Allow
    const serve = (method: string, path: string) => served.set(path, [...(served.get(path) ?? []), method]);
    for (const family of ctx.families) {
      for (const slug of [family.slug, ...family.aliases]) {
        const alias = slug !== family.slug;
        for (const endpoint of family.endpoints) {
          const path = `/protocols/${slug}/${endpoint.path}`;
          if (endpoint.kind === 'read') {
            registerRead(app as unknown as App, ctx, family, slug, alias, endpoint);
            serve(endpoint.method ?? 'GET', path);
          } else {
            registerAction(app as unknown as App, ctx, family, slug, alias, endpoint);
            serve('POST', path);
            serve('POST', `${path}/simulate`);
          }
        }
      }
    }

    // Anything else under /protocols/ with the methods the families use: behind the key like the rest (spec 5.1),
    // then a clear answer. Other methods meet the router's own 405, as on every other path.
    app.route({ method: ['GET', 'POST'], url: '/protocols/*', schema: { hide: true }, handler: async (request) => {
      const path = request.url.split('?')[0]!.replace(/\/+$/, '');
      const methods = served.get(path);
      if (methods) {
        throw new GatewayError(405, 'method_not_allowed', `${request.method} is not allowed on ${path}; allowed: ${methods.join(', ')}`, {
          headers: { allow: methods.join(', ') },
        });
      }
      const slug = path.split('/')[2] ?? '';
      const spec = SPEC_PROTOCOLS.find((p) => p.slug === slug || p.alias === slug);
      if (spec && !ctx.families.some((f) => f.slug === spec.slug)) {
        throw new GatewayError(404, 'protocol_not_served', `${spec.slug} (${spec.protocol}) is not served by this deployment yet`);
      }
      throw new GatewayError(404, 'not_found', `no protocol endpoint ${request.method} ${path}; the served ones are in /openapi.json (tag protocols)`);
    } });
  };
}

function registerRead(app: App, ctx: GatewayContext, family: AnyFamily, slug: string, alias: boolean, endpoint: ReadEndpoint<never, Any, Any, boolean>) {
  const post = endpoint.method === 'POST';
  app.route({
    method: post ? 'POST' : 'GET',
    url: `/protocols/${slug}/${endpoint.path}`,
    schema: {
      hide: alias,
      tags: ['protocols', family.slug],
      operationId: operationId(family.slug, endpoint.path, post ? '' : 'get'),
      summary: `${family.protocol}: ${endpoint.summary}`,
      description: `${endpoint.description}${post ? '\n\nNothing is executed or broadcast: the answer is computed from the chain as it is now.' : ''}${aliasNote(family)}`,
      security: [{ apiKey: [] }],
      ...(post ? { body: endpoint.query } : { querystring: endpoint.query }),
      response: { 200: jsonResponse(endpoint.summary, endpoint.output), ...errorResponses(400, 401, ...(endpoint.agent ? ([403] as const) : []), 404, ...(post ? ([413, 415] as const) : []), 429, 500, 503) },
    },
    handler: async (request) => {
      const q = (post ? request.body : request.query) as { agent_id?: string; chain?: ChainName };
      const chain = familyChain(family, q.chain);
      return answering(family, async () => {
        await availabilityOf(ctx).ensure(family, chain);
        const run = endpoint.run as (c: unknown, q: unknown) => Promise<unknown>;
        if (!endpoint.agent) return run(protocolContext(ctx, family, chain), q);
        return run(await agentContext(ctx, family, chain, clientOf(request), q.agent_id!), q);
      });
    },
  });
}

interface ActionBody {
  agent_id: string;
  chain?: ChainName;
  strategy_id?: string;
  callback_url?: string;
}

function registerAction(app: App, ctx: GatewayContext, family: AnyFamily, slug: string, alias: boolean, endpoint: ActionEndpoint<never, Any>) {
  const path = `/protocols/${slug}/${endpoint.path}`;
  const common = { hide: alias, tags: ['protocols', family.slug], security: [{ apiKey: [] }], body: endpoint.input };
  const planOf = async (request: { body: unknown }, client: ReturnType<typeof clientOf>) => {
    const body = request.body as ActionBody;
    await availabilityOf(ctx).ensure(family, familyChain(family, body.chain));
    const actx = await agentContext(ctx, family, familyChain(family, body.chain), client, body.agent_id);
    return { body, actx, plan: await endpoint.plan(actx, body) };
  };

  app.post(
    path,
    {
      schema: {
        ...common,
        operationId: operationId(family.slug, endpoint.path),
        summary: `${family.protocol}: ${endpoint.summary}`,
        description:
          `${endpoint.description}\n\nRuns as POST /execute does: simulated, then queued (poll GET /status/:id); payments, 402, ` +
          `Idempotency-Key and callback_url as there. Calls that would fail are refused with the protocol's own error decoded (protocol_error).${aliasNote(family)}`,
        headers: ExecuteHeadersSchema,
        response: { 200: jsonResponse('Queued (spec §2.2)', ExecutionResultSchema), 402: PAYMENT_402, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422, 429, 431, 500, 503) },
      },
    },
    async (request, reply) => {
      const client = clientOf(request);
      return answering(family, async () => {
        const body = request.body as ActionBody;
        const headers = request.headers as ExecutionHeaders;
        // What a retry or a paid resend is matched by, and what the request keeps of the caller's ask.
        const asked = protocolActionOf(family, endpoint, body);
        const ask = { agentId: body.agent_id, chain: familyChain(family, body.chain), strategyId: body.strategy_id, callbackUrl: body.callback_url };
        // Asked again (the same Idempotency-Key, or a payment for a waiting request): answered from that request,
        // never planned again, so a retry reaches it whatever its first execution changed.
        const again = await requestAskedAgain(
          ctx,
          client,
          { ...ask, apiClient: client.metadata.name, action: asked, calls: [], batch: false, paymentMode: client.spec.paymentMode },
          { idempotencyKey: headers['idempotency-key'], payment: paymentOf(client, headers['x-payment-proof'], headers['payment-signature']) },
        );
        // Only the very same ask reuses its request's calls: another one (refused as a mismatch downstream) is
        // planned for itself, so no request is ever made with calls that were planned for a different ask.
        const same = again?.spec.action?.inputHash === asked.inputHash ? again : undefined;
        // What the agent's policies refuse whatever the plan: 403 before planning reads the chain (with a payment
        // along, the controller decides: see submitExecution).
        const paying = paymentOf(client, headers['x-payment-proof'], headers['payment-signature']) !== undefined;
        if (!same && !paying) refuseActionByPolicy(ctx, { apiClient: client.metadata.name, agentId: body.agent_id, chain: ask.chain, action: asked });
        const planned = same
          ? { calls: same.spec.calls, action: same.spec.action! }
          : await planOf(request, client).then(({ plan }) => ({ calls: plan.calls, action: withBounds(asked, plan) }));
        return executeAndAnswer(ctx, client, request as never, reply, {
          ...ask,
          calls: planned.calls,
          batch: planned.calls.length > 1,
          action: planned.action,
        });
      });
    },
  );

  app.post(
    `${path}/simulate`,
    {
      schema: {
        ...common,
        operationId: operationId(family.slug, `${endpoint.path}/simulate`),
        summary: `${family.protocol}: simulate ${endpoint.path}, and see what it would change`,
        description:
          `Simulates ${endpoint.path} without broadcasting: gas and cost as POST /simulate answers them, the calls it would make, and its ` +
          `effects: the wallet's token balances before and after, and the position before and after (health factor, borrow capacity, ` +
          `liquidation prices). A call that would fail is refused with the protocol's own error decoded (protocol_error).${aliasNote(family)}`,
        response: { 200: jsonResponse('The simulation and its effects; nothing was broadcast', actionSimulationSchema(family)), ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request) => {
      const client = clientOf(request);
      return answering(family, async () => {
        const { body, actx, plan } = await planOf(request, client);
        const reads = observedReads(actx.wallet, plan.tokens, plan.position);
        const { result, observed } = await simulateExecution(ctx, client, { agentId: body.agent_id, chain: actx.chain, calls: plan.calls }, { observe: reads.map((r) => r.call) });
        return {
          ...result,
          calls: plan.calls.map((c) => ({ target_contract: c.target, calldata: c.data, value: c.value })),
          effects: effectsOf(plan.tokens, plan.position, reads, observed!),
          ...(plan.bounds && { bounds: plan.bounds }),
          ...(plan.preview !== undefined && { preview: plan.preview }),
        };
      });
    },
  );
}

const aliasNote = (family: AnyFamily) =>
  family.aliases.length > 0 ? `\n\nAlso served under /protocols/${family.aliases.join(', /protocols/')}/… (the protocol's own name).` : '';
