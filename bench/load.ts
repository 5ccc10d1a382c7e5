/**
 * The load generator both benchmarks share (bench/run.ts: embedded; bench/cluster.ts: every role a process):
 * executes over keep-alive HTTP, terminal phases observed through a store watch (so the figures are the
 * service's, not a polling interval's).
 */
import { Agent, request } from 'node:http';
import { encodeFunctionData } from 'viem';
import { CHAIN_NAMES, type ChainName } from '../src/config/chains.ts';
import { counterAbi } from '../src/devnet/contracts.ts';
import { isTerminal, type ExecutionRequest } from '../src/api/v1alpha1/index.ts';
import type { ResourceStore } from '../src/store/types.ts';

export interface LoadTarget {
  url: string;
  apiKey: string;
  store: ResourceStore;
  namespace?: string;
  counterOf(chain: ChainName): string;
}

export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
export const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

/**
 * Each request's terminal state as a store watch delivers it, with no read of its own (a read would count in the
 * API server's requests per execution): one that ended before anyone asked is kept until `finished` takes it.
 */
export function watchTerminal(store: ResourceStore, namespace?: string) {
  const waiting = new Map<string, (r: ExecutionRequest) => void>();
  const early = new Map<string, ExecutionRequest>();
  const watch = store.watch('ExecutionRequest', namespace ? { namespace } : {}, (e) => {
    if (!isTerminal(e.object.status?.phase)) return;
    const name = e.object.metadata.name;
    const resolve = waiting.get(name);
    if (resolve) {
      waiting.delete(name);
      resolve(e.object);
    } else if (e.type !== 'DELETED') {
      early.set(name, e.object);
      // Requests nobody asks for (another generator's) are never taken: keep the newest few thousand.
      if (early.size > 4096) early.delete(early.keys().next().value!);
    }
  });
  return {
    /** Resolves with the request once it is terminal. */
    finished(id: string): Promise<ExecutionRequest> {
      const seen = early.get(id);
      if (seen) {
        early.delete(id);
        return Promise.resolve(seen);
      }
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    stop: () => watch.stop(),
  };
}

export function loadGenerator(target: LoadTarget) {
  const increment = encodeFunctionData({ abi: counterAbi, functionName: 'increment' });
  const terminal = watchTerminal(target.store, target.namespace);
  // The load generator shares the machine with the service: keep it cheap (keep-alive node:http).
  const httpAgent = new Agent({ keepAlive: true, maxSockets: 512 });

  function post(path: string, payload: unknown): Promise<{ status: number; body: any }> {
    const text = JSON.stringify(payload);
    return new Promise((resolve, reject) => {
      const req = request(
        `${target.url}${path}`,
        {
          method: 'POST',
          agent: httpAgent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-api-key': target.apiKey },
        },
        (res) => {
          let data = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (data += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(data) }));
        },
      );
      req.on('error', reject);
      req.end(text);
    });
  }

  async function execute(agent: string, chain: ChainName): Promise<{ id: string; done: Promise<ExecutionRequest> }> {
    const res = await post('/execute', { agent_id: agent, chain, target_contract: target.counterOf(chain), calldata: increment, value: '0' });
    const body = res.body as { request_id: string; status: string };
    if (res.status !== 200) throw new Error(`execute: HTTP ${res.status} ${JSON.stringify(body)}`);
    const done = terminal.finished(body.request_id);
    return { id: body.request_id, done };
  }

  /** execute → confirmed, one agent, one request at a time (a first request deploys the wallet). */
  async function latency(n: number): Promise<number[]> {
    await (await execute('latency-agent', 'ethereum')).done;
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const { id, done } = await execute('latency-agent', 'ethereum');
      const r = await done;
      if (r.status?.phase !== 'Confirmed') throw new Error(`${id} ended ${r.status?.phase}`);
      out.push(performance.now() - t0);
    }
    return out;
  }

  /** `agents` agents round-robin over the three chains, `inflight` requests outstanding each, for `seconds`. */
  async function throughput(agents: number, inflight: number, seconds: number) {
    let confirmed = 0;
    let other = 0;
    const otherReasons = new Map<string, number>();
    const deadline = performance.now() + seconds * 1000;
    const t0 = performance.now();
    // CPU of this whole process over the window: the service when it runs in this process (bench/run.ts),
    // plus the load generator itself (keep-alive HTTP and a store watch: a small share).
    const cpu0 = process.cpuUsage();
    async function agentLoop(i: number): Promise<void> {
      const chain = CHAIN_NAMES[i % CHAIN_NAMES.length]!;
      const pending = new Set<Promise<void>>();
      while (performance.now() < deadline) {
        while (pending.size < inflight && performance.now() < deadline) {
          const p: Promise<void> = execute(`bench-agent-${i}`, chain)
            .then(({ done }) =>
              done.then((r) => {
                if (r.status?.phase === 'Confirmed') confirmed++;
                else {
                  other++;
                  const why = `${r.status?.phase}: ${r.status?.failure?.code} ${r.status?.failure?.message ?? ''}`.slice(0, 160);
                  otherReasons.set(why, (otherReasons.get(why) ?? 0) + 1);
                }
              }),
            )
            .finally(() => pending.delete(p));
          pending.add(p);
        }
        await Promise.race(pending);
      }
      await Promise.all(pending);
    }
    await Promise.all(Array.from({ length: agents }, (_, i) => agentLoop(i)));
    const cpu = process.cpuUsage(cpu0);
    return { confirmed, other, otherReasons, elapsedSeconds: (performance.now() - t0) / 1000, cpuMs: (cpu.user + cpu.system) / 1000 };
  }

  return {
    latency,
    throughput,
    close() {
      terminal.stop();
      httpAgent.destroy();
    },
  };
}

export function printLatency(latencies: number[]): void {
  console.log(
    `execute → confirmed, one agent, ${latencies.length} sequential: p50 ${fmt(pct(latencies, 50))}, p99 ${fmt(pct(latencies, 99))}, max ${fmt(Math.max(...latencies))}`,
  );
}

export function printThroughput(
  r: { confirmed: number; other: number; otherReasons: Map<string, number>; elapsedSeconds: number },
  agents: number,
  inflight: number,
): void {
  console.log(
    `sustained: ${agents} agents over ${CHAIN_NAMES.length} chains, ${inflight} in flight each, ${r.elapsedSeconds.toFixed(1)} s: ` +
      `${r.confirmed} confirmed (${(r.confirmed / r.elapsedSeconds).toFixed(0)}/s), ${r.other} not confirmed`,
  );
  for (const [why, n] of r.otherReasons) console.log(`  not confirmed ×${n}: ${why}`);
}
