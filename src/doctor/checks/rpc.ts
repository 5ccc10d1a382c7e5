import { keccak256, toHex, type Hex } from 'viem';
import { isNativeEmitter } from '../../chain/outflows.ts';
import { isUnsupportedMethod } from '../../chain/simulateOutflows.ts';
import { describeError } from '../../chain/revert.ts';
import { MAX_LOG_RANGE_BLOCKS } from '../../chain/types.ts';
import { result, type CheckContext, type CheckResult, type DoctorCheck } from '../types.ts';

/** Runtime code that returns the 32-byte word 1: PUSH1 1, PUSH1 0, MSTORE, PUSH1 32, PUSH1 0, RETURN. */
const RETURNS_ONE: Hex = '0x600160005260206000f3';
/** Addresses nothing lives at, for the probes (state overrides put code or balance there for one call). */
const PROBE = '0x00000000000000000000000000000000000d0c70';
const PROBE_TO = '0x00000000000000000000000000000000000d0c71';
/** A topic no contract emits: the range probe costs the node its block scan, and answers nothing. */
const NO_TOPIC = keccak256(toHex('agent-wallet doctor: no such event'));

type Probe = (ctx: CheckContext) => Promise<CheckResult>;

const failed = (e: unknown) => (isUnsupportedMethod(e) ? 'the endpoint does not serve it' : describeError(e));

/** eth_call with a state override: every simulation and the before/after reads of an execution (src/chain/observe.ts). */
const callOverrides: Probe = async (ctx) => {
  const id = 'rpc.eth_call-stateOverride';
  const fix = "use an RPC endpoint that applies eth_call's state override set (geth, reth, erigon, nethermind and most hosted providers do)";
  try {
    const answer = (await ctx.rpc('eth_call', [{ to: PROBE, data: '0x' }, 'latest', { [PROBE]: { code: RETURNS_ONE } }])) as Hex;
    if (BigInt(answer === '0x' ? 0 : answer) !== 1n) return result(ctx, id, 'fail', 'eth_call ignores the state override set: simulations and execution reads would see the chain without it', fix);
  } catch (e) {
    return result(ctx, id, 'fail', `eth_call with a state override: ${failed(e)}. Without it no execution can be simulated or served`, fix);
  }
  return result(ctx, id, 'ok', 'eth_call applies state overrides');
};

/** eth_simulateV1 with traceTransfers: the outflows the policies' outflow and USD rules value (src/chain/simulateOutflows.ts). */
const simulateV1: Probe = async (ctx) => {
  const id = 'rpc.eth_simulateV1';
  const degraded = "a request under a policy with outflow or USD rules is refused (outflows unavailable, rpc_unsupported); requests under other policies are served";
  const fix = 'use an RPC endpoint with eth_simulateV1 and traceTransfers (geth ≥ 1.14.9, reth, anvil; ask your provider), or a policy without outflow and USD rules on this chain';
  let calls: { status?: string; logs?: { address: `0x${string}` }[] }[];
  try {
    const answer = (await ctx.rpc('eth_simulateV1', [
      {
        blockStateCalls: [{ stateOverrides: { [PROBE]: { balance: '0xde0b6b3a7640000' } }, calls: [{ from: PROBE, to: PROBE_TO, value: '0x1' }] }],
        traceTransfers: true,
        validation: false,
      },
      'latest',
    ])) as { calls?: typeof calls }[];
    calls = answer[0]?.calls ?? [];
  } catch (e) {
    return result(ctx, id, 'warn', `eth_simulateV1: ${failed(e)}. Degrades: ${degraded}`, fix);
  }
  if (calls[0]?.status !== '0x1') return result(ctx, id, 'warn', `eth_simulateV1 answered the probe transfer without success. Degrades: ${degraded}`, fix);
  if (!(calls[0].logs ?? []).some((l) => isNativeEmitter(l.address))) {
    return result(ctx, id, 'warn', `eth_simulateV1 answers but reports no native transfer with traceTransfers. Degrades: native value sent is not counted against outflow and USD rules' limits`, fix);
  }
  return result(ctx, id, 'ok', 'eth_simulateV1 with traceTransfers');
};

