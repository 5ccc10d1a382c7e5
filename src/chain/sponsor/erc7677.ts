import { isAddressEqual, numberToHex, type Address, type Hex } from 'viem';
import { formatUserOperationRequest, type UserOperation } from 'viem/account-abstraction';
import { z } from 'zod';
import { ChainError } from '../errors.ts';
import { GAS } from '../gas.ts';
import type { Sponsor, SponsorFields, SponsorStub } from './types.ts';

const HexSchema = z.string().regex(/^0x(?:[0-9a-fA-F]{2})*$/) as unknown as z.ZodType<Hex>;
const AddressSchema = z.string().regex(/^0x[0-9a-fA-F]{40}$/) as unknown as z.ZodType<Address>;
const Quantity = z.union([z.string().regex(/^0x[0-9a-fA-F]+$/), z.number().int().nonnegative()]).transform((v) => BigInt(v));

/**
 * ERC-7677 `pm_getPaymasterStubData` for EntryPoint v0.7: paymaster and paymasterData; paymasterPostOpGasLimit,
 * which the spec requires (the paymaster pays for postOp, so it cannot trust the wallet's figure);
 * paymasterVerificationGasLimit when it has one; `isFinal` when the stub is already the final data.
 */
const StubAnswerSchema = z.object({
  paymaster: AddressSchema,
  paymasterData: HexSchema,
  paymasterVerificationGasLimit: Quantity.nullish(),
  paymasterPostOpGasLimit: Quantity,
  isFinal: z.boolean().nullish(),
  sponsor: z.object({ name: z.string(), icon: z.string().optional() }).nullish(),
});
/** `pm_getPaymasterData` for v0.7: paymaster and paymasterData (some services repeat the gas limits). */
const FinalAnswerSchema = z.object({
  paymaster: AddressSchema,
  paymasterData: HexSchema,
  paymasterVerificationGasLimit: Quantity.nullish(),
  paymasterPostOpGasLimit: Quantity.nullish(),
});
const RpcAnswerSchema = z.union([
  z.object({ result: z.unknown() }),
  z.object({ error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }) }),
]);

/**
 * An ERC-7677 paymaster service (`sponsor.kind: erc7677`): it signs for `paymaster` with a key this service never
 * holds. Failures are ChainErrors: no answer (connection refused, timeout, HTTP 5xx, not JSON-RPC, an answer of
 * the wrong shape) is `rpc_unavailable`, retried as a chain that does not answer; a JSON-RPC error, or an answer
 * for another paymaster than the configured one, is the service refusing: `simulation_reverted`, which fails the
 * request with the service's message.
 */
export function createErc7677Sponsor(p: {
  url: string;
  chainId: number;
  entryPoint: Address;
  paymaster: Address;
  context?: Record<string, unknown>;
  timeoutMs?: number;
}): Sponsor {
  const origin = originOf(p.url);
  const timeoutMs = p.timeoutMs ?? 10_000;
  let nextId = 1;
  const unavailable = (method: string, why: string, cause?: unknown) =>
    new ChainError('rpc_unavailable', `the paymaster service at ${origin} did not answer ${method}: ${why}`, { cause, details: { sponsor: origin } });
  const refused = (method: string, why: string, rpcCode?: number) =>
    new ChainError('simulation_reverted', `the paymaster service at ${origin} refused to sponsor the operation (${method}): ${why}`, {
      details: { sponsor: origin, ...(rpcCode !== undefined && { rpcCode }) },
    });

  async function call<T>(method: string, op: Partial<UserOperation<'0.7'>>, schema: z.ZodType<T>): Promise<T> {
    const params = [formatUserOperationRequest(op as UserOperation<'0.7'>), p.entryPoint, numberToHex(p.chainId), p.context ?? {}];
    let res: Response;
    try {
      res = await fetch(p.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      throw unavailable(method, (e as Error).message, e);
    }
    const text = await res.text().catch(() => '');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const answer = RpcAnswerSchema.safeParse(body);
    if (!answer.success) throw unavailable(method, `HTTP ${res.status}: ${text.slice(0, 200)}`);
    if ('error' in answer.data) throw refused(method, answer.data.error.message, answer.data.error.code);
    const r = schema.safeParse(answer.data.result);
    if (!r.success) throw unavailable(method, `an answer of an unexpected shape: ${z.prettifyError(r.error).slice(0, 300)}`);
    return r.data;
  }

  const checkPaymaster = (method: string, paymaster: Address) => {
    if (!isAddressEqual(paymaster, p.paymaster)) throw refused(method, `it answered for paymaster ${paymaster}, the chain is configured with ${p.paymaster}`);
  };

  return {
    kind: 'erc7677',
    origin,
    async stub(op): Promise<SponsorStub> {
      const a = await call('pm_getPaymasterStubData', op, StubAnswerSchema);
      checkPaymaster('pm_getPaymasterStubData', a.paymaster);
      return {
        paymaster: p.paymaster,
        paymasterData: a.paymasterData,
        // No figure from the service: the VerifyingPaymaster's validation limit (gas.ts) is the fallback.
        paymasterVerificationGasLimit: a.paymasterVerificationGasLimit ?? GAS.paymasterVerification,
        paymasterPostOpGasLimit: a.paymasterPostOpGasLimit,
        isFinal: a.isFinal === true,
      };
    },
    async final(op): Promise<SponsorFields> {
      const a = await call('pm_getPaymasterData', op, FinalAnswerSchema);
      checkPaymaster('pm_getPaymasterData', a.paymaster);
      const verification = op.paymasterVerificationGasLimit ?? 0n;
      const postOp = op.paymasterPostOpGasLimit ?? 0n;
      // The service signs the operation it was given: limits it changes would be limits its signature does not cover.
      if ((a.paymasterVerificationGasLimit ?? verification) !== verification || (a.paymasterPostOpGasLimit ?? postOp) !== postOp) {
        throw refused('pm_getPaymasterData', 'it answered with other paymaster gas limits than its stub data, which the operation was priced with');
      }
      return { paymaster: p.paymaster, paymasterData: a.paymasterData, paymasterVerificationGasLimit: verification, paymasterPostOpGasLimit: postOp };
    },
  };
}

/** A URL for messages: scheme and host only (a paymaster service's URL may carry an API key in its path or query). */
function originOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(unparsable paymaster service URL)';
  }
}
