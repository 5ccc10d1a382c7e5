/**
 * The cluster layout for end-to-end tests: every role as its own process, as Helm runs them — a gateway, two
 * controller replicas (Lease leader election) and one chain worker per chain over gRPC — against the run's
 * real kube-apiserver and Redis (test/cluster/globalSetup.ts) and the shared devnet. Each test file gets its
 * own namespace, so files never see each other's resources.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoordinationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import type { AgentScope, PaymentMode } from '../../src/api/v1alpha1/index.ts';
import type { ChainConfig } from '../../src/config/chainConfig.ts';
import type { ClusterConfig } from '../../src/roles/cluster/config.ts';
import type { ChainName } from '../../src/config/chains.ts';
import { createKey } from '../../src/keys/manage.ts';
import { kubeWebhookSecrets } from '../../src/webhooks/secrets/kube.ts';
import { WebhookSettingsSchema, type WebhookSettingsInput } from '../../src/webhooks/settings.ts';
import { createKubeStore } from '../../src/store/kube/index.ts';
import type { ResourceStore } from '../../src/store/types.ts';
import { installChartRbac } from '../cluster/helm/chart.ts';
import { newServiceSecret, tempDir, testDevnet } from './env.ts';
import { PaymentSettingsSchema, X402_SETTLER_KEY_ENV } from '../../src/payments/settings.ts';
import { kubeBinDir } from './kubeApiServer.ts';
import { apiClient } from './http.ts';
import { freePort } from './net.ts';
import { withBundlers } from './alto.ts';
import type { RpcBundlerConfig } from '../../src/config/chainConfig.ts';

export const KUBECONFIG_ENV = 'AGENT_WALLET_TEST_KUBECONFIG';
/** The run's API server audit log (deploy/kind/audit-policy.yaml's rules), set by globalSetup. */
export const AUDIT_LOG_ENV = 'AGENT_WALLET_TEST_AUDIT_LOG';
export const REDIS_URL_ENV = 'AGENT_WALLET_TEST_REDIS_URL';
export const TARGET_ENV = 'AGENT_WALLET_TEST_TARGET';

export const clusterTarget = (): boolean => process.env[TARGET_ENV] === 'cluster';

const LEASE = 'agent-wallet-controller';

export interface RoleProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly opsPort: number;
  readonly logPath: string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<number | null>;
}

let namespaceSeq = 0;

export interface StartClusterOptions {
  /** An API server of the test's own (e.g. to kill it); default: the run's shared one. */
  kubeconfigPath?: string;
  /** A Redis of the test's own; default: the run's shared one. */
  redisUrl?: string;
  /** Controller replicas (default 2). */
  controllers?: number;
  /** Short lease timings so takeover tests finish quickly (seconds). */
  lease?: { durationSeconds: number; renewDeadlineSeconds: number; retryPeriodSeconds: number };
  retentionSeconds?: number;
  /** The config's webhooks section (e.g. allowLoopback and a short schedule for a test receiver). */
  webhooks?: WebhookSettingsInput;
  /** Extra environment of the controllers, e.g. NODE_EXTRA_CA_CERTS to trust a test receiver's certificate. */
  controllerEnv?: NodeJS.ProcessEnv;
  /** Settle x402 payments with the devnet's settler account (the chain workers get its key; the config enables x402). */
  x402?: boolean;
  /**
   * The tree whose `bin/agent-wallet.js` the roles run: this one (default), or an earlier build's for an upgrade
   * test (test/support/oldBuild.ts; `restartAll` then moves them to another tree).
   */
  root?: string;
  /** Chains bundled by an outside ERC-4337 bundler (test/support/alto.ts): their workers get no executor keys. */
  bundlers?: Partial<Record<ChainName, RpcBundlerConfig>>;
}

