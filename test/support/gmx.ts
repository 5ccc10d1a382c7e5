/**
 * What the perp-v2 tests share on the devnet's GMX: its WETH/USD price (the keeper's and the oracle API's), a plain
 * HTTP receiver collecting webhook events by request, and a wait for the keeper to settle what a request created.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseUnits } from 'viem';
import type { AgentWalletClient } from '../../src/client/index.ts';
import { devnetChain, devnetWalletClient } from '../../src/devnet/clients.ts';
import { devnetPriceFeedAbi } from '../../src/devnet/contracts.ts';
import { gmxDeployments } from '../../src/devnet/protocols/gmxV2/index.ts';
import type { testDevnet } from './env.ts';
import { until } from './until.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers read loosely in tests

/** Sets the devnet's WETH/USD feed on arbitrum: its owner is the protocol deployer. */
export async function setGmxEthPrice(devnet: ReturnType<typeof testDevnet>, usd: string): Promise<void> {
  const owner = devnet.manifest.accounts.protocolDeployer!;
  const chain = devnet.chain('arbitrum');
  const feed = gmxDeployments({ tokens: chain.tokens, owner: owner.address }).feeds.find((f) => f.symbol === 'WETH')!.deployment.address;
  await devnetWalletClient(devnetChain(chain), owner.privateKey).writeContractSync({ address: feed, abi: devnetPriceFeedAbi, functionName: 'setAnswer', args: [parseUnits(usd, 8)] });
}

export interface EventCollector {
  /** The callback_url to give (loopback: the service must allow it). */
  url(): string;
  /** The events received for a request, once there are at least `n`. */
  eventsOf(requestId: string, n: number): Promise<Json[]>;
  received: ReadonlyMap<string, Json[]>;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 that answers 204 and keeps every event's JSON, by its data.request_id. */
export async function startEventCollector(): Promise<EventCollector> {
  const received = new Map<string, Json[]>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const event = JSON.parse(body) as Json;
      const id = event.data.request_id as string;
      received.set(id, [...(received.get(id) ?? []), event]);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    eventsOf: (id, n) => until(`${n} webhook events of ${id}`, async () => ((received.get(id)?.length ?? 0) >= n ? received.get(id) : undefined), 15_000),
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** The request's status record once the keeper has settled what it created (status.order no longer pending). */
export function keeperSettled(client: AgentWalletClient, requestId: string, timeoutMs = 30_000): Promise<Json> {
  return until(`the keeper to settle ${requestId}`, async () => {
    const s = await client.status(requestId);
    if (!s.ok) throw s.error;
    const o = s.value.order as Json | undefined;
    return o && o.state !== 'pending' ? (s.value as Json) : undefined;
  }, timeoutMs);
}
