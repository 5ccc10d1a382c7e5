/**
 * The x402 server side on the run's devnet, paid by the real x402 client (@x402/fetch + @x402/evm): a tiny
 * Fastify route answers 402 with PAYMENT-REQUIRED and, on PAYMENT-SIGNATURE, decodes, matches, verifies and
 * settles with this module, as the gateway will.
 */
import { decodePaymentRequiredHeader, encodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme, type ClientEvmSigner } from '@x402/evm';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { getAddress, parseEventLogs, type Address, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { testDevnet } from '../../../test/support/env.ts';
import { createChainWorker, type LocalChainWorker } from '../../chain/index.ts';
import { freshSecret } from '../../../test/support/chainUnderTest.ts';
import { eip3009TokenAbi, erc1271WalletDeployData, testStablecoinAbi } from '../../devnet/contracts.ts';
import {
  authorizationClaimName,
  createX402Facilitator,
  decodePaymentSignature,
  evmNetwork,
  isMalformedPayment,
  matchOffer,
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_RESPONSE_HEADER,
  paymentRequiredHeader,
  paymentRequirements,
  paymentResponseHeader,
  type SignedSettlement,
  type X402Facilitator,
  type X402Quote,
  type X402Refusal,
} from './index.ts';

const devnet = testDevnet();
const CHAIN = 'base';
const chain = devnet.chain(CHAIN);
const client = devnet.publicClient(CHAIN);
const network = evmNetwork(chain.chainId);
/** Mints the payers' tokens and deploys the contract wallet (funded account 10). */
const relayer = devnet.walletClient(CHAIN, 2);
/** The settling EOA: funded account 11, used by nothing else in this file (its nonces are the facilitator's). */
const SETTLER = devnet.manifest.accounts.funded[3]!;
const AMOUNT = 1_234_567n;

const tokens = await Promise.all(
  chain.tokens
    .filter((t) => t.eip3009 !== undefined) // the tokens x402 pays with: USDC and aUSD
    .map(async (t) => {
      // What the service would do too: read the EIP-712 domain the token signs over (ERC-5267).
      const [, name, version] = await client.readContract({ address: t.address, abi: eip3009TokenAbi, functionName: 'eip712Domain' });
      return { symbol: t.symbol, address: t.address, eip712: { name, version } };
    }),
);
const [usdc, ausd] = [tokens.find((t) => t.symbol === 'USDC')!, tokens.find((t) => t.symbol === 'aUSD')!];

const balanceOf = (asset: Address, holder: Address): Promise<bigint> =>
  client.readContract({ address: asset, abi: testStablecoinAbi, functionName: 'balanceOf', args: [holder] });
const authorizationUsed = (asset: Address, from: Address, nonce: Hex): Promise<boolean> =>
  client.readContract({ address: asset, abi: eip3009TokenAbi, functionName: 'authorizationState', args: [from, nonce] });

async function mint(holder: Address, amount = 10_000_000n): Promise<void> {
  for (const t of [usdc, ausd]) {
    await relayer.writeContractSync({ address: t.address, abi: testStablecoinAbi, functionName: 'mint', args: [holder, amount] });
  }
}

/** A payer with tokens and no ETH, as an agent paying by signature would be. */
async function newPayer(): Promise<LocalAccount> {
  const payer = privateKeyToAccount(generatePrivateKey());
  await mint(payer.address);
  return payer;
}

/** The real x402 client, its spend controls opened to the devnet's tokens (x402 knows only real USDC). */
function payingFetch(signer: ClientEvmSigner, opts: { fetch?: typeof fetch; spendControls?: 'default' | 'devnet'; asset?: Address } = {}) {
  const allowedAssets = tokens.flatMap((t) => devnet.manifest.chains.map((c) => ({ network: evmNetwork(c.chainId), asset: t.address })));
  const paying = x402Client.fromConfig({
    schemes: [{ network: 'eip155:*', client: new ExactEvmScheme(signer) }],
    ...(opts.spendControls === 'default' ? {} : { spendControls: { allowedAssets } }),
    ...(opts.asset ? { paymentRequirementsSelector: (_: number, offers: PaymentRequirements[]) => offers.find((o) => o.asset === opts.asset)! } : {}),
  });
  return wrapFetchWithPayment(opts.fetch ?? fetch, paying);
}

/** A fetch that rewrites the offers of a 402 before the client sees them: a client paying other terms. */
function tampering(edit: (offer: PaymentRequirements) => PaymentRequirements): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const header = response.headers.get(PAYMENT_REQUIRED_HEADER);
    if (response.status !== 402 || !header) return response;
    const required = decodePaymentRequiredHeader(header);
    const headers = new Headers(response.headers);
    headers.set(PAYMENT_REQUIRED_HEADER, encodePaymentRequiredHeader({ ...required, accepts: required.accepts.map(edit) }));
    return new Response(await response.text(), { status: 402, headers });
  };
}

