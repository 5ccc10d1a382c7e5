import { encodeFunctionData, formatUnits, parseUnits, type Address, type PublicClient } from 'viem';
import { testStablecoinAbi, testWethAbi } from '../../contracts.ts';
import type { DevnetChain } from '../../manifest.ts';
import type { PlannedTransaction } from '../sender.ts';

export type DevnetToken = DevnetChain['tokens'][number];

export function tokenOf(tokens: DevnetChain['tokens'], symbol: string): DevnetToken {
  const t = tokens.find((x) => x.symbol === symbol);
  if (!t) throw new Error(`the chain has no ${symbol} token`);
  return t;
}

/** Whole tokens in raw units. */
export const units = (t: { decimals: number }, whole: bigint): bigint => parseUnits(whole.toString(), t.decimals);

/**
 * What gives the deployer `amount` of each token and lets `spender` take exactly that: the stablecoins' public
 * mint; WETH by deposit (backed by ETH, so pools' WETH can be unwrapped), then one approval per token. Only
 * what the balances and allowances read now lack (a deployment cut short is not paid twice).
 */
export async function fundAndApprove(
  client: PublicClient,
  deployer: Address,
  spender: Address,
  needs: readonly { token: DevnetToken; amount: bigint }[],
): Promise<PlannedTransaction[]> {
  const txs: PlannedTransaction[] = [];
  for (const { token, amount } of needs) {
    if (amount === 0n) continue;
    const [balance, allowance] = await Promise.all([
      client.readContract({ address: token.address, abi: testStablecoinAbi, functionName: 'balanceOf', args: [deployer] }),
      client.readContract({ address: token.address, abi: testStablecoinAbi, functionName: 'allowance', args: [deployer, spender] }),
    ]);
    if (balance < amount) {
      txs.push(
        token.symbol === 'WETH'
          ? { what: `wrap ${formatUnits(amount - balance, 18)} ETH into WETH`, to: token.address, data: encodeFunctionData({ abi: testWethAbi, functionName: 'deposit' }), value: amount - balance }
          : { what: `mint ${formatUnits(amount - balance, token.decimals)} ${token.symbol}`, to: token.address, data: encodeFunctionData({ abi: testStablecoinAbi, functionName: 'mint', args: [deployer, amount - balance] }) },
      );
    }
    if (allowance < amount) {
      txs.push({ what: `approve ${token.symbol} to ${spender}`, to: token.address, data: encodeFunctionData({ abi: testStablecoinAbi, functionName: 'approve', args: [spender, amount] }) });
    }
  }
  return txs;
}
