/**
 * The manual payment flow's latency, one agent, one request at a time: execute → 402 (simulated and quoted),
 * the caller's own ERC-20 transfer to the treasury (mined: the chain's part, a reference from the same run),
 * the same request with X-Payment-Proof → 200 queued (verified on chain and claimed), and queued → confirmed.
 * The sponsored execute → confirmed latency printed before it is the other reference.
 */
import { encodeFunctionData, erc20Abi, type Address, type Hex } from 'viem';
import type { ChainName } from '../src/config/chains.ts';
import { devnetChain, devnetWalletClient } from '../src/devnet/clients.ts';
import { counterAbi } from '../src/devnet/contracts.ts';
import type { DevnetManifest } from '../src/devnet/manifest.ts';
import { fmt, pct } from './load.ts';

export interface ManualFlowTarget {
  url: string;
  /** A key in the manual mode. */
  apiKey: string;
  manifest: DevnetManifest;
  /** Private key of a funded devnet account: it pays every quote in USDC. */
  payerKey: Hex;
  chain?: ChainName;
}

export interface ManualFlowLatency {
  quote: number[];
  pay: number[];
  verify: number[];
  confirm: number[];
  total: number[];
}

export async function measureManualFlow(t: ManualFlowTarget, n: number): Promise<ManualFlowLatency> {
  const chainName = t.chain ?? 'base';
  const chain = t.manifest.chains.find((c) => c.name === chainName)!;
  const usdc = chain.tokens.find((x) => x.symbol === 'USDC')!.address;
  const payer = devnetWalletClient(devnetChain(chain), t.payerKey);
  const body = JSON.stringify({
    agent_id: 'manual-bench-agent',
    chain: chainName,
    target_contract: chain.testContracts.counter,
    calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }),
  });
  const post = async (headers: Record<string, string> = {}) => {
    const res = await fetch(`${t.url}/execute`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': t.apiKey, ...headers }, body });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const r: ManualFlowLatency = { quote: [], pay: [], verify: [], confirm: [], total: [] };
  for (let i = 0; i <= n; i++) {
    const t0 = performance.now();
    const quoted = await post();
    if (quoted.status !== 402) throw new Error(`execute without payment: HTTP ${quoted.status} ${JSON.stringify(quoted.body)}`);
    const t1 = performance.now();
    const receipt = await payer.writeContractSync({
      address: usdc,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [quoted.body.payment_address as Address, BigInt(quoted.body.required_amount_raw.USDC)],
    });
    const t2 = performance.now();
    const proof = { request_id: quoted.body.request_id, payer: payer.account.address, token: 'USDC', chain: chainName, tx_hash: receipt.transactionHash };
    const paid = await post({ 'x-payment-proof': JSON.stringify(proof) });
    if (paid.status !== 200) throw new Error(`execute with proof: HTTP ${paid.status} ${JSON.stringify(paid.body)}`);
    const t3 = performance.now();
    for (;;) {
      const s = await fetch(`${t.url}/status/${paid.body.request_id}`, { headers: { 'x-api-key': t.apiKey } });
      const status = ((await s.json()) as { status: string }).status;
      if (status === 'confirmed') break;
      if (status === 'reverted' || status === 'failed') throw new Error(`request ${paid.body.request_id} ended ${status}`);
      await new Promise((res) => setTimeout(res, 5));
    }
    const t4 = performance.now();
    if (i === 0) continue; // the first also deploys the wallet
    r.quote.push(t1 - t0);
    r.pay.push(t2 - t1);
    r.verify.push(t3 - t2);
    r.confirm.push(t4 - t3);
    r.total.push(t4 - t0);
  }
  return r;
}

export function printManualFlow(r: ManualFlowLatency): void {
  const line = (xs: number[]) => `p50 ${fmt(pct(xs, 50))}, p99 ${fmt(pct(xs, 99))}`;
  console.log(`manual payment flow, one agent, ${r.total.length} sequential: 402 → paid → confirmed ${line(r.total)}`);
  console.log(`  execute → 402 (simulated, quoted): ${line(r.quote)}`);
  console.log(`  reference, same run: the caller's USDC transfer, sent → mined: ${line(r.pay)}`);
  console.log(`  same request + X-Payment-Proof → 200 queued (verified on chain, claimed): ${line(r.verify)}`);
  console.log(`  queued → confirmed (polled every 5 ms): ${line(r.confirm)}`);
}
