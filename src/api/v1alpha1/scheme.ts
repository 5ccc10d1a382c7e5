import type { z } from 'zod';
import { AgentPolicySchema } from './agentPolicy.ts';
import { ApiClientSchema } from './apiClient.ts';
import { ExecutionRequestSchema } from './executionRequest.ts';
import type { ResourceByKind } from './index.ts';
import { KINDS, type Kind } from './meta.ts';
import { PaymentReceiptSchema } from './paymentReceipt.ts';

/**
 * The scheme: everything the service knows about each kind, in one table, as client-go's runtime.Scheme is.
 * Both store backends validate and decode with `schema`, the kube store builds REST paths from `plural`, and the
 * CRDs (crd/definitions.ts) are rendered from all of it. A new kind is one entry here.
 */

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  /** 0: always shown; 1: only with `kubectl get -o wide`. */
  priority?: number;
}

export interface KindDefinition<K extends Kind = Kind> {
  kind: K;
  /** Validates (applying defaults) and types the kind; a ZodObject so the CRD's structural schema can be rendered. */
  schema: z.ZodObject & z.ZodType<ResourceByKind[K]>;
  /** The REST collection name (`executionrequests`), as the API server and the CRD call it. */
  plural: string;
  description: string;
  /** Checked against the short names of the built-in resources of kube-apiserver 1.30 in crd.test.ts. */
  shortNames: string[];
  columns: PrinterColumn[];
}

