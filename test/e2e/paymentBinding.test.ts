/**
 * A payment belongs to whoever paid it, once (an outside audit's attacks, each replayed on the devnet):
 * - the service's own transfers are no payment: an auto-mode bundle's fee, an x402 settlement and a faucet drip
 *   to the treasury, each presented as an X-Payment-Proof for another key's request, are refused (tx_already_used);
 * - a front-runner who presents a victim's transfer for its own request, at the block it is mined, is refused,
 *   and the victim's request is the one paid: with the spec's plain proof (the quote-unique amount binds it) and
 *   with the payer's signature.
 */
import { ExactEvmScheme } from '@x402/evm';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { encodeFunctionData, keccak256, parseAbi, toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, operationClaimName, transactionClaimName } from '../../src/api/v1alpha1/index.ts';
import { devnetChain, devnetWalletClient } from '../../src/devnet/clients.ts';
import { eip3009TokenAbi, testStablecoinAbi } from '../../src/devnet/contracts.ts';
import { authorizationClaimName, evmNetwork } from '../../src/payments/x402/index.ts';
import { testDevnet } from '../support/env.ts';
import { newPayer as payerOn } from '../support/payer.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { until } from '../support/until.ts';
import { signTransferWithAuthorization } from '../support/x402.ts';

const CHAIN = 'base';
const INCREMENT = encodeFunctionData({ abi: parseAbi(['function increment()']), functionName: 'increment' });

let svc: TestService;
const devnet = () => svc.devnet;
const newPayer = () => payerOn(devnet(), CHAIN);
const body = (agent: string) => ({ agent_id: agent, chain: CHAIN, target_contract: devnet().chain(CHAIN).testContracts.counter, calldata: INCREMENT });
const proofHeader = (p: { payer: string; token: string; tx_hash: string; request_id?: string; signature?: string }) => ({
  'x-payment-proof': JSON.stringify({ chain: CHAIN, ...p }),
});

beforeAll(async () => {
  // x402 settled from the devnet's settler account, as under npm start.
  svc = await startTestService({ payments: { x402SettlerKey: testDevnet().manifest.accounts.settler!.privateKey } });
});
afterAll(async () => {
  await svc?.stop();
});

/** Another key's fresh 402: the request an attacker wants paid. */
async function attackerQuote(agent: string) {
  const { api, clientId } = await svc.newKey('manual');
  const quote = await api.post('/execute', body(agent));
  expect(quote.status).toBe(402);
  return { api, clientId, quote: quote.body };
}

describe('the service’s own transfers pay nothing', () => {
  it('an auto-mode bundle’s fee, presented as a proof: tx_already_used (its operation was claimed when signed)', async () => {
    const { api } = await svc.newKey('auto');
    const wallet = (await api.get(`/wallet?agent_id=auto-fee&chain=${CHAIN}`)).body.smart_wallet_address as Address;
    await (await newPayer()).mint('aUSD', wallet, 100_000_000n);
    const paid = await api.post('/execute', body('auto-fee'));
    expect(paid.status).toBe(200);
    const done = await api.waitForTerminal(paid.body.request_id);
    expect(done.status).toBe('confirmed');
    const stored = await svc.store.get('ExecutionRequest', paid.body.request_id);
    const op = stored.status!.userOperation!;
    expect(stored.status?.payment?.paid).toMatchObject({ method: 'auto', token: 'aUSD', receipt: operationClaimName(CHAIN, op.hash) });
    expect((await svc.store.get('PaymentReceipt', operationClaimName(CHAIN, op.hash))).spec).toMatchObject({ method: 'auto', requestId: paid.body.request_id });

    const attacker = await attackerQuote('steal-auto');
    const r = await attacker.api.post(
      '/execute',
      body('steal-auto'),
      proofHeader({ payer: wallet, token: 'aUSD', tx_hash: done.tx_hash, request_id: attacker.quote.request_id }),
    );
    expect(r.status).toBe(402);
    expect(r.body).toMatchObject({ error: 'payment_verification_failed', reason: 'tx_already_used' });
  });

  it('an x402 settlement, presented as a proof: tx_already_used (claimed when signed, before it was sent)', async () => {
    const { apiKey } = await svc.newKey('manual');
    const signer = privateKeyToAccount(generatePrivateKey());
    await (await newPayer()).mint('USDC', signer.address, 100_000_000n);
    const allowedAssets = [{ network: evmNetwork(devnet().chain(CHAIN).chainId), asset: devnet().chain(CHAIN).tokens.find((t) => t.symbol === 'USDC')!.address }];
    const paying = wrapFetchWithPayment(
      fetch,
      x402Client.fromConfig({ schemes: [{ network: 'eip155:*', client: new ExactEvmScheme(signer) }], spendControls: { allowedAssets } }),
    );
    const response = await paying(`${svc.url}/execute`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body('x402-settled')),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    const settlement = decodePaymentResponseHeader(response.headers.get('payment-response')!).transaction as Hex;
    const claim = await svc.store.get('PaymentReceipt', transactionClaimName(CHAIN, settlement));
    expect(claim.spec).toMatchObject({ method: 'x402', txHash: settlement, requestId: ((await response.json()) as { request_id: string }).request_id });

    const attacker = await attackerQuote('steal-x402');
    const r = await attacker.api.post(
      '/execute',
      body('steal-x402'),
      proofHeader({ payer: signer.address, token: 'USDC', tx_hash: settlement, request_id: attacker.quote.request_id }),
    );
    expect(r.status).toBe(402);
    expect(r.body.reason).toBe('tx_already_used');
  });

  it('a faucet drip sent to the treasury, presented as a proof: tx_already_used (the faucet is the service’s account)', async () => {
    const faucet = devnet().manifest.accounts.faucet!;
    const drip = devnetWalletClient(devnetChain(devnet().chain(CHAIN)), faucet.privateKey);
    await devnet().publicClient(CHAIN).request({ method: 'anvil_setBalance', params: [faucet.address, '0xde0b6b3a7640000'] } as never);
    const aUsd = devnet().chain(CHAIN).tokens.find((t) => t.symbol === 'aUSD')!.address;
    await drip.writeContractSync({ address: aUsd, abi: testStablecoinAbi, functionName: 'mint', args: [faucet.address, 100_000_000n] });
    const attacker = await attackerQuote('steal-drip');
    // The drip carries exactly the attacker's quoted amount: only the sender tells it apart.
    const sent = await drip.writeContractSync({
      address: aUsd,
      abi: testStablecoinAbi,
      functionName: 'transfer',
      args: [attacker.quote.payment_address, BigInt(attacker.quote.required_amount_raw.aUSD)],
    });
    const r = await attacker.api.post(
      '/execute',
      body('steal-drip'),
      proofHeader({ payer: faucet.address, token: 'aUSD', tx_hash: sent.transactionHash, request_id: attacker.quote.request_id }),
    );
    expect(r.status).toBe(402);
    expect(r.body.reason).toBe('tx_already_used');
  });
});

