/**
 * The CustomResourceDefinitions of agentwallet.dev/v1alpha1, rendered from the scheme (../scheme.ts: each kind's
 * zod schema, plural, short names, printer columns and description) through structural.ts.
 */
import { GROUP, KINDS, VERSION, type Kind } from '../meta.ts';
import { SCHEME, type PrinterColumn } from '../scheme.ts';
import { resourceSchema, type StructuralSchema } from './structural.ts';

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

export function customResourceDefinition(kind: Kind): CustomResourceDefinition {
  const def = SCHEME[kind];
  const plural = def.plural;
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

export type { PrinterColumn };
