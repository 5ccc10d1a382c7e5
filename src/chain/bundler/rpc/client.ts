import { formatUserOperationRequest } from 'viem/account-abstraction';
import type { Address, Hex } from 'viem';
import { z } from 'zod';
import type { UserOperation07 } from '../../userOperation.ts';

/**
 * A call to the bundler failed. `unavailable`: no answer (connection refused, timeout, HTTP 5xx or 429, a body
 * that is not JSON-RPC): the operation's fate is unknown, ask again later. `rejected`: the bundler answered with
 * a JSON-RPC error (ERC-7769 codes: -32500 the EntryPoint's validation refused it, -32501 the paymaster's,
 * -32502 a banned opcode, -32503 out of its time range, -32504 throttled, -32505 stake, -32507 signature).
 */
export class BundlerRpcError extends Error {
  constructor(
    readonly kind: 'unavailable' | 'rejected',
    message: string,
    readonly rpcCode?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'BundlerRpcError';
  }
}

/** ERC-7769 error codes a bundler answers for an operation it will not take now but may later. */
const TRANSIENT_REJECTIONS = new Set([-32504 /* throttled or banned for now */]);
export const isTransientRejection = (e: BundlerRpcError) => e.kind === 'unavailable' || (e.rpcCode !== undefined && TRANSIENT_REJECTIONS.has(e.rpcCode));

const Hex = z.string().regex(/^0x[0-9a-fA-F]*$/) as unknown as z.ZodType<Hex>;
const Quantity = z.union([z.string().regex(/^0x[0-9a-fA-F]+$/), z.number().int().nonnegative()]).transform((v) => BigInt(v));

const GasEstimateSchema = z.object({
  preVerificationGas: Quantity,
  verificationGasLimit: Quantity,
  callGasLimit: Quantity,
  paymasterVerificationGasLimit: Quantity.nullish(),
  paymasterPostOpGasLimit: Quantity.nullish(),
});
export type BundlerGasEstimate = z.infer<typeof GasEstimateSchema>;

const ReceiptSchema = z
  .object({
    success: z.boolean(),
    actualGasUsed: Quantity,
    actualGasCost: Quantity,
    reason: z.string().nullish(),
    receipt: z.object({ transactionHash: Hex, blockHash: Hex, blockNumber: Quantity }),
  })
  .nullable();
export type BundlerReceipt = NonNullable<z.infer<typeof ReceiptSchema>>;

const ByHashSchema = z.object({ transactionHash: Hex.nullish(), blockNumber: Quantity.nullish() }).passthrough().nullable();
/** Pimlico's status of an operation (Alto keeps it in memory: a restarted Alto answers not_found). */
const StatusSchema = z.object({ status: z.string() }).passthrough();
const NOT_HELD = new Set(['not_found', 'rejected', 'failed']);

const GasPriceSchema = z.object({ standard: z.object({ maxFeePerGas: Quantity, maxPriorityFeePerGas: Quantity }) });

const RpcAnswerSchema = z.union([
  z.object({ result: z.unknown() }),
  z.object({ error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }) }),
]);

export interface BundlerClient {
  /** The bundler's origin, for messages (its URL may carry an API key). */
  readonly origin: string;
  sendUserOperation(op: UserOperation07): Promise<Hex>;
  estimateUserOperationGas(op: UserOperation07): Promise<BundlerGasEstimate>;
  getUserOperationReceipt(hash: Hex): Promise<BundlerReceipt | null>;
  /**
   * Whether the bundler still holds or has included the operation: pimlico_getUserOperationStatus where the bundler
   * has it, else eth_getUserOperationByHash, which some bundlers (Alto) answer from the chain only, so false may
   * mean only "not included yet". A wrong false costs a redundant send of the same operation, nothing more.
   */
  knowsUserOperation(hash: Hex): Promise<boolean>;
  supportedEntryPoints(): Promise<Address[]>;
  /** `pimlico_getUserOperationGasPrice`'s standard tier, or undefined when the bundler has no such method. */
  gasPrice(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | undefined>;
}

/** The ERC-4337 JSON-RPC methods the service calls on an outside bundler, answers checked with zod. */
export function createBundlerClient(p: { url: string; entryPoint: Address; timeoutMs?: number }): BundlerClient {
  const origin = originOf(p.url);
  const timeoutMs = p.timeoutMs ?? 10_000;
  let nextId = 1;
  let gasPriceMissing = false;
  let statusMissing = false;

  async function call(method: string, params: unknown[]): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(p.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      throw new BundlerRpcError('unavailable', `the bundler at ${origin} did not answer ${method}: ${(e as Error).message}`, undefined, { cause: e });
    }
    const text = await res.text().catch(() => '');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const answer = RpcAnswerSchema.safeParse(body);
    if (!answer.success) {
      throw new BundlerRpcError('unavailable', `the bundler at ${origin} answered ${method} with HTTP ${res.status}: ${text.slice(0, 200)}`);
    }
    if ('error' in answer.data) throw new BundlerRpcError('rejected', answer.data.error.message, answer.data.error.code);
    return answer.data.result;
  }

  const parse = <T>(schema: z.ZodType<T>, method: string, value: unknown): T => {
    const r = schema.safeParse(value);
    if (!r.success) throw new BundlerRpcError('unavailable', `the bundler at ${origin} answered ${method} with an unexpected shape: ${r.error.message.slice(0, 200)}`);
    return r.data;
  };
  const wire = (op: UserOperation07) => formatUserOperationRequest(op);

  return {
    origin,
    async sendUserOperation(op) {
      return parse(Hex, 'eth_sendUserOperation', await call('eth_sendUserOperation', [wire(op), p.entryPoint]));
    },
    async estimateUserOperationGas(op) {
      return parse(GasEstimateSchema, 'eth_estimateUserOperationGas', await call('eth_estimateUserOperationGas', [wire(op), p.entryPoint]));
    },
    async getUserOperationReceipt(hash) {
      return parse(ReceiptSchema, 'eth_getUserOperationReceipt', await call('eth_getUserOperationReceipt', [hash]));
    },
    async knowsUserOperation(hash) {
      if (!statusMissing) {
        try {
          const { status } = parse(StatusSchema, 'pimlico_getUserOperationStatus', await call('pimlico_getUserOperationStatus', [hash]));
          return !NOT_HELD.has(status);
        } catch (e) {
          if (!(e instanceof BundlerRpcError && e.kind === 'rejected')) throw e;
          statusMissing = true; // no such method here
        }
      }
      return parse(ByHashSchema, 'eth_getUserOperationByHash', await call('eth_getUserOperationByHash', [hash])) !== null;
    },
    async supportedEntryPoints() {
      return parse(z.array(z.string().regex(/^0x[0-9a-fA-F]{40}$/)), 'eth_supportedEntryPoints', await call('eth_supportedEntryPoints', [])) as Address[];
    },
    async gasPrice() {
      if (gasPriceMissing) return undefined;
      try {
        return parse(GasPriceSchema, 'pimlico_getUserOperationGasPrice', await call('pimlico_getUserOperationGasPrice', [])).standard;
      } catch (e) {
        // Method not found (-32601) or not allowed: this bundler has none; the node's fees stand.
        if (e instanceof BundlerRpcError && e.kind === 'rejected') {
          gasPriceMissing = true;
          return undefined;
        }
        throw e;
      }
    },
  };
}

function originOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(unparsable bundler URL)';
  }
}
