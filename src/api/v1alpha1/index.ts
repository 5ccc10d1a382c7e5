export * from './meta.ts';
export * from './names.ts';
export * from './labels.ts';
export * from './requestIds.ts';
export * from './executionRequest.ts';
export * from './apiClient.ts';
export * from './paymentReceipt.ts';
export * from './agentPolicy.ts';
export * from './protocolAction.ts';
export * from './scheme.ts';

import type { AgentPolicy } from './agentPolicy.ts';
import type { ApiClient } from './apiClient.ts';
import type { ExecutionRequest } from './executionRequest.ts';
import type { PaymentReceipt } from './paymentReceipt.ts';

/** Maps a kind name to its resource type, so the store is typed by kind. */
export interface ResourceByKind {
  ExecutionRequest: ExecutionRequest;
  ApiClient: ApiClient;
  PaymentReceipt: PaymentReceipt;
  AgentPolicy: AgentPolicy;
}
export type AnyResource = ResourceByKind[keyof ResourceByKind];
