/**
 * zod and the generated CRD schemas judge objects the same way, and store them the same way: zod strips
 * unknown keys and fills defaults; the API server prunes unknown fields and applies the same defaults. The
 * server side here is apiServerModel.ts; apiServer.test.ts replays the same corpus against a real
 * kube-apiserver to keep the model honest.
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { AgentPolicySchema } from '../agentPolicy.ts';
import { ApiClientSchema } from '../apiClient.ts';
import { ExecutionRequestSchema } from '../executionRequest.ts';
import type { Kind } from '../meta.ts';
import { PaymentReceiptSchema } from '../paymentReceipt.ts';
import { customResourceDefinition } from './definitions.ts';
import type { StructuralSchema } from './structural.ts';
import { admit, isGoRequestUri } from './testing/apiServerModel.ts';
import { disagreements, invalidCases, validCases, type Case } from './testing/corpus.ts';

const ZOD: Record<Kind, z.ZodType> = {
  ExecutionRequest: ExecutionRequestSchema,
  ApiClient: ApiClientSchema,
  PaymentReceipt: PaymentReceiptSchema,
  AgentPolicy: AgentPolicySchema,
};
const crdSchema = (kind: Kind): StructuralSchema => customResourceDefinition(kind).spec.versions[0]!.schema.openAPIV3Schema;

/** What both sides own: metadata is the server's (zod's ObjectMeta is a subset with its own default). */
const content = (o: unknown) => {
  const { metadata: _, ...rest } = o as Record<string, unknown>;
  return rest;
};

function judge(c: Case) {
  const zod = ZOD[c.kind].safeParse(c.object);
  const server = admit(crdSchema(c.kind), c.object);
  return { zod, server };
}

describe('valid objects: both accept and store the same thing', () => {
  it.each(validCases().map((c) => [c.name, c] as const))('%s', (_, c) => {
    const { zod, server } = judge(c);
    expect(zod.success, JSON.stringify(zod.error?.issues)).toBe(true);
    expect(server.ok ? [] : server.errors).toEqual([]);
    if (!zod.success || !server.ok) return;
    expect(content(server.object)).toEqual(content(zod.data));
  });
});

describe('invalid objects: both refuse', () => {
  it.each(invalidCases().map((c) => [c.name, c] as const))('%s', (_, c) => {
    const { zod, server } = judge(c);
    expect(zod.success).toBe(false);
    expect(server.ok).toBe(false);
  });
});

describe('documented disagreements', () => {
  it.each(disagreements().map((c) => [c.name, c] as const))('%s', (_, c) => {
    const { zod, server } = judge(c);
    expect({ zod: zod.success, server: server.ok }).toEqual({ zod: c.zod, server: c.server });
    if (server.ok) expect(ZOD[c.kind].safeParse(server.object).success).toBe(c.zodReadsStored);
  });
});

describe('the service writes what zod outputs: the server keeps exactly that', () => {
  const all = [...validCases(), ...invalidCases(), ...disagreements()];
  it.each(all.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const parsed = ZOD[c.kind].safeParse(c.object);
    if (!parsed.success) return;
    const stored = admit(crdSchema(c.kind), parsed.data);
    expect(stored.ok ? [] : stored.errors).toEqual([]);
    if (stored.ok) expect(content(stored.object)).toEqual(content(parsed.data));
  });
});

describe('why the CRD has no format: uri', () => {
  it("zod's url() accepts URLs that Go's url.ParseRequestURI (the server's uri check) refuses", () => {
    const url = ExecutionRequestSchema.shape.spec.shape.callbackUrl;
    for (const v of ['https://a.example/%zz', 'https://us er@a.example/', 'https://a%41.example/']) {
      expect(url.safeParse(v).success, v).toBe(true);
      expect(isGoRequestUri(v), v).toBe(false);
    }
    for (const v of ['https://agent.example/hooks/agent-wallet', 'http://[::1]:8080/x?y=%zz', 'mailto:ops@example.com']) {
      expect(url.safeParse(v).success, v).toBe(true);
      expect(isGoRequestUri(v), v).toBe(true);
    }
  });
});