/** debug_traceCall with the callTracer: settles native outflows when eth_simulateV1's transfer logs and the balance disagree. */
const traceCall: Probe = async (ctx) => {
  const id = 'rpc.debug_traceCall';
  try {
    const trace = (await ctx.rpc('debug_traceCall', [{ from: PROBE, to: PROBE_TO, value: '0x0' }, 'latest', { tracer: 'callTracer' }])) as { type?: unknown } | null;
    if (typeof trace?.type !== 'string') throw new Error('it answered no call frame');
  } catch (e) {
    return result(
      ctx,
      id,
      'warn',
      `debug_traceCall with the callTracer: ${failed(e)}. Degrades: when a reverted frame's native transfer shows in eth_simulateV1's logs (revm-based nodes), the request's outflows are unavailable and a policy with outflow or USD rules refuses it`,
      'use an endpoint with the debug namespace (a provider\'s "trace"/"debug" add-on, or your own node), or accept the rare refusal',
    );
  }
  return result(ctx, id, 'ok', 'debug_traceCall with the callTracer');
};

/** eth_getLogs over the widest range a read asks (MAX_LOG_RANGE_BLOCKS): protocol event reads and the scan for an operation the bundler lost. */
const logsRange: Probe = async (ctx) => {
  const id = 'rpc.eth_getLogs-range';
  const head = await ctx.client.getBlockNumber();
  const from = head >= MAX_LOG_RANGE_BLOCKS ? head - MAX_LOG_RANGE_BLOCKS + 1n : 0n;
  try {
    await ctx.rpc('eth_getLogs', [{ fromBlock: toHex(from), toBlock: toHex(head), address: ctx.target.config.entryPoint, topics: [NO_TOPIC] }]);
  } catch (e) {
    return result(
      ctx,
      id,
      'warn',
      `eth_getLogs over ${head - from + 1n} blocks: ${failed(e)}. Degrades: protocol event reads (a GMX v2 order's outcome) and the search for an operation the bundler no longer holds fail over wide ranges`,
      `use an endpoint that serves eth_getLogs over ${MAX_LOG_RANGE_BLOCKS} blocks (many free tiers cap it at 500–2,000)`,
    );
  }
  return result(ctx, id, 'ok', `eth_getLogs over ${head - from + 1n} blocks`);
};

/** eth_maxPriorityFeePerGas: the tip of every operation's and bundle's fees (src/chain/fees.ts). */
const priorityFee: Probe = async (ctx) => {
  const id = 'rpc.eth_maxPriorityFeePerGas';
  try {
    BigInt((await ctx.rpc('eth_maxPriorityFeePerGas', [])) as string);
  } catch (e) {
    return result(ctx, id, 'fail', `eth_maxPriorityFeePerGas: ${failed(e)}. No operation can be priced`, 'use an RPC endpoint that serves eth_maxPriorityFeePerGas (every EIP-1559 client does)');
  }
  return result(ctx, id, 'ok', 'eth_maxPriorityFeePerGas');
};

/** eth_sendRawTransactionSync, only when the configuration asks for it (bundler.syncSend): else bundles are sent and polled. */
const syncSend: Probe = async (ctx) => {
  const id = 'rpc.eth_sendRawTransactionSync';
  // Read defensively: only the built-in bundler has the setting (an outside one sends its own bundles).
  if ((ctx.target.config.bundler as { syncSend?: unknown }).syncSend !== true) return result(ctx, id, 'ok', 'not used (bundler.syncSend is not set)');
  try {
    await ctx.rpc('eth_sendRawTransactionSync', ['0x']);
  } catch (e) {
    // An empty payload is refused as a bad transaction where the method exists; only "no such method" says it does not.
    if (isUnsupportedMethod(e)) return result(ctx, id, 'fail', 'bundler.syncSend is set, but the endpoint has no eth_sendRawTransactionSync: no bundle could be sent', 'set bundler.syncSend to false (send, then poll for the receipt)');
  }
  return result(ctx, id, 'ok', 'eth_sendRawTransactionSync');
};

const PROBES: readonly Probe[] = [callOverrides, simulateV1, traceCall, logsRange, priorityFee, syncSend];

/** The JSON-RPC methods the service calls, each probed: which feature degrades without it, or whether nothing works. */
export const rpcCheck: DoctorCheck = {
  id: 'rpc',
  summary: 'the RPC endpoint serves what the service calls: eth_call overrides, eth_simulateV1, debug_traceCall, eth_getLogs ranges, fee methods',
  run: (ctx) => Promise.all(PROBES.map((p) => p(ctx))),
};
