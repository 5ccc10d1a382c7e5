import { x402Client, x402HTTPClient } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm';
import { createPublicClient, createWalletClient, erc20Abi, getAddress, http, isAddressEqual, type Address, type Hex, type LocalAccount } from 'viem';
import type { ChainName } from '../config/chains.ts';
import { proofMessage } from '../payments/proofSignature.ts';
import type { PaymentProofHeader, PaymentRequired, PaymentVerificationFailed } from '../api/http/index.ts';
import { AgentWalletError } from '../lib/errors.ts';
import { err, ok, type Result } from '../lib/result.ts';
import type { ApiError } from './errors.ts';

/**
 * Paying a 402 (spec 2.8) from a payer's own key, for the CLI's `pay` and the MCP server's `pay` tool. Two ways:
 * - `x402`: sign an EIP-3009 authorization for the offer in PAYMENT-REQUIRED; the service settles it. No RPC
 *   endpoint and no gas needed; only for tokens the offer lists (EIP-3009 stablecoins).
 * - `transfer`: send the ERC-20 transfer to `payment_address` on the chain (needs the chain's RPC URL and
 *   native coin for gas), then prove it with X-Payment-Proof (spec 2.5).
 * The payer pays exactly `required_amount_raw` of one of `accepted_tokens`, to `payment_address`, nothing else.
 */

export type PaymentMethod = 'x402' | 'transfer';

export interface Payer {
  account: LocalAccount;
  /** Per chain, for paying by transfer (and for checking the payer's balances before choosing a token). */
  rpcUrls?: Partial<Record<ChainName, string>>;
  /** The RPC URL for the quote's chain when `rpcUrls` names none for it (one given on a command line). */
  rpcUrl?: string | undefined;
}

export interface PaymentChoice {
  /** Default: x402 when the 402 offers it for the token, else transfer. */
  method?: PaymentMethod | undefined;
  /** Default: the first accepted token the payer holds enough of (in the quote's order). */
  token?: string | undefined;
}

/** A payment made, and what to send with the re-submission. */
export interface MadePayment {
  method: PaymentMethod;
  token: string;
  amountRaw: string;
  payTo: Address;
  chain: string;
  /** The transfer's hash (transfer); x402 settles later, on the service's side. */
  txHash?: Hex;
  attach: { paymentProof: PaymentProofHeader } | { paymentSignature: string };
}

export type PayErrorCode =
  | 'not_a_quote' // the answer is not a 402 with a quote
  | 'token_not_accepted' // the token asked for is not in accepted_tokens
  | 'no_x402_offer' // x402 asked for, but the 402 offers none for that token
  | 'no_rpc_url' // paying by transfer needs the chain's RPC URL
  | 'token_address_unknown' // the service did not say where the token lives on that chain
  | 'insufficient_balance' // the payer holds too little of every acceptable token
  | 'transfer_failed' // the transfer reverted or was not mined
  | 'rpc_unavailable' // the chain's RPC endpoint did not answer
  | 'no_payer' // no payer key is configured
  | 'unknown_request'; // the request was not sent from here (not in the journal): its body is unknown

export class PayError extends AgentWalletError<PayErrorCode> {
  override readonly name = 'PayError';
}

/**
 * Pays the quote of `answer` (a 402 ApiError) from `payer`. `tokenAddress` says where an accepted token lives
 * on the quote's chain (from GET /wallet/balance); it is needed only for a transfer.
 */
