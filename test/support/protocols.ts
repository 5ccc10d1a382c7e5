import { parseUnits, type Address } from 'viem';
import type { ChainName } from '../../src/config/chains.ts';
import { testStablecoinAbi } from '../../src/devnet/contracts.ts';
import type { testDevnet } from './env.ts';

/**
 * Gives `to` test tokens on `chain` (every devnet token has a public mint), from a funded account: one account per
 * test file (`funder`), so no two files share a nonce.
 */
export async function fundTokens(devnet: ReturnType<typeof testDevnet>, chain: ChainName, to: Address, amounts: Record<string, string>, funder = 0) {
  const wallet = devnet.walletClient(chain, funder);
  for (const [symbol, amount] of Object.entries(amounts)) {
    const token = devnet.chain(chain).tokens.find((t) => t.symbol === symbol);
    if (!token) throw new Error(`${chain} has no token ${symbol}`);
    await wallet.writeContractSync({ address: token.address, abi: testStablecoinAbi, functionName: 'mint', args: [to, parseUnits(amount, token.decimals)] });
  }
}
