import type { Address, Hex } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import type { ChainName } from '../../src/config/chains.ts';
import { devnetChain, devnetWalletClient } from '../../src/devnet/clients.ts';
import { testStablecoinAbi } from '../../src/devnet/contracts.ts';
import { proofMessage, type ProofMessageFields } from '../../src/payments/proofSignature.ts';
import type { testDevnet } from './env.ts';

/**
 * Someone who pays: a fresh EOA given gas with anvil_setBalance, minting its own test tokens. No account is
 * shared with another test file, so no nonce is either.
 */
export async function newPayer(devnet: ReturnType<typeof testDevnet>, chain: ChainName) {
  const privateKey = generatePrivateKey();
  const wallet = devnetWalletClient(devnetChain(devnet.chain(chain)), privateKey);
  await devnet.publicClient(chain).request({ method: 'anvil_setBalance', params: [wallet.account.address, '0xde0b6b3a7640000'] } as never);
  const token = (symbol: string): Address => {
    const t = devnet.chain(chain).tokens.find((x) => x.symbol === symbol);
    if (!t) throw new Error(`${chain} has no token ${symbol}`);
    return t.address;
  };
  const mint = async (symbol: string, to: Address, amount: bigint): Promise<void> => {
    await wallet.writeContractSync({ address: token(symbol), abi: testStablecoinAbi, functionName: 'mint', args: [to, amount] });
  };
  return {
    wallet,
    privateKey,
    address: wallet.account.address,
    mint,
    /** The payer's signature of a proof (EIP-191), for X-Payment-Proof's `signature`. */
    signProof: (fields: Omit<ProofMessageFields, 'chain'>): Promise<Hex> => wallet.account.signMessage({ message: proofMessage({ chain, ...fields }) }),
    /** Mints `amount` of `symbol` to itself and transfers it to `to`: the payment transaction's hash. */
    async pay(symbol: string, to: Address, amount: bigint): Promise<Hex> {
      await mint(symbol, wallet.account.address, amount);
      const receipt = await wallet.writeContractSync({ address: token(symbol), abi: testStablecoinAbi, functionName: 'transfer', args: [to, amount] });
      return receipt.transactionHash;
    },
  };
}
