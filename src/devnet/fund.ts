import { existsSync, readFileSync } from 'node:fs';
import { createPublicClient, createWalletClient, encodeFunctionData, formatUnits, http, parseAbi, parseUnits, type Address, type Hex } from 'viem';
import { canonicalChain } from '../config/chains.ts';
import { err, ok, type Result } from '../lib/result.ts';
import { DevnetManifestSchema, type DevnetManifest } from './manifest.ts';

/**
 * `agent-wallet devnet fund`: native coin or any token of the devnet manifest, to an address (an agent's smart
 * wallet), for walkthroughs and agents trying things on `npm start`. Devnet only: the chain must be one of the
 * manifest's, and its node must be anvil, whose unlocked test accounts send the transactions
 * (`eth_sendTransaction`: anvil picks the nonce, so two funds at once never collide). A real network has no
 * unlocked accounts and is refused before anything is sent.
 */
export type FundErrorCode =
  | 'manifest_not_found'
  | 'not_a_devnet'
  | 'unknown_chain'
  | 'unknown_token'
  | 'invalid_amount'
  | 'invalid_address'
  | 'chain_unavailable'
  | 'transaction_failed';
export interface FundError {
  error: FundErrorCode;
  message: string;
}

/** The native coin's names: `--token ETH`, or no token at all. */
export const NATIVE_SYMBOL = 'ETH';

const tokenAbi = parseAbi([
  'function mint(address to, uint256 amount)',
  'function deposit() payable',
  'function transfer(address to, uint256 amount) returns (bool)',
  'function balanceOf(address owner) view returns (uint256)',
]);

export interface FundResult {
  chain: string;
  address: Address;
  token: string;
  /** The token's address; null for the native coin. */
  token_address: Address | null;
  amount: string;
  amount_raw: string;
  /** The sending account: one of the manifest's funded accounts. */
  from: Address;
  tx_hashes: Hex[];
  /** The address's balance of that token after the fund, whole tokens and raw. */
  balance: string;
  balance_raw: string;
}