/** What the test shop saw: the signatures it was sent, the settles it attempted and how long each step took. */
const shop = {
  quote: undefined as unknown as X402Quote,
  signatures: [] as string[],
  claims: [] as string[],
  settles: 0,
  /** Figures of payments served one at a time (the concurrent test turns this off). */
  timed: true,
  timings: { verify: [] as number[], settle: [] as number[] },
  /** What beforeSend was shown, and whether the chain had the transaction already at that moment. */
  signed: [] as Array<SignedSettlement & { onChain: boolean }>,
  /** beforeSend refuses the next settlement (a claim that could not be written). */
  refuseNext: false,
};

function refuse(reply: FastifyReply, r: X402Refusal) {
  if (isMalformedPayment(r)) return reply.code(400).send({ error: r.reason, message: r.message });
  return reply
    .code(402)
    .header(PAYMENT_REQUIRED_HEADER, paymentRequiredHeader(shop.quote, r.reason))
    .send({ error: 'payment_verification_failed', reason: r.reason, message: r.message, retryable: r.retryable });
}

let app: FastifyInstance;
let url: string;
let facilitator: X402Facilitator;
let worker: LocalChainWorker;

beforeAll(async () => {
  // The chain worker owns the settler's nonces and sends the settlements (chain/worker/accountSender.ts).
  const config = devnet.chainConfigs().find((c) => c.name === CHAIN)!;
  worker = await createChainWorker({ ...config, sendingAccounts: { x402SettlerKey: SETTLER.privateKey } }, { serviceSecret: freshSecret() });
  facilitator = createX402Facilitator({
    chains: [{ chainId: chain.chainId, worker: worker }],
    pollingIntervalMs: 20,
    beforeSend: async (tx) => {
      const onChain = (await client.getTransaction({ hash: tx.hash }).catch(() => undefined)) !== undefined;
      shop.signed.push({ ...tx, onChain });
      if (shop.refuseNext) {
        shop.refuseNext = false;
        throw new Error('the claim could not be written');
      }
    },
  });
  app = Fastify();
  app.post('/execute', async (request, reply) => {
    const header = request.headers['payment-signature'];
    if (typeof header !== 'string') {
      return reply.code(402).header(PAYMENT_REQUIRED_HEADER, paymentRequiredHeader(shop.quote)).send({ error: 'payment_required' });
    }
    shop.signatures.push(header);
    const decoded = decodePaymentSignature(header);
    if (!decoded.ok) return refuse(reply, decoded.error);
    const matched = matchOffer(decoded.value, paymentRequirements(shop.quote));
    if (!matched.ok) return refuse(reply, matched.error);

    let started = performance.now();
    const verified = await facilitator.verify(decoded.value, matched.value);
    if (shop.timed) shop.timings.verify.push(performance.now() - started);
    if (!verified.ok) return refuse(reply, verified.error);

    // The gateway creates its PaymentReceipt under this name here, before settling.
    shop.claims.push(authorizationClaimName(verified.value.authorization));
    shop.settles += 1;
    started = performance.now();
    const settled = await facilitator.settle(decoded.value, matched.value);
    if (shop.timed) shop.timings.settle.push(performance.now() - started);
    reply.header(PAYMENT_RESPONSE_HEADER, paymentResponseHeader(settled, { network: matched.value.network, payer: verified.value.payer }));
    if (!settled.ok) return refuse(reply, settled.error);
    return reply.send({ status: 'queued', transaction: settled.value.transaction });
  });
  url = `${await app.listen({ port: 0, host: '127.0.0.1' })}/execute`;
});

afterAll(async () => {
  await app?.close();
  await worker?.close();
  const summary = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return `median ${s[Math.floor(s.length / 2)]?.toFixed(1)} ms, min ${s[0]?.toFixed(1)}, max ${s.at(-1)?.toFixed(1)} (n=${s.length})`;
  };
  console.log(`x402 on the devnet (anvil, in process, one payment at a time): verify ${summary(shop.timings.verify)}; settle ${summary(shop.timings.settle)}`);
});

