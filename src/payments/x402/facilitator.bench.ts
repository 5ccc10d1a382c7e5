/**
 * What x402 verify and settle cost on the devnet, in process (no HTTP): `npx vitest bench --run
 * src/payments/x402/facilitator.bench.ts` (uses the run's devnet, or starts one). Figures only.
 */
import type { PaymentPayload } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm';
import { afterAll, bench, describe } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createChainWorker } from '../../chain/index.ts';
import { benchChain, freshSecret } from '../../../test/support/chainUnderTest.ts';
import { devnetAccounts } from '../../devnet/accounts.ts';
import { devnetChain, devnetPublicClient, devnetWalletClient } from '../../devnet/clients.ts';
import { eip3009TokenAbi, testStablecoinAbi } from '../../devnet/contracts.ts';
import { createX402Facilitator, decodePaymentSignature, paymentRequirements, type X402Payment } from './index.ts';
import { encodePaymentSignatureHeader } from '@x402/core/http';

const devnet = await benchChain('base');
const { config } = devnet;
const chain = devnetChain({ chainId: config.chainId, name: config.name, rpcUrl: config.rpcUrl });
const client = devnetPublicClient(chain);
const accounts = devnetAccounts();
const usdc = config.tokens.find((t) => t.symbol === 'USDC')!;
const [, name, version] = await client.readContract({ address: usdc.address, abi: eip3009TokenAbi, functionName: 'eip712Domain' });

const worker = await createChainWorker({ ...config, sendingAccounts: { x402SettlerKey: accounts.funded[3]!.privateKey } }, { serviceSecret: freshSecret() });
const facilitator = createX402Facilitator({ chains: [{ chainId: config.chainId, worker: worker }], pollingIntervalMs: 20 });
const offer = paymentRequirements({
  chainId: config.chainId,
  payTo: config.treasury,
  resourceUrl: 'http://127.0.0.1/execute',
  tokens: [{ symbol: 'USDC', address: usdc.address, amountRaw: '1000', eip712: { name, version } }],
  maxTimeoutSeconds: 300,
  requestId: 'bench',
})[0]!;

const payer = privateKeyToAccount(generatePrivateKey());
await devnetWalletClient(chain, accounts.funded[2]!.privateKey).writeContractSync({
  address: usdc.address,
  abi: testStablecoinAbi,
  functionName: 'mint',
  args: [payer.address, 10n ** 12n],
});

async function signedPayment(): Promise<X402Payment> {
  const { x402Version, payload } = await new ExactEvmScheme(payer).createPaymentPayload(2, offer);
  const full: PaymentPayload = { x402Version, accepted: offer, payload };
  const decoded = decodePaymentSignature(encodePaymentSignatureHeader(full));
  if (!decoded.ok) throw new Error(decoded.error.message);
  return decoded.value;
}

// Signed ahead, so that the settle figure is the settle alone.
const verifiable = await signedPayment();
const unspent = await Promise.all(Array.from({ length: 80 }, signedPayment));
const expectOk = (r: { ok: boolean }) => {
  if (!r.ok) throw new Error(JSON.stringify(r));
};

afterAll(async () => {
  await worker.close();
  await devnet.stop();
});

describe('x402 exact on the devnet, in process', () => {
  bench('verify (signature, terms, simulated transferWithAuthorization)', () => facilitator.verify(verifiable, offer).then(expectOk), { iterations: 50, time: 0 });
  bench('settle (re-verify, send, receipt at 20 ms polling)', () => facilitator.settle(unspent.pop()!, offer).then(expectOk), { iterations: 50, time: 0, warmupIterations: 5 });
});
