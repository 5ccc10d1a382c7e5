/**
 * The service sponsored by an ERC-7677 paymaster service (issue 22 part 2): on ethereum and base, an independent
 * test server (test/support/erc7677Server.ts) signs for a second VerifyingPaymaster with a key the service never
 * holds, and the real Alto bundles; arbitrum keeps the built-in bundler and paymaster signer in the same service.
 * Executions reach `confirmed`, paid by the paymaster each chain is configured with.
 */
import { encodeFunctionData, parseEventLogs, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entryPoint07Abi } from '../../src/chain/abi.ts';
import type { ChainName } from '../../src/config/chains.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { startAlto, type AltoProcess } from '../support/alto.ts';
import { testDevnet } from '../support/env.ts';
import { startErc7677Server, type Erc7677Server } from '../support/erc7677Server.ts';
import { newPayer } from '../support/payer.ts';
import { startTestService, type TestService } from '../support/service.ts';

const SERVED: ChainName[] = ['ethereum', 'base'];
const INCREMENT = encodeFunctionData({ abi: counterAbi, functionName: 'increment' });
const devnet = testDevnet();
const body = (chain: ChainName, agent: string) => ({ agent_id: agent, chain, target_contract: devnet.chain(chain).testContracts.counter, calldata: INCREMENT, value: '0' });

describe('a paymaster service (ERC-7677) sponsors ethereum and base, Alto bundles them', () => {
  const altos = new Map<ChainName, AltoProcess>();
  const services = new Map<ChainName, Erc7677Server>();
  let svc: TestService;
  beforeAll(async () => {
    for (const chain of SERVED) {
      const [alto, pm] = await Promise.all([startAlto(chain), startErc7677Server(chain)]);
      altos.set(chain, alto);
      services.set(chain, pm);
    }
    svc = await startTestService({
      bundlers: Object.fromEntries(SERVED.map((c) => [c, altos.get(c)!.bundlerConfig()])),
      sponsors: Object.fromEntries(SERVED.map((c) => [c, { paymaster: services.get(c)!.paymaster, sponsor: { kind: 'erc7677', url: services.get(c)!.url, timeoutMs: 5_000 } }])),
    });
  }, 180_000);
  afterAll(async () => {
    await svc?.stop();
    await Promise.all([...altos.values()].map((a) => a.stop()));
    await Promise.all([...services.values()].map((s) => s.close()));
  });

  /** The confirmed request's bundle: its sender and the request's UserOperationEvent. */
  const confirmed = async (chain: ChainName, api: TestService['anonymous'], id: string) => {
    const status = await api.waitForTerminal(id, 60_000);
    expect(status.status, JSON.stringify(status)).toBe('confirmed');
    const receipt = await devnet.publicClient(chain).getTransactionReceipt({ hash: status.tx_hash as Hex });
    const events = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
    return { from: receipt.from.toLowerCase(), paymasters: events.map((e) => e.args.paymaster) };
  };

  it.each(SERVED)('%s: a sponsored execution is confirmed, paid by the second paymaster, its bundle sent by Alto', async (chain) => {
    const { api } = await svc.newKey('sponsored');
    const before = services.get(chain)!.calls.pm_getPaymasterData ?? 0;
    const r = await api.post('/execute', body(chain, `pm-sp-${chain}`));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const { from, paymasters } = await confirmed(chain, api, r.body.request_id);
    expect(from).toBe(altos.get(chain)!.executor.toLowerCase());
    expect(paymasters).toContain(services.get(chain)!.paymaster);
    expect(paymasters).not.toContain(devnet.chain(chain).paymaster);
    expect(services.get(chain)!.calls.pm_getPaymasterData).toBeGreaterThan(before);
  });

  it('base, auto mode: the fee paid from the wallet in the same operation, sponsored by the service', async () => {
    const { api } = await svc.newKey('auto');
    const wallet = (await api.get('/wallet?agent_id=pm-auto&chain=base')).body.smart_wallet_address as Address;
    await (await newPayer(devnet, 'base')).mint('USDC', wallet, 100_000_000n);
    const r = await api.post('/execute', body('base', 'pm-auto'));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const { paymasters } = await confirmed('base', api, r.body.request_id);
    expect(paymasters).toContain(services.get('base')!.paymaster);
  });

  it('arbitrum, in the same service, keeps the built-in bundler and the devnet paymaster\'s signer', async () => {
    const { api } = await svc.newKey('sponsored');
    const r = await api.post('/execute', body('arbitrum', 'pm-builtin'));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const { paymasters } = await confirmed('arbitrum', api, r.body.request_id);
    expect(paymasters).toContain(devnet.chain('arbitrum').paymaster);
  });

  it('a refusal by the service fails the request with its message', async () => {
    const { api } = await svc.newKey('sponsored');
    services.get('ethereum')!.refuse('outside the sponsorship policy');
    try {
      const r = await api.post('/execute', body('ethereum', 'pm-refused'));
      const status = r.status === 200 ? await api.waitForTerminal(r.body.request_id, 60_000) : r.body;
      expect(JSON.stringify(status)).toContain('outside the sponsorship policy');
    } finally {
      services.get('ethereum')!.refuse(undefined);
    }
  });
});
