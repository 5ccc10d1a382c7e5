import { parseUnits, type Address } from 'viem';
import type { ChainName } from '../../src/config/chains.ts';
import { testStablecoinAbi } from '../../src/devnet/contracts.ts';
import type { AgentWalletClient } from '../../src/client/index.ts';
import type { testDevnet } from './env.ts';
import { newPayer } from './payer.ts';

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

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers read loosely in tests

/** One family through the typed client: reads, simulations and executions to `confirmed`, and refusals, as values. */
export function familyCalls(client: AgentWalletClient, slug: string) {
  return {
    async get(path: string, q: Record<string, string> = {}): Promise<Json> {
      const r = await client.protocols.read<Json>(slug, path, q);
      if (!r.ok) throw r.error;
      return r.value;
    },
    /** A read served as POST (a quote: `swap/quote`), with its body. */
    async compute(path: string, body: Json): Promise<Json> {
      const r = await client.protocols.compute<Json>(slug, path, body);
      if (!r.ok) throw r.error;
      return r.value;
    },
    async simulate(action: string, body: Json): Promise<Json> {
      const r = await client.protocols.simulate<Json>(slug, action, body);
      if (!r.ok) throw r.error;
      return r.value;
    },
    /** Executes and waits for the request's end; it must be `confirmed`. */
    async execute(action: string, body: Json) {
      const r = await client.protocols.execute(slug, action, body);
      if (!r.ok) throw r.error;
      const done = await client.waitForTerminal(r.value.request_id, { minIntervalMs: 50, maxIntervalMs: 100, timeoutMs: 60_000 });
      if (!done.ok) throw done.error;
      if (done.value.status !== 'confirmed') throw new Error(`${slug} ${action} ended ${done.value.status}: ${JSON.stringify(done.value.failure)}`);
      return done.value;
    },
    /** The refusal of a call that must fail: its status, code and body. */
    async refusal(p: Promise<{ ok: boolean; error?: unknown }>): Promise<{ status: number; code: string; body: Json }> {
      const r = await p;
      if (r.ok) throw new Error(`${slug}: expected a refusal, got a success`);
      return r.error as { status: number; code: string; body: Json };
    },
  };
}

/** A manual key's 402 for a protocol action, paid by transfer from a fresh payer, then the request to `confirmed`. */
export async function payProtocolAction(
  devnet: ReturnType<typeof testDevnet>,
  client: AgentWalletClient,
  slug: string,
  action: string,
  body: Json,
): Promise<void> {
  const first = await client.protocols.execute(slug, action, body);
  if (first.ok || first.error.status !== 402) throw new Error(`expected 402, got ${first.ok ? 200 : first.error.status}`);
  const quote = first.error.payment!;
  const payer = await newPayer(devnet, quote.chain as ChainName);
  const tx = await payer.pay('USDC', quote.payment_address as Address, BigInt(quote.required_amount_raw.USDC!));
  const paid = await client.protocols.execute(slug, action, body, {
    idempotencyKey: first.idempotencyKey,
    paymentProof: { request_id: quote.request_id, payer: payer.address, token: 'USDC', chain: quote.chain, tx_hash: tx },
  });
  if (!paid.ok) throw paid.error;
  const done = await client.waitForTerminal(paid.value.request_id, { minIntervalMs: 50, maxIntervalMs: 100 });
  if (!done.ok || done.value.status !== 'confirmed') throw new Error(`the paid ${action} did not confirm: ${JSON.stringify(done)}`);
}
