import { formatUnits } from 'viem';
import type { ExecutionRequest } from '../api/v1alpha1/index.ts';
import { createdAt, statusOf, updatedAt } from '../api/http/presentStatus.ts';
import type { WalletBalances, WalletInfo } from '../chain/types.ts';
import type { TokenConfig } from '../config/chainConfig.ts';
import { CHAIN_NETWORK_NAMES, type ChainName } from '../config/chains.ts';
import type { Balance, ExecutionResult, Feed, WalletRecord } from '../api/http/index.ts';

/** Resources → spec JSON. Pure functions: everything they need is in their arguments. */

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
    ...(s?.l1DataGas !== undefined && { l1_data_gas: s.l1DataGas }),
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
