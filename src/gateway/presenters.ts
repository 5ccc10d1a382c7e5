import { formatUnits } from 'viem';
import { ANNOTATIONS, requestIdTimeMs, type ExecutionPhase, type ExecutionRequest } from '../api/v1alpha1/index.ts';
import type { WalletBalances, WalletInfo } from '../chain/types.ts';
import type { TokenConfig } from '../config/chainConfig.ts';
import { CHAIN_NETWORK_NAMES, type ChainName } from '../config/chains.ts';
import type { Balance, ExecutionResult, Feed, RequestStatus, StatusRecord, WalletRecord } from '../api/http/index.ts';

/** Resources → spec JSON. Pure functions: everything they need is in their arguments. */

const PHASE_STATUS: Readonly<Record<ExecutionPhase, RequestStatus>> = {
  Pending: 'pending',
  PaymentRequired: 'payment_required',
  PaymentVerified: 'payment_verified',
  Queued: 'queued',
  Broadcasting: 'broadcasting',
  Confirmed: 'confirmed',
  Reverted: 'reverted',
  Failed: 'failed',
};

/** A resource without a phase has not been seen by the controller yet: it is pending. */
export const statusOf = (request: ExecutionRequest): RequestStatus => PHASE_STATUS[request.status?.phase ?? 'Pending'];

const iso = (t: string | undefined): string | undefined => (t === undefined ? undefined : new Date(t).toISOString());

/**
 * `created_at`: when the gateway accepted the request, to the millisecond (its acceptance id carries the time;
 * the store's creationTimestamp has whole seconds, as Kubernetes' does), else the creationTimestamp.
 */
export function createdAt(request: ExecutionRequest): string {
  const accepted = requestIdTimeMs(request.metadata.annotations?.[ANNOTATIONS.accepted]);
  if (accepted !== undefined) return new Date(accepted).toISOString();
  return iso(request.metadata.creationTimestamp) ?? new Date(0).toISOString();
}

/**
 * `updated_at` is the time of the request's last state transition: the latest of its conditions'
 * lastTransitionTime and its queued/start/completion times, or its creation time before any of them. It does
 * not move for bookkeeping writes (e.g. webhook delivery attempts) that leave the state as it was.
 */
export function updatedAt(request: ExecutionRequest): string {
  const s = request.status;
  const times = [
    createdAt(request),
    s?.queuedTime,
    s?.startTime,
    s?.completionTime,
    ...(s?.conditions ?? []).map((c) => c.lastTransitionTime),
  ]
    .filter((t): t is string => t !== undefined)
    .map((t) => Date.parse(t))
    .filter((t) => !Number.isNaN(t));
  return times.length === 0 ? createdAt(request) : new Date(Math.max(...times)).toISOString();
}

/**
 * `cost_usd` of spec §2.3: what the caller was charged once the request was queued (0 when sponsored, and when
 * an auto transfer reverted with its operation), else what it owes under its quote, else the estimate.
 */
export function costUsd(request: ExecutionRequest): number {
  const s = request.status;
  if (request.spec.paymentMode === 'sponsored') return 0;
  return s?.costUsd ?? s?.payment?.quote?.amountUsd ?? s?.estimatedCostUsd ?? 0;
}

export function presentStatus(request: ExecutionRequest): StatusRecord {
  const s = request.status;
  const lost = (s?.inclusionChanges ?? []).filter((c) => c.kind === 'Lost');
  return {
    request_id: request.metadata.name,
    status: statusOf(request),
    chain: request.spec.chain,
    tx_hash: s?.txHash ?? null,
    cost_usd: costUsd(request),
    created_at: createdAt(request),
    updated_at: updatedAt(request),
    agent_id: request.spec.agentId,
    strategy_id: request.spec.strategyId ?? null,
    smart_wallet_address: s?.smartWalletAddress ?? null,
    calls: request.spec.calls.length,
    estimated_gas: s?.estimatedGas ?? null,
    block_number: s?.blockNumber ?? null,
    gas_used: s?.gasUsed ?? null,
    failure: s?.failure
      ? { code: s.failure.code, message: s.failure.message, revert_reason: s.failure.revertReason ?? null }
      : null,
    credit: s?.payment?.credit
      ? { amount_usd: s.payment.credit.amountUsd, expires_at: s.payment.credit.expiresAt, used_by: s.payment.credit.usedBy ?? null }
      : null,
    // Only when there is something to say: the record of every other request keeps its exact shape.
    ...(lost.length > 0 && { lost_inclusions: lost.map((c) => ({ tx_hash: c.txHash, block_number: c.blockNumber, lost_at: c.time })) }),
  };
}

/** A public feed entry: built field by field from an allow-list, so nothing tenant-identifying can slip in. */
export function presentFeedItem(request: ExecutionRequest): Feed['executions'][number] {
  return {
    status: statusOf(request),
    chain: request.spec.chain,
    tx_hash: request.status?.txHash ?? null,
    calls: request.spec.calls.length,
    created_at: createdAt(request),
    updated_at: updatedAt(request),
  };
}

/** The 200 answer of `POST /execute` (spec §2.2): always `queued`, whatever progress has been made since. */
export function presentAccepted(request: ExecutionRequest, walletAddress: string): ExecutionResult {
  const s = request.status;
  return {
    request_id: request.metadata.name,
    status: 'queued',
    smart_wallet_address: walletAddress,
    estimated_gas: s?.estimatedGas ?? 0,
    // The controller writes the payable amount (it already reflects the payment mode).
    estimated_cost_usd: request.spec.paymentMode === 'sponsored' ? 0 : (s?.costUsd ?? s?.estimatedCostUsd ?? 0),
    tx_hash: s?.txHash ?? null,
    message: s?.txHash
      ? `execution queued and broadcast; poll GET /status/${request.metadata.name} for the outcome`
      : `execution queued; poll GET /status/${request.metadata.name} for progress`,
  };
}

export function presentWallet(agentId: string, chain: ChainName, wallet: WalletInfo): WalletRecord {
  return {
    agent_id: agentId,
    smart_wallet_address: wallet.address,
    deployed: wallet.deployed,
    message: wallet.deployed
      ? `smart wallet is deployed on ${CHAIN_NETWORK_NAMES[chain]}`
      : `smart wallet is counterfactual on ${CHAIN_NETWORK_NAMES[chain]}: it is deployed with its first execution; ` +
        'tokens and native currency can already be sent to the address safely',
    chain,
  };
}

export function presentBalances(
  agentId: string,
  chain: ChainName,
  balances: WalletBalances,
  tokenConfig: readonly TokenConfig[] | undefined,
): Balance {
  return {
    agent_id: agentId,
    chain,
    smart_wallet_address: balances.address,
    deployed: balances.deployed,
    // All three test networks use ether as their native coin.
    native: { symbol: 'ETH', wei: balances.nativeWei, formatted: formatUnits(BigInt(balances.nativeWei), 18) },
    tokens: balances.tokens.map((t) => {
      const configured = tokenConfig?.find((c) => c.address.toLowerCase() === t.address.toLowerCase());
      return {
        symbol: t.symbol,
        address: t.address,
        decimals: t.decimals,
        raw: t.raw,
        formatted: formatUnits(BigInt(t.raw), t.decimals),
        ...(configured ? { accepted_for_payment: configured.acceptedForPayment } : {}),
      };
    }),
  };
}