/** Reads `<path>` as a devnet manifest; anything else (a cluster config, a missing file) is a clear refusal. */
export function readDevnetManifest(path: string): Result<DevnetManifest, FundError> {
  if (!existsSync(path)) {
    return err({
      error: 'manifest_not_found',
      message: `no devnet manifest at ${path}: devnet fund works on the devnet of \`npm start\` (agent-wallet dev); pass its --data-dir, or --manifest`,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return err({ error: 'not_a_devnet', message: `${path} is not a devnet manifest (not JSON): devnet fund works only on the local devnet` });
  }
  const m = DevnetManifestSchema.safeParse(parsed);
  if (!m.success) return err({ error: 'not_a_devnet', message: `${path} is not a devnet manifest: devnet fund works only on the local devnet` });
  return ok(m.data);
}

export async function fundOnDevnet(p: {
  manifest: DevnetManifest;
  chain: string;
  to: string;
  /** A token symbol of the manifest's chain (any case), or ETH / undefined for the native coin. */
  token?: string;
  /** Whole tokens, as a decimal string ("10", "0.5"). */
  amount: string;
}): Promise<Result<FundResult, FundError>> {
  const chainName = canonicalChain(p.chain);
  const chain = p.manifest.chains.find((c) => c.name === chainName);
  if (!chain) return err({ error: 'unknown_chain', message: `the devnet has no chain ${p.chain} (it has ${p.manifest.chains.map((c) => c.name).join(', ')})` });
  if (!/^0x[0-9a-fA-F]{40}$/.test(p.to)) return err({ error: 'invalid_address', message: `not an address: ${p.to}` });
  const to = p.to as Address;
  const symbol = p.token ?? NATIVE_SYMBOL;
  const native = symbol.toUpperCase() === NATIVE_SYMBOL;
  const token = native ? undefined : chain.tokens.find((t) => t.symbol.toLowerCase() === symbol.toLowerCase());
  if (!native && !token) {
    return err({ error: 'unknown_token', message: `the devnet's ${chain.name} has no token ${symbol}: ${[NATIVE_SYMBOL, ...chain.tokens.map((t) => t.symbol)].join(', ')}` });
  }
  const decimals = token?.decimals ?? 18;
  if (!/^\d+(\.\d+)?$/.test(p.amount) || (p.amount.split('.')[1]?.length ?? 0) > decimals) {
    return err({ error: 'invalid_amount', message: `--amount is whole tokens as a decimal number with at most ${decimals} decimals, got ${p.amount}` });
  }
  const raw = parseUnits(p.amount, decimals);
  if (raw === 0n) return err({ error: 'invalid_amount', message: '--amount must be more than 0' });
  const from = p.manifest.accounts.funded[0]?.address;
  if (!from) return err({ error: 'not_a_devnet', message: 'the devnet manifest lists no funded account' });

  const client = createPublicClient({ transport: http(chain.rpcUrl, { retryCount: 0 }), pollingInterval: 20 });
  // Devnet only: the node must be anvil, on the manifest's chain id, before anything is sent.
  let clientVersion: string;
  let chainId: number;
  try {
    [clientVersion, chainId] = await Promise.all([client.request({ method: 'web3_clientVersion' }), client.getChainId()]);
  } catch (e) {
    return err({ error: 'chain_unavailable', message: `the devnet's ${chain.name} at ${chain.rpcUrl} does not answer (is \`npm start\` running?): ${(e as Error).message.split('\n')[0]}` });
  }
  if (!/^anvil\//i.test(clientVersion) || chainId !== chain.chainId) {
    return err({ error: 'not_a_devnet', message: `${chain.rpcUrl} is ${clientVersion} on chain id ${chainId}, not the devnet's anvil ${chain.name} (${chain.chainId}): devnet fund never sends on a real network` });
  }

  const calls: { to: Address; data?: Hex; value?: bigint }[] = native
    ? [{ to, value: raw }]
    : token!.symbol === 'WETH'
      ? // Backed like real WETH: wrap the sender's ether, then hand the WETH over.
        [
          { to: token!.address, data: encodeFunctionData({ abi: tokenAbi, functionName: 'deposit' }), value: raw },
          { to: token!.address, data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [to, raw] }) },
        ]
      : // The devnet's test tokens mint freely (TestStablecoin, TestERC20).
        [{ to: token!.address, data: encodeFunctionData({ abi: tokenAbi, functionName: 'mint', args: [to, raw] }) }];
  // A JSON-RPC account: viem sends eth_sendTransaction and anvil signs with its unlocked test account.
  const sender = createWalletClient({ account: from, transport: http(chain.rpcUrl, { retryCount: 0 }) });
  const hashes: Hex[] = [];
  for (const call of calls) {
    try {
      const hash = await sender.sendTransaction({ chain: null, to: call.to, data: call.data, value: call.value });
      hashes.push(hash);
      const receipt = await client.waitForTransactionReceipt({ hash, timeout: 30_000 });
      if (receipt.status !== 'success') return err({ error: 'transaction_failed', message: `the funding transaction ${hash} reverted` });
    } catch (e) {
      return err({ error: 'transaction_failed', message: `sending on the devnet's ${chain.name} failed: ${(e as Error).message.split('\n')[0]}` });
    }
  }
  const balance = native
    ? await client.getBalance({ address: to })
    : await client.readContract({ address: token!.address, abi: tokenAbi, functionName: 'balanceOf', args: [to] });
  return ok({
    chain: chain.name,
    address: to,
    token: native ? NATIVE_SYMBOL : token!.symbol,
    token_address: native ? null : token!.address,
    amount: formatUnits(raw, decimals),
    amount_raw: raw.toString(),
    from,
    tx_hashes: hashes,
    balance: formatUnits(balance, decimals),
    balance_raw: balance.toString(),
  });
}