export async function payQuote(
  answer: ApiError,
  payer: Payer,
  choice: PaymentChoice,
  tokenAddress: (symbol: string) => Address | undefined,
  /** The API client the payment is for (its key's id): the payer's signature of the proof names it. */
  clientId?: string | undefined,
): Promise<Result<MadePayment, PayError>> {
  const quote = answer.payment;
  if (!quote) return err(new PayError('not_a_quote', `the answer is ${answer.status} ${answer.code}, not a 402 with a quote`));
  const chain = quote.chain as ChainName;
  const offer = answer.paymentRequiredHeader ? x402Offer(answer.paymentRequiredHeader) : undefined;
  const rpcUrl = payer.rpcUrls?.[chain] ?? payer.rpcUrl;
  if (choice.token !== undefined && !quote.accepted_tokens.includes(choice.token)) {
    return err(new PayError('token_not_accepted', `${choice.token} is not accepted here; accepted: ${quote.accepted_tokens.join(', ')}`));
  }
  const offeredFor = (symbol: string) => {
    const address = tokenAddress(symbol);
    return offer?.accepts.find((a) => (address ? isAddressEqual(a.asset as Address, address) : false) && a.amount === quote.required_amount_raw[symbol]);
  };
  const candidates = choice.token !== undefined ? [choice.token] : quote.accepted_tokens;
  const usable = candidates.filter((symbol) => {
    if (choice.method === 'x402') return offeredFor(symbol) !== undefined;
    if (choice.method === 'transfer') return true;
    return offeredFor(symbol) !== undefined || rpcUrl !== undefined;
  });
  if (usable.length === 0) {
    if (choice.method === 'x402' || rpcUrl === undefined) {
      return err(
        new PayError(
          choice.method === 'x402' ? 'no_x402_offer' : 'no_rpc_url',
          choice.method === 'x402'
            ? `the 402 offers no x402 payment for ${candidates.join(' or ')}; pay by transfer instead`
            : `the 402 offers no x402 payment for ${candidates.join(' or ')}, and paying by transfer needs the RPC URL of ${chain}`,
        ),
      );
    }
  }

  // With an RPC endpoint, pick a token the payer can actually cover; without one, trust the first.
  let token = usable[0]!;
  if (rpcUrl !== undefined) {
    const balances = await payerBalances(rpcUrl, payer.account.address, usable, tokenAddress);
    if (!balances.ok) return balances;
    const covered = usable.find((s) => (balances.value[s] ?? 0n) >= BigInt(quote.required_amount_raw[s] ?? '0'));
    if (!covered) {
      const held = usable.map((s) => `${s} ${balances.value[s] ?? 0n} (needs ${quote.required_amount_raw[s]})`).join(', ');
      return err(new PayError('insufficient_balance', `the payer ${payer.account.address} holds too little: ${held}`));
    }
    token = covered;
  }
  const amountRaw = quote.required_amount_raw[token]!;
  const payTo = getAddress(quote.payment_address);
  const offered = offeredFor(token);
  const method: PaymentMethod = choice.method ?? (offered ? 'x402' : 'transfer');

  if (method === 'x402') {
    if (!offered || !offer) return err(new PayError('no_x402_offer', `the 402 offers no x402 payment for ${token}`));
    // Sign for exactly the offered entry of this token; the client's spend controls allow that asset and amount only.
    const only = { ...offer, accepts: [offered] };
    const client = new x402HTTPClient(
      x402Client.fromConfig({
        schemes: [{ network: offered.network, client: new ExactEvmScheme(payer.account) }],
        spendControls: { allowedAssets: [{ network: offered.network, asset: offered.asset, maxAmountPerPayment: offered.amount }] },
      }),
    );
    const payload = await client.createPaymentPayload(only);
    const header = client.encodePaymentSignatureHeader(payload);
    const signature = header['PAYMENT-SIGNATURE'] ?? Object.values(header)[0]!;
    return ok({ method, token, amountRaw, payTo, chain, attach: { paymentSignature: signature } });
  }

  if (rpcUrl === undefined) return err(new PayError('no_rpc_url', `paying by transfer needs the RPC URL of ${chain}`));
  const address = tokenAddress(token);
  if (!address) return err(new PayError('token_address_unknown', `the service lists no ${token} address on ${chain}`));
  const sent = await transfer(rpcUrl, payer.account, address, payTo, BigInt(amountRaw));
  if (!sent.ok) return sent;
  return ok({
    method,
    token,
    amountRaw,
    payTo,
    chain,
    txHash: sent.value,
    attach: {
      paymentProof: {
        request_id: quote.request_id,
        payer: payer.account.address,
        token,
        chain: quote.chain,
        tx_hash: sent.value,
        // The payer signs for its own transfer, for this key and request: nobody who sees it on chain, or the header
        // itself, can present it for another.
        ...(clientId !== undefined && {
          signature: await payer.account.signMessage({
            message: proofMessage({ chain: quote.chain, txHash: sent.value, client: clientId, requestId: quote.request_id }),
          }),
        }),
      },
    },
  });
}

/** The quote of a 402, whichever of the two bodies it has. */
export type Quote = PaymentRequired | PaymentVerificationFailed;

function x402Offer(header: string) {
  try {
    return new x402HTTPClient(new x402Client()).getPaymentRequiredResponse((name) => (name.toLowerCase() === 'payment-required' ? header : null));
  } catch {
    return undefined; // an offer we cannot read is no offer: the transfer path remains
  }
}

async function payerBalances(
  rpcUrl: string,
  owner: Address,
  symbols: readonly string[],
  tokenAddress: (symbol: string) => Address | undefined,
): Promise<Result<Record<string, bigint>, PayError>> {
  const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 1 }) });
  try {
    const entries = await Promise.all(
      symbols.map(async (s) => {
        const address = tokenAddress(s);
        const balance = address ? await client.readContract({ address, abi: erc20Abi, functionName: 'balanceOf', args: [owner] }) : 0n;
        return [s, balance] as const;
      }),
    );
    return ok(Object.fromEntries(entries));
  } catch (e) {
    return err(new PayError('rpc_unavailable', `${originOf(rpcUrl)} did not answer: ${(e as Error).message.split('\n')[0]}`, { cause: e }));
  }
}

async function transfer(rpcUrl: string, account: LocalAccount, token: Address, to: Address, amount: bigint): Promise<Result<Hex, PayError>> {
  const transport = http(rpcUrl, { retryCount: 1 });
  const wallet = createWalletClient({ account, transport });
  const reader = createPublicClient({ transport, pollingInterval: 250 });
  let hash: Hex;
  try {
    hash = await wallet.writeContract({ chain: null, address: token, abi: erc20Abi, functionName: 'transfer', args: [to, amount] });
  } catch (e) {
    return err(new PayError('transfer_failed', `the transfer was not sent: ${(e as { shortMessage?: string }).shortMessage ?? (e as Error).message}`, { cause: e }));
  }
  try {
    const receipt = await reader.waitForTransactionReceipt({ hash, timeout: 120_000 });
    if (receipt.status !== 'success') return err(new PayError('transfer_failed', `the transfer ${hash} reverted`, { details: { tx_hash: hash } }));
    return ok(hash);
  } catch (e) {
    return err(new PayError('transfer_failed', `the transfer ${hash} was not mined in time: look it up before paying again`, { cause: e, details: { tx_hash: hash } }));
  }
}

const originOf = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return 'the RPC endpoint';
  }
};