const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export const SCHEME: { readonly [K in Kind]: KindDefinition<K> } = {
  ExecutionRequest: {
    kind: 'ExecutionRequest',
    plural: 'executionrequests',
    schema: ExecutionRequestSchema,
    description:
      'One execute call of an agent: the calls to run through its smart wallet on one chain. ' +
      'Controllers advance status.phase through payment, signing, submission and inclusion.',
    shortNames: ['exr'],
    columns: [
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      {
        name: 'Reason',
        type: 'string',
        // The Succeeded condition's reason rather than status.failure.code: it says something at every phase —
        // what the request waits for (AwaitingPayment, Queued, Broadcasting), or why it ended (Confirmed,
        // Reverted, or the failure code in CamelCase such as SimulationReverted).
        jsonPath: '.status.conditions[?(@.type=="Succeeded")].reason',
        description: 'Reason of the Succeeded condition: what the request waits for, or why it ended.',
        priority: 1,
      },
      { name: 'Chain', type: 'string', jsonPath: '.spec.chain' },
      { name: 'Agent', type: 'string', jsonPath: '.spec.agentId' },
      { name: 'Action', type: 'string', jsonPath: '.spec.action.name', description: 'The protocol action it was made with (empty for POST /execute).' },
      {
        name: 'Order',
        type: 'string',
        jsonPath: '.status.order.state',
        description: 'What a keeper did to the order it created (perp-v2): Pending, Executed, Cancelled or Frozen; empty for other actions.',
      },
      { name: 'Client', type: 'string', jsonPath: '.spec.apiClient', description: 'The ApiClient (API key id).', priority: 1 },
      { name: 'Tx', type: 'string', jsonPath: '.status.txHash', description: 'Hash of the bundle transaction that included it.' },
      { name: 'Wallet', type: 'string', jsonPath: '.status.smartWalletAddress', priority: 1 },
      {
        name: 'Webhook',
        type: 'string',
        // The newest event's: events are delivered in order, so the earlier ones are final once it is. Empty: no
        // callback_url, no event yet, or its first attempt has not started.
        jsonPath: '.status.webhookEvents[-1:].state',
        description: "Delivery of the request's newest webhook event: Sending, Retrying, Delivered, Gone or Abandoned.",
        priority: 1,
      },
      {
        name: 'Attempts',
        type: 'integer',
        jsonPath: '.status.webhookEvents[-1:].attempts',
        description: "Delivery attempts of the request's newest webhook event so far.",
        priority: 1,
      },
      AGE,
    ],
  },
  ApiClient: {
    kind: 'ApiClient',
    plural: 'apiclients',
    schema: ApiClientSchema,
    description:
      "An API key's tenant. The name is the key id; only the sha256 of the key's secret is stored.",
    shortNames: ['awclient'],
    columns: [
      { name: 'Display', type: 'string', jsonPath: '.spec.displayName' },
      { name: 'Mode', type: 'string', jsonPath: '.spec.paymentMode', description: 'Payment mode: manual, auto or sponsored.' },
      { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled', description: 'False once the key is revoked.' },
      { name: 'RPS', type: 'number', jsonPath: '.spec.limits.requestsPerSecond', priority: 1 },
      { name: 'Burst', type: 'integer', jsonPath: '.spec.limits.burst', priority: 1 },
      { name: 'Rotated', type: 'date', jsonPath: '.status.rotatedAt', priority: 1 },
      {
        name: 'Webhook-Secret',
        type: 'string',
        jsonPath: '.spec.webhookSigning.current.secretRef',
        description: 'Reference (a Secret name in a cluster) of the secret that signs its webhooks; never the secret.',
        priority: 1,
      },
      AGE,
    ],
  },
  PaymentReceipt: {
    kind: 'PaymentReceipt',
    plural: 'paymentreceipts',
    schema: PaymentReceiptSchema,
    description:
      'One accepted payment transaction. Named after (chain, tx hash), so creating it is what makes a ' +
      'payment proof single-use: a second create fails with AlreadyExists. Do not delete receipts.',
    shortNames: ['awreceipt'],
    columns: [
      { name: 'Chain', type: 'string', jsonPath: '.spec.chain' },
      { name: 'Amount', type: 'string', jsonPath: '.spec.amountRaw', description: "Token amount in the token's smallest unit." },
      { name: 'Token', type: 'string', jsonPath: '.spec.token' },
      { name: 'Client', type: 'string', jsonPath: '.spec.apiClient' },
      { name: 'Request', type: 'string', jsonPath: '.spec.requestId', description: 'The ExecutionRequest it paid for.' },
      { name: 'Payer', type: 'string', jsonPath: '.spec.payer', priority: 1 },
      { name: 'Tx', type: 'string', jsonPath: '.spec.txHash', priority: 1 },
      AGE,
    ],
  },
  AgentPolicy: {
    kind: 'AgentPolicy',
    plural: 'agentpolicies',
    schema: AgentPolicySchema,
    description:
      "What an API key's agents may do: accept and reject rules on chains, targets, functions, values, approvals " +
      'and protocol actions, a validity window and a kill switch. No policy: the key allows what its mode allows.',
    shortNames: ['awpolicy'],
    columns: [
      { name: 'Client', type: 'string', jsonPath: '.spec.apiClient', description: 'The ApiClient (API key id) whose agents it governs.' },
      { name: 'Match', type: 'string', jsonPath: '.spec.agents.match', description: 'exact or prefix; empty: every agent of the key.' },
      { name: 'Agent', type: 'string', jsonPath: '.spec.agents.agentId', description: 'The agent id, or the prefix.' },
      { name: 'Suspended', type: 'boolean', jsonPath: '.spec.suspended', description: 'The kill switch: true refuses every request not yet signed.' },
      { name: 'Spend', type: 'string', jsonPath: '.status.spendSummary', description: "Each budget's window as last summed (refreshed periodically)." },
      { name: 'Until', type: 'date', jsonPath: '.spec.validUntil', priority: 1 },
      AGE,
    ],
  },
};

/** The kind an object says it is, when the scheme knows it. */
export function knownKind(obj: unknown): Kind | undefined {
  const kind = (obj as { kind?: unknown } | null)?.kind;
  return typeof kind === 'string' && (KINDS as readonly string[]).includes(kind) ? (kind as Kind) : undefined;
}