describe('a front-runner cannot take a victim’s payment', () => {
  /** The victim's 402, its transfer of exactly the quoted amount, and the attacker's own 402, on another key. */
  async function victimPays(agent: string) {
    const victim = await svc.newKey('manual');
    const quote = (await victim.api.post('/execute', body(agent))).body;
    const attacker = await attackerQuote(`${agent}-attacker`);
    const payer = await newPayer();
    const tx = await payer.pay('USDC', quote.payment_address, BigInt(quote.required_amount_raw.USDC));
    return { victim, quote, attacker, payer, tx };
  }

  it('without a signature: the quote-unique amount binds the transfer to the victim’s quote', async () => {
    const { victim, quote, attacker, payer, tx } = await victimPays('victim-plain');
    // Two open quotes never ask for the same amount.
    expect(attacker.quote.required_amount_raw.USDC).not.toBe(quote.required_amount_raw.USDC);

    // At the block it is mined, the attacker presents it first: for its own request, then naming the victim's.
    const own = await attacker.api.post('/execute', body('victim-plain-attacker'), proofHeader({ payer: payer.address, token: 'USDC', tx_hash: tx, request_id: attacker.quote.request_id }));
    expect(own.status).toBe(402);
    expect(own.body.reason).toMatch(/^amount_(mismatch|insufficient)$/);
    const named = await attacker.api.post('/execute', body('victim-plain-attacker'), proofHeader({ payer: payer.address, token: 'USDC', tx_hash: tx, request_id: quote.request_id }));
    expect(named.status).toBe(402); // another key's request is never touched: a new request of the attacker's, refused
    expect(named.body.request_id).not.toBe(quote.request_id);

    const paid = await victim.api.post('/execute', body('victim-plain'), proofHeader({ payer: payer.address, token: 'USDC', tx_hash: tx, request_id: quote.request_id }));
    expect(paid.status).toBe(200);
    expect(paid.body.request_id).toBe(quote.request_id);
    expect((await victim.api.waitForTerminal(quote.request_id)).status).toBe('confirmed');
  });

  it('with the payer’s signature: the attacker cannot sign for the payer, and the victim’s signed proof pays', async () => {
    const { victim, quote, attacker, payer, tx } = await victimPays('victim-signed');
    const impostor = await newPayer();
    const forged = await impostor.signProof({ txHash: tx, client: attacker.clientId, requestId: attacker.quote.request_id });
    const r = await attacker.api.post(
      '/execute',
      body('victim-signed-attacker'),
      proofHeader({ payer: payer.address, token: 'USDC', tx_hash: tx, request_id: attacker.quote.request_id, signature: forged }),
    );
    expect(r.status).toBe(402);
    expect(r.body.reason).toBe('signature_invalid');

    const signature = await payer.signProof({ txHash: tx, client: victim.clientId, requestId: quote.request_id });
    const header = proofHeader({ payer: payer.address, token: 'USDC', tx_hash: tx, request_id: quote.request_id, signature });
    // The victim's signed header itself, leaked and sent verbatim by another key: it names the victim's request,
    // which another key never touches, so it pays nothing of the attacker's.
    const replayed = await attacker.api.post('/execute', body('victim-signed'), header);
    expect(replayed.status).toBe(402);
    expect(replayed.body.reason).toBe('signature_invalid');
    const paid = await victim.api.post('/execute', body('victim-signed'), header);
    expect(paid.status).toBe(200);
    expect((await victim.api.waitForTerminal(quote.request_id)).status).toBe('confirmed');
  });
});