export async function startTestCluster(opts: StartClusterOptions = {}) {
  const kubeconfigPath = opts.kubeconfigPath ?? process.env[KUBECONFIG_ENV];
  const redisUrl = opts.redisUrl ?? process.env[REDIS_URL_ENV];
  if (!kubeconfigPath || !redisUrl) throw new Error(`${KUBECONFIG_ENV}/${REDIS_URL_ENV} unset: run through the vitest cluster project`);
  const devnet = testDevnet();
  const dir = tempDir('aw-cluster-');
  const namespace = `e2e-${process.pid}-${++namespaceSeq}-${Date.now().toString(36)}`;
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  // The gateway and the controllers run as the Helm chart's ServiceAccounts, under its Roles: the chart's
  // least-privilege RBAC is what the end-to-end scenarios prove sufficient.
  const rbac = await installChartRbac({
    adminKubeconfig: kubeconfigPath,
    kubectl: join(await kubeBinDir(), 'kubectl'),
    namespace,
    set: { 'controller.leaseName': LEASE },
  });

  const serviceSecret = newServiceSecret();
  const chains = withBundlers(devnet.chainConfigs(), opts.bundlers);
  const workerPorts = new Map<ChainName, number>();
  for (const c of chains) workerPorts.set(c.name, await freePort());
  const lease = opts.lease ?? { durationSeconds: 4, renewDeadlineSeconds: 3, retryPeriodSeconds: 1 };
  const config: ClusterConfig = {
    namespace,
    redis: { url: redisUrl },
    // As the chart has it: every client of a cluster's gateway may share one address (a proxy's), so no bound.
    gateway: { port: 0, host: '127.0.0.1', decisionTimeoutMs: 20_000, connections: { maxConnectionsPerAddress: 0 } },
    controller: {
      leaseName: LEASE,
      leaseDurationSeconds: lease.durationSeconds,
      renewDeadlineSeconds: lease.renewDeadlineSeconds,
      retryPeriodSeconds: lease.retryPeriodSeconds,
      admissionRetryMs: 10_000,
      retentionSeconds: opts.retentionSeconds ?? 3_600,
      spendStatusSeconds: 1, // the policies scenario reads the Spend column
    },
    ops: { port: 0 },
    webhooks: WebhookSettingsSchema.parse(opts.webhooks ?? {}),
    // The faucet account is the service's own, as the chart's payments.serviceAccounts would say.
    payments: PaymentSettingsSchema.parse({ serviceAccounts: devnet.manifest.accounts.faucet ? [devnet.manifest.accounts.faucet.address] : [] }),
    x402: { enabled: opts.x402 === true },
    logLevel: 'info',
    // With x402, the RPC URLs are the chain workers' alone (AGENT_WALLET_RPC_URL below), as with a provider's key in
    // a Secret: the controller verifies and settles through the workers, and never needs one.
    chains: chains.map((c) => publicChain(c, `127.0.0.1:${workerPorts.get(c.name)}`, workerPorts.get(c.name)!, { withRpcUrl: opts.x402 !== true })),
  };
  const configPath = join(dir, 'config.yaml');
  writeFileSync(configPath, stringify(config));
  const logDir = join(dir, 'logs');
  mkdirSync(logDir);

  const processes: RoleProcess[] = [];
  let root = opts.root ?? process.cwd();
  let closeSecrets = (): void => undefined;
  // x402 only when asked: one settler account, its nonces owned by each chain's worker.
  const settler = opts.x402 === true ? devnet.manifest.accounts.settler?.privateKey : undefined;
  const baseEnv = {
    ...process.env,
    KUBECONFIG: kubeconfigPath,
    AGENT_WALLET_CONFIG: configPath,
    POD_NAMESPACE: namespace,
  };

  const spawnRole = async (name: string, args: string[], env: NodeJS.ProcessEnv): Promise<RoleProcess> => {
    const opsPort = await freePort();
    const logPath = join(logDir, `${name}.log`);
    const out = createWriteStream(logPath, { flags: 'a' }); // a restarted role appends to its log
    const child = spawn(process.execPath, ['bin/agent-wallet.js', ...args, '--ops-port', String(opsPort)], {
      cwd: root,
      env: { ...baseEnv, POD_NAME: name, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group: a killed test run does not leave it behind (see stop)
    });
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const p = { name, child, opsPort, logPath, exited };
    processes.push(p);
    return p;
  };

  const startWorker = (c: ChainConfig) =>
    spawnRole(`chain-worker-${c.name}`, ['chain-worker', '--chain', c.name], {
      AGENT_WALLET_SERVICE_SECRET: serviceSecret,
      AGENT_WALLET_PAYMASTER_SIGNER_KEY: c.paymasterSignerKey,
      ...(c.executorKeys.length > 0 && { AGENT_WALLET_EXECUTOR_KEYS: c.executorKeys.join(',') }),
      // The devnet's settler sends x402 settlements, as the chart's Secret gives it to the chain workers.
      ...(settler && { [X402_SETTLER_KEY_ENV]: settler, AGENT_WALLET_RPC_URL: c.rpcUrl }),
    });
  const startController = (i: number) =>
    spawnRole(`controller-${i}`, ['controller'], { KUBECONFIG: rbac.kubeconfigs.controller, ...opts.controllerEnv });

  const stopAll = async () => {
    await Promise.all(processes.map((p) => terminate(p, 10_000)));
    closeSecrets();
    await kc
      .makeApiClient(CoreV1Api)
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  };

  const gatewayPort = await freePort();
  const url = `http://127.0.0.1:${gatewayPort}`;
  /** Every role, from `root`: a chain worker per chain, the controllers, the gateway; resolves once all are ready. */
  const startRoles = async () => {
    const workers = await Promise.all(chains.map(startWorker));
    const controllers = await Promise.all(Array.from({ length: opts.controllers ?? 2 }, (_, i) => startController(i)));
    const gateway = await spawnRole('gateway', ['gateway', '--port', String(gatewayPort)], { KUBECONFIG: rbac.kubeconfigs.gateway });
    await Promise.all([...workers, ...controllers, gateway].map((p) => waitReady(p, 90_000)));
    await waitHttp(`${url}/health`, 30_000);
    return { workers: new Map(chains.map((c, i) => [c.name, workers[i]!])), controllers, gateway };
  };

  try {
    const { workers, controllers, gateway } = await startRoles();

    const store: ResourceStore = createKubeStore({ kubeConfig: kc, namespace });
    const webhookSecrets = kubeWebhookSecrets({ kubeConfig: kc, namespace });
    closeSecrets = () => webhookSecrets.close();
    const coordination = kc.makeApiClient(CoordinationV1Api);

    return {
      url,
      namespace,
      kubeconfigPath,
      /** The configuration file every role reads (the chart's ConfigMap). */
      configPath,
      devnet,
      serviceSecret,
      store,
      dataDir: dir,
      processes,
      /** The processes of the first start (`restartAll` answers the next ones). */
      workers,
      controllers,
      gateway,
      /**
       * Stops every role (SIGTERM, as a rolling update does) and starts them all again from `nextRoot` (another
       * build's tree: an upgrade), with the same config, ports, service secret and namespace; answers the new processes.
       */
      async restartAll(nextRoot: string = process.cwd()) {
        await Promise.all(processes.map((p) => terminate(p, 10_000)));
        root = nextRoot;
        return startRoles();
      },
      async newKey(mode: PaymentMode = 'sponsored', opts: { agentScope?: AgentScope } = {}) {
        const { api_key, webhook_secret, key } = await createKey(store, { mode, requestsPerSecond: 10_000, burst: 10_000, ...opts }, namespace, webhookSecrets);
        return { apiKey: api_key, clientId: key.id, webhookSecret: webhook_secret!, api: apiClient(url, api_key) };
      },
      anonymous: apiClient(url),
      /** The controller replica holding the Lease now (by POD_NAME), or undefined. */
      async leader(): Promise<string | undefined> {
        const l = await coordination.readNamespacedLease({ name: LEASE, namespace }).catch(() => undefined);
        return l?.spec?.holderIdentity || undefined;
      },
      /** The controllers' Lease as the API server has it now: holder ('' once released) and transitions. */
      async lease(): Promise<{ holder: string; transitions: number }> {
        const l = await coordination.readNamespacedLease({ name: LEASE, namespace });
        return { holder: l.spec?.holderIdentity ?? '', transitions: l.spec?.leaseTransitions ?? 0 };
      },
      /** Restarts a chain worker process (same port and keys). */
      async restartWorker(chain: ChainName, how: 'SIGKILL' | 'SIGTERM' = 'SIGKILL') {
        const old = processes.find((p) => p.name === `chain-worker-${chain}` && p.child.exitCode === null && p.child.signalCode === null);
        if (old) {
          old.child.kill(how);
          await old.exited;
        }
        const c = chains.find((x) => x.name === chain)!;
        const p = await startWorker(c);
        await waitReady(p, 60_000);
        return p;
      },
      startController,
      logs: (p: RoleProcess) => readFileSync(p.logPath, 'utf8'),
      stop: stopAll,
    };
  } catch (e) {
    const logs = processes.map((p) => `--- ${p.name}\n${safeTail(p.logPath)}`).join('\n');
    await stopAll();
    throw new Error(`cluster did not start: ${(e as Error).message}\n${logs}`);
  }
}
export type TestCluster = Awaited<ReturnType<typeof startTestCluster>>;

function publicChain(c: ChainConfig, address: string, port: number, opts: { withRpcUrl: boolean }): ClusterConfig['chains'][number] {
  const { paymasterSignerKey: _p, executorKeys: _e, sendingAccounts: _s, rpcUrl, ...pub } = c;
  return { ...pub, ...(opts.withRpcUrl && { rpcUrl }), worker: { address, port } };
}

/** SIGTERM (graceful stop), SIGKILL to the group after `graceMs`. */
export async function terminate(p: RoleProcess, graceMs: number): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => {
    try {
      process.kill(-p.child.pid!, 'SIGKILL');
    } catch {
      // gone already
    }
  }, graceMs);
  await p.exited;
  clearTimeout(timer);
}

export async function waitReady(p: RoleProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (p.child.exitCode !== null || p.child.signalCode !== null) {
      throw new Error(`${p.name} exited (${p.child.exitCode ?? p.child.signalCode}):\n${safeTail(p.logPath)}`);
    }
    const ok = await fetch(`http://127.0.0.1:${p.opsPort}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${p.name} not ready after ${timeoutMs} ms:\n${safeTail(p.logPath)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function waitHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fetch(url).then((r) => r.status < 500, () => false))) {
    if (Date.now() > deadline) throw new Error(`${url} did not answer in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function safeTail(path: string, chars = 4_000): string {
  try {
    return readFileSync(path, 'utf8').slice(-chars);
  } catch {
    return '(no log)';
  }
}
