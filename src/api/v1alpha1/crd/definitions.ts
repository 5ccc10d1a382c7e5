/**
 * The CustomResourceDefinitions of agentwallet.dev/v1alpha1. Schemas come from the zod types (structural.ts);
 * this file holds only what zod cannot know: names, printer columns and descriptions.
 */
import type { z } from 'zod';
import { ApiClientSchema } from '../apiClient.ts';
import { ExecutionRequestSchema } from '../executionRequest.ts';
import { GROUP, KINDS, PLURALS, VERSION, type Kind } from '../meta.ts';
import { PaymentReceiptSchema } from '../paymentReceipt.ts';
import { resourceSchema, type StructuralSchema } from './structural.ts';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  /** 0: always shown; 1: only with `kubectl get -o wide`. */
  priority?: number;
}

/** apiextensions.k8s.io/v1 CustomResourceDefinition, in wire form (the client library's models are camelCase). */
export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames: string[]; categories: string[] };
    scope: 'Namespaced';
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: StructuralSchema };
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
    }[];
  };
}

/**
 * `kubectl get agentwallet` lists every kind. Deliberately not in `all`: `kubectl get all` would drown in
 * finished requests, and the common `kubectl delete all --all` clean-up would delete PaymentReceipts (which
 * make a payment proof single-use: a deleted receipt lets the proof be replayed) and every ApiClient.
 */
export const CATEGORIES = ['agentwallet'];

const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

interface KindDefinition {
  schema: z.ZodObject;
  description: string;
  /** Checked against the short names of the built-in resources of kube-apiserver 1.30 in crd.test.ts. */
  shortNames: string[];
  columns: PrinterColumn[];
}

const DEFINITIONS: Record<Kind, KindDefinition> = {
  ExecutionRequest: {
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
      { name: 'Client', type: 'string', jsonPath: '.spec.apiClient', description: 'The ApiClient (API key id).', priority: 1 },
      { name: 'Tx', type: 'string', jsonPath: '.status.txHash', description: 'Hash of the bundle transaction that included it.' },
      { name: 'Wallet', type: 'string', jsonPath: '.status.smartWalletAddress', priority: 1 },
      AGE,
    ],
  },
  ApiClient: {
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
      AGE,
    ],
  },
  PaymentReceipt: {
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
};

export function customResourceDefinition(kind: Kind): CustomResourceDefinition {
  const def = DEFINITIONS[kind];
  const plural = PLURALS[kind];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}`, labels: { 'app.kubernetes.io/part-of': 'agent-wallet' } },
    spec: {
      group: GROUP,
      names: {
        kind,
        listKind: `${kind}List`,
        plural,
        singular: kind.toLowerCase(),
        shortNames: def.shortNames,
        categories: CATEGORIES,
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: resourceSchema(def.schema, def.description) },
          // Status only through /status, as the ResourceStore contract says: update ignores status,
          // updateStatus ignores everything else, and RBAC can grant the two separately.
          subresources: { status: {} },
          additionalPrinterColumns: def.columns,
        },
      ],
    },
  };
}

export const customResourceDefinitions = (): CustomResourceDefinition[] => KINDS.map(customResourceDefinition);
