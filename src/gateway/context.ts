import type { ConnectionLimits } from '../http/connections.ts';
import type { FastifyServerOptions } from 'fastify';
import type { ExecutionArchive } from '../archive/types.ts';
import type { ChainWorker } from '../chain/types.ts';
import type { ChainName } from '../config/chains.ts';
import type { ProtocolsConfig } from '../protocols/config.ts';
import type { AnyFamily } from '../protocols/index.ts';
import type { ChainPaymentTerms, PaymentSettings } from '../payments/types.ts';
import type { ResourceStore } from '../store/types.ts';
import type { DecisionWaiter } from './decisionWaiter.ts';
import type { WaitSlots } from './waitSlots.ts';
import { fieldError } from '../http/errors.ts';
import type { ExecutionInformer } from './executionInformer.ts';
import type { ApiClientView } from './apiClientView.ts';
import type { ExecutionRequestSpec } from '../api/v1alpha1/index.ts';
import type { PolicyDecision, PriceSource } from '../policy/index.ts';
import type { PolicyView } from './policyView.ts';
import type { RateLimit, RateLimiter } from '../ratelimit/index.ts';
import type { CallbackGuard } from '../lib/egress/egress.ts';

/** What the gateway needs to price requests and answer 402s; the controller's payment policies decide the rest. */
export interface GatewayPayments {
  terms: ReadonlyMap<ChainName, ChainPaymentTerms>;
  settings: PaymentSettings;
  /** 402s carry an x402 PAYMENT-REQUIRED offer (the controller settles x402 payments). */
  x402: boolean;
}

export interface GatewayDeps {
  store: ResourceStore;
  /** Namespace of the service's resources (ApiClients and ExecutionRequests). Default `default`. */
  namespace?: string;
  /** The chains this deployment serves; a payload chain without a worker is answered `unsupported_chain`. */
  workers: ReadonlyMap<ChainName, ChainWorker>;
  /**
   * How the deployment prices and takes payment: each served chain's terms (treasury, accepted tokens, native
   * price), the fee and quote settings, and whether 402s offer x402. Default: no terms (a chain without terms
   * prices nothing and offers no payment), the default settings, no x402.
   */
  payments?: Partial<GatewayPayments>;
  /** The DeFi protocols each chain serves (the `/protocols/...` families). Default: none (every family answers 404). */
  protocols?: ReadonlyMap<ChainName, ProtocolsConfig>;
  /** The protocol families served under `/protocols/...`. Default FAMILIES (src/protocols); tests add their own. */
  families?: readonly AnyFamily[];
  /** Each chain's USD prices (src/policy/prices): POST /policy/evaluate values outflows with them. Default: none (unpriced). */
  prices?: ReadonlyMap<ChainName, PriceSource>;
  /** Per-key limiting of protected endpoints (limits from the key's ApiClient). Default: in-memory buckets. */
  rateLimiter?: RateLimiter;
  /** Finished requests the retention controller deleted: `GET /status/:id` answers from here. Default: none. */
  archive?: ExecutionArchive;
  /** Per-client-address limit of the public endpoints; `false` disables it. Default 20/s, burst 40. */
  publicRateLimit?: RateLimit | false;
  /** How long `POST /execute` waits for the controller's decision. Default 30 s. */
  decisionTimeoutMs?: number;
  /** The open `GET /status/:id` waits per API key in this gateway process; more are 429 too_many_waits. Default 20 per key. */
  statusWaits?: WaitSlots;
  logger?: FastifyServerOptions['logger'];
  /**
   * Log every request and response: 'info' (Fastify's JSON lines, for the cluster roles' log collectors) or
   * 'debug' (one line per request at debug level: `npm start` keeps a newcomer's terminal readable). Default info.
   */
  requestLogLevel?: 'info' | 'debug';
  /** Timeouts and per-address bound of client connections (src/http/connections.ts). Default DEFAULT_CONNECTION_LIMITS. */
  connections?: Partial<ConnectionLimits>;
  /** Largest accepted request body. Default 1 MiB. */
  bodyLimitBytes?: number;
  /** Reported by GET /health. Default: the package version. */
  version?: string;
  /**
   * Refuses a callback_url whose host is or resolves to a private, loopback, link-local or metadata address
   * (400 callback_url_not_allowed). Default: createCallbackGuard() with the system resolver, loopback refused.
   */
  callbackGuard?: CallbackGuard;
}

/** What the route plugins share: the resolved deps plus the gateway's own long-lived parts. */
export interface GatewayContext {
  store: ResourceStore;
  namespace: string;
  workers: ReadonlyMap<ChainName, ChainWorker>;
  payments: GatewayPayments;
  protocols: ReadonlyMap<ChainName, ProtocolsConfig>;
  families: readonly AnyFamily[];
  prices: ReadonlyMap<ChainName, PriceSource>;
  rateLimiter: RateLimiter;
  archive?: ExecutionArchive | undefined;
  publicRateLimit: RateLimit | false;
  decisionTimeoutMs: number;
  version: string;
  startedAt: number;
  informer: ExecutionInformer;
  /** The ApiClients as the gateway's watch has them: authentication reads no store for a known key. */
  apiClients?: ApiClientView;
  /** The AgentPolicies (src/gateway/policyView.ts): the early refusal and GET /policy read them. */
  policies: PolicyView;
  /** Told each early policy decision on a request (the metric, and the log of refusals). */
  onPolicyDecision(spec: Pick<ExecutionRequestSpec, 'apiClient' | 'agentId'>, decision: PolicyDecision): void;
  waiter: DecisionWaiter;
  /** The open status waits of each key (src/gateway/waitSlots.ts). */
  statusWaits: WaitSlots;
  callbackGuard: CallbackGuard;
}

export function workerFor(ctx: GatewayContext, chain: ChainName): ChainWorker {
  const worker = ctx.workers.get(chain);
  if (!worker) throw fieldError('unsupported_chain', 'chain', `${chain} is not served by this deployment`);
  return worker;
}

