import { encodeFunctionData, erc20Abi, getAddress, type Address, type Hex } from 'viem';
import type { Call, PaymentQuote } from '../api/v1alpha1/index.ts';
import type { ChainWorker } from '../chain/types.ts';
import type { AutoFee } from './types.ts';


/**
 * The token the auto mode pays with: the first of the quote's tokens (already in sorted symbol order, spec
 * §2.6) whose balance in the wallet covers its amount, read in one batched call; undefined when none does. The
 * wallet's fees already signed and not yet final (`inFlight`) are spoken for: a wallet funded for one fee pays one.
 */
export async function chooseAutoToken(
  worker: ChainWorker,
  wallet: Address,
  quote: Pick<PaymentQuote, 'tokens'>,
  inFlight: readonly AutoFee[] = [],
): Promise<PaymentQuote['tokens'][number] | undefined> {
  if (quote.tokens.length === 0) return undefined;
  const { results } = await worker.read(
    quote.tokens.map((t) => ({ to: t.address as Address, data: encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [wallet] }) })),
  );
  return quote.tokens.find((t, i) => {
    const r = results[i];
    if (r?.success !== true || r.returnData.length < 66) return false;
    const spokenFor = inFlight.filter((f) => f.token === t.symbol).reduce((sum, f) => sum + BigInt(f.amountRaw), 0n);
    return BigInt(r.returnData.slice(0, 66)) - spokenFor >= BigInt(t.amountRaw);
  });
}

/** The call that pays: `token.transfer(treasury, amount)` from the wallet, in the same operation as the request's calls. */
export function autoTransferCall(token: { address: string; amountRaw: string }, treasury: string): Call {
  return {
    target: getAddress(token.address),
    value: '0',
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [getAddress(treasury), BigInt(token.amountRaw)] }) as Hex,
  };
}