describe('an x402 authorization spent by its payer’s own transaction', () => {
  it('pays only the x402 request that claimed it: the transaction presented as a proof for another is tx_already_used', async () => {
    const x = await attackerQuote('x402-claimed');
    const usdc = devnet().chain(CHAIN).tokens.find((t) => t.symbol === 'USDC')!.address;
    const client = devnet().publicClient(CHAIN);
    const payer = await newPayer();
    await payer.mint('USDC', payer.address, 100_000_000n);
    const [, name, version] = await client.readContract({ address: usdc, abi: eip3009TokenAbi, functionName: 'eip712Domain' });
    const authorization = {
      from: payer.address,
      to: x.quote.payment_address as Address,
      value: 100_000_000n,
      validAfter: 0n,
      validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
      nonce: keccak256(toHex(`x402-claimed-${Date.now()}`)),
    };
    const signature = await signTransferWithAuthorization(payer.wallet.account, { name, version, chainId: devnet().chain(CHAIN).chainId, verifyingContract: usdc }, authorization);
    // The service's state once it took the PAYMENT-SIGNATURE of x's request: the authorization claimed for it, and
    // its settlement about to be sent. The payer sends the authorization first, from its own account.
    const chainId = devnet().chain(CHAIN).chainId;
    await svc.store.create({
      apiVersion: API_VERSION,
      kind: 'PaymentReceipt',
      metadata: { name: authorizationClaimName({ chainId, asset: usdc, from: payer.address, nonce: authorization.nonce }), namespace: 'default' },
      spec: { chain: CHAIN, method: 'x402', token: 'USDC', payer: payer.address, amountRaw: '100000000', apiClient: x.clientId, requestId: x.quote.request_id },
    });
    const spent = await payer.wallet.writeContractSync({
      address: usdc,
      abi: eip3009TokenAbi,
      functionName: 'transferWithAuthorization',
      args: [authorization.from, authorization.to, authorization.value, authorization.validAfter, authorization.validBefore, authorization.nonce, signature],
    });

    const other = await attackerQuote('x402-claimed-other');
    const proof = await payer.signProof({ txHash: spent.transactionHash, client: other.clientId, requestId: other.quote.request_id });
    const r = await other.api.post(
      '/execute',
      body('x402-claimed-other'),
      proofHeader({ payer: payer.address, token: 'USDC', tx_hash: spent.transactionHash, request_id: other.quote.request_id, signature: proof }),
    );
    expect(r.status).toBe(402);
    expect(r.body.reason).toBe('tx_already_used');
    expect(r.body.message).toContain(x.quote.request_id);
  });
});

describe('a request made again under its Idempotency-Key once the first was archived', () => {
  let brief: TestService;
  beforeAll(async () => {
    brief = await startTestService({ retentionSeconds: 1 });
  });
  afterAll(async () => {
    await brief?.stop();
  });

  it('is another request: the first one’s signed proof, sent again verbatim, pays it nothing', async () => {
    const { api, clientId } = await brief.newKey('manual');
    const headers = { 'idempotency-key': 'pay-once' };
    const quote = (await api.post('/execute', body('idem-archived'), headers)).body;
    const payer = await newPayer();
    const tx = await payer.pay('USDC', quote.payment_address, BigInt(quote.required_amount_raw.USDC));
    const proof = proofHeader({
      payer: payer.address,
      token: 'USDC',
      tx_hash: tx,
      request_id: quote.request_id,
      signature: await payer.signProof({ txHash: tx, client: clientId, requestId: quote.request_id }),
    });
    expect((await api.post('/execute', body('idem-archived'), { ...headers, ...proof })).status).toBe(200);
    expect((await api.waitForTerminal(quote.request_id)).status).toBe('confirmed');
    // Archived and deleted: the Idempotency-Key is free again, and makes a new request of the same name.
    await until('archived', async () => ((await brief.store.get('ExecutionRequest', quote.request_id).catch(() => undefined)) === undefined ? true : undefined), 20_000);
    const again = await api.post('/execute', body('idem-archived'), { ...headers, ...proof });
    expect(again.status).toBe(402);
    expect(again.body).toMatchObject({ request_id: quote.request_id, reason: 'tx_already_used' });
  });
});