beforeEach(() => {
  shop.quote = {
    chainId: chain.chainId,
    payTo: chain.treasury,
    resourceUrl: url,
    tokens: [usdc, ausd].map((t) => ({ ...t, amountRaw: AMOUNT.toString() })),
    maxTimeoutSeconds: 300,
    requestId: `req-${Math.random().toString(36).slice(2)}`,
  };
  shop.signatures = [];
  shop.claims = [];
  shop.settles = 0;
  shop.signed = [];
  shop.refuseNext = false;
});

const post = (f: typeof fetch, headers: Record<string, string> = {}) => f(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
const lastPayment = () => {
  const decoded = decodePaymentSignature(shop.signatures.at(-1)!);
  if (!decoded.ok) throw new Error(decoded.error.message);
  return decoded.value;
};

describe('x402 exact (EIP-3009) paid by the real x402 client', () => {
  test("the client's default spend controls refuse the devnet's tokens: nothing is signed", async () => {
    const payer = await newPayer();
    await expect(post(payingFetch(payer, { spendControls: 'default' }))).rejects.toThrow(/spendControls/);
    expect(shop.signatures).toEqual([]);
  });

  test('an EOA pays: 200 with PAYMENT-RESPONSE, and exactly the amount moved from the payer to payTo', async () => {
    const payer = await newPayer();
    const [treasuryBefore, payerBefore] = await Promise.all([balanceOf(usdc.address, chain.treasury), balanceOf(usdc.address, payer.address)]);

    const response = await post(payingFetch(payer));
    expect(response.status).toBe(200);
    const settlement = decodePaymentResponseHeader(response.headers.get(PAYMENT_RESPONSE_HEADER)!);
    expect(settlement).toEqual({ success: true, payer: payer.address, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/), network, amount: AMOUNT.toString() });
    expect(await response.json()).toEqual({ status: 'queued', transaction: settlement.transaction });

    // The client paid the first offer (USDC); the transfer is the one the receipt shows, from the settler.
    expect(await balanceOf(usdc.address, chain.treasury)).toBe(treasuryBefore + AMOUNT);
    expect(await balanceOf(usdc.address, payer.address)).toBe(payerBefore - AMOUNT);
    const receipt = await client.getTransactionReceipt({ hash: settlement.transaction as Hex });
    expect(receipt.from).toBe(SETTLER.address.toLowerCase());
    const [transfer] = parseEventLogs({ abi: testStablecoinAbi, eventName: 'Transfer', logs: receipt.logs });
    expect(transfer!.args).toEqual({ from: payer.address, to: chain.treasury, value: AMOUNT });
    const payment = lastPayment();
    expect(await authorizationUsed(usdc.address, payer.address, payment.authorization.nonce)).toBe(true);
    expect(shop.claims).toEqual([authorizationClaimName({ chainId: chain.chainId, asset: usdc.address, from: payer.address, nonce: payment.authorization.nonce })]);
  });

  test('the payer may choose another offered token (aUSD)', async () => {
    const payer = await newPayer();
    const before = await balanceOf(ausd.address, chain.treasury);
    const response = await post(payingFetch(payer, { asset: ausd.address }));
    expect(response.status).toBe(200);
    expect(await balanceOf(ausd.address, chain.treasury)).toBe(before + AMOUNT);
  });

  test('a replayed PAYMENT-SIGNATURE is refused by verify: the token spent its nonce (the shop keeps no memory of it)', async () => {
    const payer = await newPayer();
    expect((await post(payingFetch(payer))).status).toBe(200);
    const signature = shop.signatures.at(-1)!;
    const treasuryBefore = await balanceOf(usdc.address, chain.treasury);

    const replay = await post(fetch, { 'PAYMENT-SIGNATURE': signature });
    expect(replay.status).toBe(402);
    expect(await replay.json()).toEqual({
      error: 'payment_verification_failed',
      reason: 'invalid_exact_evm_nonce_already_used',
      message: expect.stringContaining('already used'),
      retryable: false,
    });
    expect(decodePaymentRequiredHeader(replay.headers.get(PAYMENT_REQUIRED_HEADER)!).error).toBe('invalid_exact_evm_nonce_already_used');
    expect(shop.settles).toBe(1);
    expect(await balanceOf(usdc.address, chain.treasury)).toBe(treasuryBefore);

    // Settling it anyway (a claim lost with the process's memory) is refused by the token, for the same reason.
    const payment = lastPayment();
    const settled = await facilitator.settle(payment, paymentRequirements(shop.quote)[0]!);
    expect(settled).toEqual({ ok: false, error: expect.objectContaining({ reason: 'invalid_exact_evm_nonce_already_used', retryable: false }) });
    expect(await balanceOf(usdc.address, chain.treasury)).toBe(treasuryBefore);
  });

  describe('a payment for other terms is refused before anything is settled', () => {
    const refusedBeforeSettling = async (edit: (o: PaymentRequirements) => PaymentRequirements) => {
      const payer = await newPayer();
      const before = await balanceOf(usdc.address, payer.address);
      const response = await post(payingFetch(payer, { fetch: tampering(edit) }));
      expect(response.status).toBe(402);
      const payment = lastPayment();
      expect(shop.settles).toBe(0);
      expect(await authorizationUsed(usdc.address, payer.address, payment.authorization.nonce)).toBe(false);
      expect(await balanceOf(usdc.address, payer.address)).toBe(before);
      return (await response.json()) as { reason: string; message: string; retryable: boolean };
    };

    test('a lower amount', async () => {
      const body = await refusedBeforeSettling((o) => ({ ...o, amount: '1' }));
      expect(body).toMatchObject({ reason: 'invalid_payment_requirements', retryable: false });
      expect(body.message).toContain(`amount 1 (offered ${AMOUNT})`);
    });

    test('another payTo', async () => {
      const thief = privateKeyToAccount(generatePrivateKey()).address;
      const body = await refusedBeforeSettling((o) => ({ ...o, payTo: thief }));
      expect(body).toMatchObject({ reason: 'invalid_payment_requirements' });
      expect(body.message).toContain(`payTo ${thief}`);
    });

    test('another network', async () => {
      const body = await refusedBeforeSettling((o) => ({ ...o, network: evmNetwork(devnet.chain('ethereum').chainId) }));
      expect(body).toMatchObject({ reason: 'invalid_network' });
    });

    test('an authorization that signs other terms than the offer it echoes (value, recipient, too short a window)', async () => {
      const payer = await newPayer();
      const offer = paymentRequirements(shop.quote)[0]!;
      const signedFor = async (terms: PaymentRequirements): Promise<string> => {
        const { x402Version, payload } = await new ExactEvmScheme(payer).createPaymentPayload(2, terms);
        const full: PaymentPayload = { x402Version, resource: { url }, accepted: offer, payload };
        return encodePaymentSignatureHeader(full);
      };
      const reasonOf = async (signature: string) => ((await (await post(fetch, { 'PAYMENT-SIGNATURE': signature })).json()) as { reason: string }).reason;

      expect(await reasonOf(await signedFor({ ...offer, amount: (AMOUNT - 1n).toString() }))).toBe('invalid_exact_evm_payload_authorization_value_mismatch');
      expect(await reasonOf(await signedFor({ ...offer, payTo: payer.address }))).toBe('invalid_exact_evm_recipient_mismatch');
      expect(await reasonOf(await signedFor({ ...offer, maxTimeoutSeconds: 3 }))).toBe('invalid_exact_evm_payload_authorization_valid_before');
      expect(shop.settles).toBe(0);
    });
  });

  test('a payer without the tokens is refused, retryably (it may top up while the authorization is valid)', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    const response = await post(payingFetch(payer));
    expect(response.status).toBe(402);
    expect(await response.json()).toMatchObject({ reason: 'invalid_exact_evm_insufficient_balance', retryable: true });
    expect(shop.settles).toBe(0);

    await mint(payer.address);
    const retried = await post(fetch, { 'PAYMENT-SIGNATURE': shop.signatures.at(-1)! });
    expect(retried.status).toBe(200);
  });

  test('a malformed PAYMENT-SIGNATURE is answered 400, not 402', async () => {
    const response = await post(fetch, { 'PAYMENT-SIGNATURE': Buffer.from('{"x402Version":2}').toString('base64') });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_payload' });
  });

  test('an ERC-1271 contract wallet pays: its owner signs, the wallet vouches for the signature', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const deployed = await relayer.sendTransactionSync({ data: erc1271WalletDeployData(owner.address) });
    const wallet = getAddress(deployed.contractAddress!);
    await mint(wallet);
    const before = await balanceOf(usdc.address, wallet);

    // x402's client signer is an address plus signTypedData: a smart wallet's is its address and its owner's key.
    const signer: ClientEvmSigner = { address: wallet, signTypedData: (message) => owner.signTypedData(message as Parameters<LocalAccount['signTypedData']>[0]) };
    const response = await post(payingFetch(signer));
    expect(response.status).toBe(200);
    expect(decodePaymentResponseHeader(response.headers.get(PAYMENT_RESPONSE_HEADER)!)).toMatchObject({ success: true, payer: wallet });
    expect(await balanceOf(usdc.address, wallet)).toBe(before - AMOUNT);
  });

  test('concurrent payments settle from one settler key, each in its own transaction', async () => {
    const payers: LocalAccount[] = [];
    for (let i = 0; i < 6; i++) payers.push(await newPayer());
    const before = await balanceOf(usdc.address, chain.treasury);
    shop.timed = false;
    const responses = await Promise.all(payers.map((p) => post(payingFetch(p)))).finally(() => (shop.timed = true));
    expect(responses.map((r) => r.status)).toEqual(payers.map(() => 200));
    const transactions = responses.map((r) => decodePaymentResponseHeader(r.headers.get(PAYMENT_RESPONSE_HEADER)!).transaction);
    expect(new Set(transactions).size).toBe(payers.length);
    expect(await balanceOf(usdc.address, chain.treasury)).toBe(before + AMOUNT * BigInt(payers.length));
  });

  test('a facilitator gone between its claim and the send (a leader change): the next gets the same transaction from the worker and sends it once', async () => {
    const payer = await newPayer();
    const offer = paymentRequirements(shop.quote)[0]!;
    const { x402Version, payload } = await new ExactEvmScheme(payer).createPaymentPayload(2, offer);
    const decoded = decodePaymentSignature(encodePaymentSignatureHeader({ x402Version, resource: { url }, accepted: offer, payload }));
    if (!decoded.ok) throw new Error(decoded.error.message);
    const claimed: Hex[] = [];
    const settlerNonce = await client.getTransactionCount({ address: SETTLER.address, blockTag: 'pending' });
    const before = await balanceOf(usdc.address, payer.address);
    // The old leader claims the signed settlement, then never gets to send it.
    let gone!: () => void;
    const claimedByOld = new Promise<void>((resolve) => (gone = resolve));
    const old = createX402Facilitator({
      chains: [{ chainId: chain.chainId, worker: worker }],
      beforeSend: async (tx) => {
        claimed.push(tx.hash);
        gone();
        await new Promise(() => undefined);
      },
    });
    void old.settle(decoded.value, offer);
    await claimedByOld;
    expect(await client.getTransaction({ hash: claimed[0]! }).catch(() => undefined)).toBeUndefined();

    const next = createX402Facilitator({
      chains: [{ chainId: chain.chainId, worker: worker }],
      pollingIntervalMs: 20,
      beforeSend: async (tx) => void claimed.push(tx.hash),
    });
    const settled = await next.settle(decoded.value, offer);
    expect(settled).toMatchObject({ ok: true, value: { transaction: claimed[0] } });
    expect(claimed).toEqual([claimed[0], claimed[0]]);
    expect(await balanceOf(usdc.address, payer.address)).toBe(before - AMOUNT);
    expect(await client.getTransactionCount({ address: SETTLER.address, blockTag: 'latest' })).toBe(settlerNonce + 1);
  });

  test('a settlement is shown to beforeSend signed and not yet sent; one it refuses is never sent, and the next settles', async () => {
    const payer = await newPayer();
    const paid = await post(payingFetch(payer));
    expect(paid.status).toBe(200);
    const settlement = decodePaymentResponseHeader(paid.headers.get(PAYMENT_RESPONSE_HEADER)!).transaction;
    const auth = lastPayment().authorization;
    expect(shop.signed).toEqual([
      { chainId: chain.chainId, hash: settlement, asset: usdc.address, from: payer.address, nonce: auth.nonce, onChain: false },
    ]);

    const refused = await newPayer();
    shop.refuseNext = true;
    const r = await post(payingFetch(refused));
    expect(r.status).toBe(402);
    const unsent = shop.signed.at(-1)!;
    expect(await client.getTransaction({ hash: unsent.hash }).catch(() => undefined)).toBeUndefined();
    expect(await authorizationUsed(usdc.address, refused.address, lastPayment().authorization.nonce)).toBe(false);
    // Its nonce was given back: the next settlement is mined, not stuck behind a gap.
    const next = await post(payingFetch(await newPayer()));
    expect(next.status).toBe(200);
  });
});
