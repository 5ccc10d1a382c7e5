/**
 * The Helm chart against the run's real kube-apiserver (test/cluster/globalSetup.ts): what kubeconform cannot
 * see. The rendered config is one the service loads; the objects refer to each other correctly; the API
 * server accepts every object with strict field validation; `helm install` / `upgrade` / `uninstall` work
 * and a config change rolls the pods; each role's ServiceAccount may do what that role does and nothing
 * else. The first test runs test/cluster/helm/check.sh (helm lint, kubeconform), so `npm test` covers it too.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { protocolsConfigSchema } from '../../../src/protocols/config.ts';
import { FAMILIES } from '../../../src/protocols/index.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadClusterConfig, workerChainConfig } from '../../../src/roles/cluster/config.ts';
import { DEFAULT_PAYMENT_SETTINGS } from '../../../src/payments/settings.ts';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../../src/webhooks/settings.ts';
import { createMetrics } from '../../../src/metrics/index.ts';
import { tracingSettingsFromEnv } from '../../../src/lib/tracing.ts';
import { kubeBinDir } from '../../support/kubeApiServer.ts';
import { KUBECONFIG_ENV } from '../../support/cluster.ts';
import {
  chartDir,
  chartTools,
  repoRoot,
  componentName,
  helm,
  installChartRbac,
  parseManifests,
  renderChart,
  run,
  valuesFile,
  type Manifest,
} from './chart.ts';

const GROUP = 'agentwallet.dev';
let kubectlBin = '';
let adminKubeconfig = '';
let nsSeq = 0;

const kubectl = (args: string[], stdin?: string) =>
  run(kubectlBin, ['--kubeconfig', adminKubeconfig, ...args], stdin === undefined ? {} : { stdin });

async function newNamespace(): Promise<string> {
  const ns = `chart-${process.pid}-${++nsSeq}-${Date.now().toString(36)}`;
  const r = await kubectl(['create', 'namespace', ns]);
  expect(r.code, r.stderr).toBe(0);
  // What kube-controller-manager (not run here) does for every new namespace; the helm test pod uses it.
  const sa = await kubectl(['create', 'serviceaccount', 'default', '-n', ns]);
  expect(sa.code, sa.stderr).toBe(0);
  return ns;
}

const byKind = (ms: Manifest[], kind: string) => ms.filter((m) => m.kind === kind);
const named = (ms: Manifest[], kind: string, name: string) => {
  const m = ms.find((x) => x.kind === kind && x.metadata.name === name);
  if (!m) throw new Error(`no ${kind} ${name} in the rendered chart`);
  return m;
};
// Rendered objects are untyped trees; tests walk them with these.
type Tree = any;
const podSpec = (d: Manifest): Tree => (d as Tree).spec.template.spec;

beforeAll(async () => {
  adminKubeconfig = process.env[KUBECONFIG_ENV] ?? '';
  if (!adminKubeconfig) throw new Error(`${KUBECONFIG_ENV} unset: run through the vitest cluster project`);
  const [bin] = await Promise.all([kubeBinDir(), chartTools()]);
  kubectlBin = join(bin, 'kubectl');
}, 30 * 60_000);

it('passes check.sh: helm lint, the default values refused, kubeconform -strict with its negative control', async () => {
  const r = await run('bash', [join(repoRoot, 'test/cluster/helm/check.sh')], { timeoutMs: 10 * 60_000 });
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  const summaries = r.stdout.split('\n').filter((l) => l.startsWith('Summary:'));
  expect(summaries).toHaveLength(2);
  for (const s of summaries) expect(s).toMatch(/Invalid: 0, Errors: 0/);
}, 10 * 60_000);

it('a chain bundled by an outside bundler: its worker gets the bundler URL from the Secret and no executor keys', async () => {
  const manifests = parseManifests(
    await renderChart({
      namespace: 'agents',
      values: [valuesFile('minimal')],
      set: { 'chains.base.bundler.kind': 'rpc', 'chains.base.keys.bundlerUrl': 'bundler-url' },
    }),
  );
  const worker = named(manifests, 'Deployment', componentName('aw', 'worker-base')) as Tree;
  const env = worker.spec.template.spec.containers[0].env as { name: string; valueFrom?: Tree }[];
  expect(env.map((e) => e.name)).not.toContain('AGENT_WALLET_EXECUTOR_KEYS');
  expect(env.find((e) => e.name === 'AGENT_WALLET_BUNDLER_URL')?.valueFrom.secretKeyRef.key).toBe('bundler-url');
  const dir = mkdtempSync(join(tmpdir(), 'aw-chart-rpc-'));
  writeFileSync(join(dir, 'config.yaml'), (named(manifests, 'ConfigMap', componentName('aw', 'config')) as Tree).data['config.yaml']);
  const chain = (await loadClusterConfig(join(dir, 'config.yaml'))).chains.find((c) => c.name === 'base')!;
  const secretEnv = { AGENT_WALLET_PAYMASTER_SIGNER_KEY: `0x${'11'.repeat(32)}`, AGENT_WALLET_BUNDLER_URL: 'https://bundler.example.com/v2/secret-key' };
  const full = workerChainConfig(chain, secretEnv);
  expect(full.bundler).toMatchObject({ kind: 'rpc', url: 'https://bundler.example.com/v2/secret-key' });
  expect(full.executorKeys).toEqual([]);
  // Executor keys given to a worker whose chain an outside bundler bundles are refused, not silently unused.
  expect(() => workerChainConfig(chain, { ...secretEnv, AGENT_WALLET_EXECUTOR_KEYS: `0x${'22'.repeat(32)}` })).toThrow(/executor keys belong to the built-in bundler/);
  expect(() => workerChainConfig(chain, { AGENT_WALLET_PAYMASTER_SIGNER_KEY: secretEnv.AGENT_WALLET_PAYMASTER_SIGNER_KEY })).toThrow(/url/);
});

it('a chain sponsored by an ERC-7677 paymaster service: its worker gets the service URL from the Secret and no signer key', async () => {
  const manifests = parseManifests(
    await renderChart({
      namespace: 'agents',
      values: [valuesFile('minimal')],
      set: { 'chains.base.sponsor.kind': 'erc7677', 'chains.base.keys.sponsorUrl': 'sponsor-url' },
    }),
  );
  const worker = named(manifests, 'Deployment', componentName('aw', 'worker-base')) as Tree;
  const env = worker.spec.template.spec.containers[0].env as { name: string; valueFrom?: Tree }[];
  expect(env.map((e) => e.name)).not.toContain('AGENT_WALLET_PAYMASTER_SIGNER_KEY');
  expect(env.find((e) => e.name === 'AGENT_WALLET_SPONSOR_URL')?.valueFrom.secretKeyRef.key).toBe('sponsor-url');
  const dir = mkdtempSync(join(tmpdir(), 'aw-chart-sponsor-'));
  writeFileSync(join(dir, 'config.yaml'), (named(manifests, 'ConfigMap', componentName('aw', 'config')) as Tree).data['config.yaml']);
  const chain = (await loadClusterConfig(join(dir, 'config.yaml'))).chains.find((c) => c.name === 'base')!;
  const full = workerChainConfig(chain, { AGENT_WALLET_EXECUTOR_KEYS: `0x${'22'.repeat(32)}`, AGENT_WALLET_SPONSOR_URL: 'https://pm.example.com/v2/secret-key' });
  expect(full.sponsor).toMatchObject({ kind: 'erc7677', url: 'https://pm.example.com/v2/secret-key' });
  expect(full.paymasterSignerKey).toBeUndefined();
});

describe('tracing values', () => {
  const rolesEnv = async (tracing: Record<string, unknown> | undefined) => {
    // A values file: `--set` would pass 0.1 as a string.
    const extra = join(mkdtempSync(join(tmpdir(), 'aw-chart-tracing-')), 'tracing.yaml');
    writeFileSync(extra, JSON.stringify(tracing ? { tracing } : {}));
    const ms = parseManifests(await renderChart({ namespace: 'agents', values: [valuesFile('full'), extra] }));
    return byKind(ms, 'Deployment')
      .map((d) => ({ name: d.metadata.name, env: ((d as Tree).spec.template.spec.containers[0].env ?? []) as { name: string; value?: string }[] }))
      .filter((d) => d.env.some((e) => e.name === 'AGENT_WALLET_CONFIG')); // the service's roles (not the in-chart Redis)
  };

  it('are off by default: no role gets an OTEL_ variable, and the service reads that as tracing off', async () => {
    const roles = await rolesEnv(undefined);
    expect(roles.length).toBeGreaterThanOrEqual(3);
    for (const r of roles) {
      expect(r.env.filter((e) => e.name.startsWith('OTEL_')), r.name).toEqual([]);
      expect(tracingSettingsFromEnv('gateway', Object.fromEntries(r.env.map((e) => [e.name, e.value])))).toBeUndefined();
    }
  });

  it('on: every role (gateway, controller, each chain worker) gets the endpoint and the sampling ratio it traces with', async () => {
    const roles = await rolesEnv({ enabled: true, endpoint: 'http://otel-collector.monitoring:4318', sampleRatio: 0.1 });
    const names = roles.map((r) => r.name);
    for (const part of ['gateway', 'controller', 'worker-ethereum', 'worker-base']) expect(names.some((n) => n.endsWith(part)), part).toBe(true);
    for (const r of roles) {
      const env = Object.fromEntries(r.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
      expect(tracingSettingsFromEnv('controller', env), r.name).toEqual({
        url: 'http://otel-collector.monitoring:4318/v1/traces',
        serviceName: 'agent-wallet-controller',
        sampleRatio: 0.1,
      });
      expect(env.OTEL_TRACES_SAMPLER).toBe('parentbased_traceidratio');
    }
  });

  it('on without an endpoint is refused', async () => {
    await expect(renderChart({ namespace: 'agents', values: [valuesFile('minimal')], set: { 'tracing.enabled': 'true' } })).rejects.toThrow(/tracing.endpoint is required/);
  });
});

describe.each(['minimal', 'full'] as const)('the chart rendered with values-%s.yaml', (values) => {
  const namespace = 'agents';
  let manifests: Manifest[] = [];
  beforeAll(async () => {
    manifests = parseManifests(await renderChart({ namespace, values: [valuesFile(values)] }));
  });

  it('renders a config file the service loads, whose chain workers are the chart Services', async () => {
    const cm = named(manifests, 'ConfigMap', componentName('aw', 'config'));
    const dir = mkdtempSync(join(tmpdir(), 'aw-chart-config-'));
    const path = join(dir, 'config.yaml');
    writeFileSync(path, (cm as Tree).data['config.yaml']);
    const config = await loadClusterConfig(path);

    expect(config.namespace).toBe(namespace);
    const workers = byKind(manifests, 'Deployment').filter((d) => d.metadata.labels?.['app.kubernetes.io/component'] === 'chain-worker');
    expect(config.chains.map((c) => c.name).sort()).toEqual(workers.map((d) => d.metadata.labels?.['agentwallet.dev/chain']).sort());
    for (const chain of config.chains) {
      const service = componentName('aw', `worker-${chain.name}`);
      expect(chain.worker.address).toBe(`${service}.${namespace}.svc.cluster.local:${chain.worker.port}`);
      const svcPorts = (named(manifests, 'Service', service) as Tree).spec.ports as { name: string; port: number }[];
      expect(svcPorts.find((p) => p.name === 'grpc')?.port).toBe(chain.worker.port);
      // The worker's public config plus the keys its Deployment takes from the Secret make a valid chain.
      const deployment = named(manifests, 'Deployment', service) as Tree;
      const env = (deployment.spec.template.spec.containers[0].env as { name: string }[]).map((e) => e.name);
      const secretEnv = {
        AGENT_WALLET_PAYMASTER_SIGNER_KEY: `0x${'11'.repeat(32)}`,
        AGENT_WALLET_EXECUTOR_KEYS: `0x${'22'.repeat(32)},0x${'33'.repeat(32)}`,
        ...(env.includes('AGENT_WALLET_RPC_URL') && { AGENT_WALLET_RPC_URL: 'https://rpc.example.com/v2/secret-key' }),
        ...(env.includes('AGENT_WALLET_FALLBACK_RPC_URLS') && { AGENT_WALLET_FALLBACK_RPC_URLS: 'https://b.example.com/k1,https://c.example.com/k2' }),
      };
      const full = workerChainConfig(chain, secretEnv);
      expect(full.executorKeys).toHaveLength(2);
      if (env.includes('AGENT_WALLET_FALLBACK_RPC_URLS')) expect(full.fallbackRpcUrls).toEqual(['https://b.example.com/k1', 'https://c.example.com/k2']);
      // The URL is in exactly one place: the file, or the Secret (keys.rpcUrl).
      expect(chain.rpcUrl === undefined).toBe(env.includes('AGENT_WALLET_RPC_URL'));
      if (chain.rpcUrl === undefined) {
        expect(full.rpcUrl).toBe('https://rpc.example.com/v2/secret-key');
        expect(() => workerChainConfig(chain, { ...secretEnv, AGENT_WALLET_RPC_URL: '' })).toThrow(/no RPC URL/);
      }
    }
    // The shipped protocol addresses reach the service as its own configuration (each family's config.ts, assembled in src/protocols/config.ts).
    const shipped = parseYaml(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as { chains: Record<string, { protocols: unknown }> };
    for (const chain of config.chains) expect(chain.protocols, chain.name).toEqual(shipped.chains[chain.name]!.protocols);
    if (values === 'full') {
      expect(config.chains.find((c) => c.name === 'arbitrum')!.rpcUrl).toBeUndefined(); // from the Secret
      // Fallback URLs in the file, or from the Secret (keys.fallbackRpcUrls), never both.
      expect(config.chains.find((c) => c.name === 'base')!.fallbackRpcUrls).toEqual([
        'https://base-sepolia-2.example.internal',
        'https://base-sepolia-3.example.internal',
      ]);
      const arbitrum = config.chains.find((c) => c.name === 'arbitrum')!;
      expect(arbitrum.fallbackRpcUrls).toEqual([]);
      const arbitrumEnv = (named(manifests, 'Deployment', componentName('aw', 'worker-arbitrum')) as Tree).spec.template.spec.containers[0].env;
      expect(arbitrumEnv.find((e: { name: string }) => e.name === 'AGENT_WALLET_FALLBACK_RPC_URLS').valueFrom).toEqual({
        secretKeyRef: { name: 'agent-wallet-arbitrum-keys', key: 'fallback-rpc-urls' },
      });
      const eth = config.chains.find((c) => c.name === 'ethereum')!;
      expect(eth.faucetCap).toEqual({ native: '0.05', tokens: { USDC: '100' } });
      expect(eth.tokens.map((t) => [t.symbol, t.address, t.acceptedForPayment])).toEqual([
        ['USDC', '0x4444444444444444444444444444444444444444', true],
        ['USDT', '0x5555555555555555555555555555555555555555', false],
      ]);
      expect(eth.bundler).toMatchObject({ kind: 'builtin', maxOpsPerBundle: 16 });
      expect(eth.nativeUsdPrice).toBe(3125.5);
      expect(eth.prices).toEqual({
        maxAgeSeconds: 600,
        cacheSeconds: 5,
        native: { feed: '0x6666666666666666666666666666666666666666' },
        tokens: { USDC: { usd: '1' }, '0x7777777777777777777777777777777777777777': { aaveOracle: '0x8888888888888888888888888888888888888888', asset: '0x4444444444444444444444444444444444444444' } },
      });
      expect(config.chains.find((c) => c.name === 'base')!.prices).toEqual({ maxAgeSeconds: 3_600, cacheSeconds: 5, tokens: {} });
      // The L1 data fee setting reaches the config; a chain without one takes what its name stands for.
      expect(config.chains.find((c) => c.name === 'base')!.l1DataFee).toEqual({ kind: 'opStack', gasPriceOracle: '0x420000000000000000000000000000000000000F', method: 'getL1FeeUpperBound' });
      expect(config.chains.find((c) => c.name === 'arbitrum')!.l1DataFee).toBeUndefined();
      expect(config.controller.retentionSeconds).toBe(2_592_000);
      expect(config.webhooks).toEqual({
        retryScheduleSeconds: [10, 600, 86_400],
        attemptTimeoutMs: 20_000,
        maxConcurrency: 32,
        maxConcurrencyPerEndpoint: 2,
        maxConcurrencyPerClient: 6,
        allowLoopback: false,
      });
      expect(config.redis.url).toBe(`redis://${componentName('aw', 'redis')}:6379`);
      expect(config.payments).toMatchObject({ graceSeconds: 120, serviceAccounts: ['0xcd3B766CCDd6AE721141F452C550Ca635964ce71'] });
    } else {
      expect(config.webhooks).toEqual(DEFAULT_WEBHOOK_SETTINGS); // the chart's defaults are the service's
      expect(config.payments).toEqual(DEFAULT_PAYMENT_SETTINGS);
    }
    // The controllers may update exactly the Lease the config names.
    const role = named(manifests, 'Role', componentName('aw', 'controller')) as Tree;
    const leaseRule = role.rules.find((r: Tree) => r.resources.includes('leases') && r.resourceNames);
    expect(leaseRule.resourceNames).toEqual([config.controller.leaseName]);
  });

  it('wires every Deployment to objects that exist: ServiceAccount, ConfigMap, Services selecting its pods', () => {
    const deployments = byKind(manifests, 'Deployment');
    expect(deployments.length).toBeGreaterThanOrEqual(3);
    for (const d of deployments) {
      const spec = podSpec(d);
      const labels = (d as Tree).spec.template.metadata.labels as Record<string, string>;
      for (const [k, v] of Object.entries((d as Tree).spec.selector.matchLabels as Record<string, string>)) expect(labels[k]).toBe(v);
      named(manifests, 'ServiceAccount', spec.serviceAccountName);
      for (const vol of spec.volumes ?? []) {
        if (vol.configMap) named(manifests, 'ConfigMap', vol.configMap.name);
        if (vol.persistentVolumeClaim) named(manifests, 'PersistentVolumeClaim', vol.persistentVolumeClaim.claimName);
      }
      const container = spec.containers[0];
      const portNames = new Set((container.ports as { name: string }[]).map((p) => p.name));
      // Every Service that selects these pods targets ports the container has.
      const services = byKind(manifests, 'Service').filter((s) =>
        Object.entries((s as Tree).spec.selector as Record<string, string>).every(([k, v]) => labels[k] === v),
      );
      expect(services.length, `no Service selects ${d.metadata.name}`).toBeGreaterThan(0);
      for (const s of services) for (const p of (s as Tree).spec.ports) expect(portNames, `${s.metadata.name} → ${p.targetPort}`).toContain(p.targetPort);
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
        const port = container[probe]?.httpGet?.port;
        if (port !== undefined) expect(portNames).toContain(port);
      }
      // Hardened the same way everywhere.
      expect(spec.securityContext.runAsNonRoot).toBe(true);
      expect(spec.securityContext.seccompProfile.type).toBe('RuntimeDefault');
      expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
      expect(container.resources.requests).toBeDefined();
      expect(container.resources.limits).toBeDefined();
    }
    for (const w of deployments.filter((d) => d.metadata.labels?.['app.kubernetes.io/component'] === 'chain-worker')) {
      const spec = podSpec(w);
      expect((w as Tree).spec.replicas).toBe(1);
      expect((w as Tree).spec.strategy.type).toBe('Recreate');
      expect(spec.automountServiceAccountToken).toBe(false);
      expect(spec.containers[0].readinessProbe.grpc.port).toBe(50051);
      const env = spec.containers[0].env as { name: string; value?: string; valueFrom?: unknown }[];
      const sendingKeys = values === 'full' ? ['AGENT_WALLET_X402_SETTLER_KEY', 'AGENT_WALLET_FAUCET_KEY'] : [];
      for (const secret of ['AGENT_WALLET_SERVICE_SECRET', 'AGENT_WALLET_PAYMASTER_SIGNER_KEY', 'AGENT_WALLET_EXECUTOR_KEYS', ...sendingKeys]) {
        const e = env.find((x) => x.name === secret);
        expect(e?.valueFrom, secret).toMatchObject({ secretKeyRef: expect.any(Object) });
        expect(e?.value).toBeUndefined();
      }
    }
  });

  it('is accepted by the API server with strict field validation (server-side dry run)', async () => {
    const ns = await newNamespace();
    const text = await renderChart({ namespace: ns, values: [valuesFile(values)] });
    // The Prometheus Operator's CRDs are not on the test server; check.sh says why they are skipped.
    const objects = parseManifests(text).filter((m) => m.kind !== 'ServiceMonitor' && m.kind !== 'PrometheusRule');
    const r = await kubectl(['create', '--dry-run=server', '--validate=strict', '-n', ns, '-o', 'name', '-f', '-'], objects.map((o) => JSON.stringify(o)).join('\n'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(objects.length);
  });
});

describe('helm install against the API server', () => {
  it('installs, rolls every pod on a config change, and uninstalls', async () => {
    const ns = await newNamespace();
    const base = ['--namespace', ns, '-f', valuesFile('minimal')];
    const installed = await helm(['install', 'aw', chartDir, ...base], { kubeconfig: adminKubeconfig });
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain(`kubectl -n ${ns} exec deploy/aw-agent-wallet-gateway -- node bin/agent-wallet.js keys create --kube --mode sponsored`);

    const checksums = async () => {
      const r = await kubectl(['get', 'deployments', '-n', ns, '-o', 'json']);
      expect(r.code, r.stderr).toBe(0);
      const items = (JSON.parse(r.stdout) as Tree).items as Tree[];
      return new Map(items.map((d) => [d.metadata.name as string, d.spec.template.metadata.annotations['checksum/config'] as string]));
    };
    const before = await checksums();
    expect([...before.keys()].sort()).toEqual(['aw-agent-wallet-controller', 'aw-agent-wallet-gateway', 'aw-agent-wallet-worker-base']);

    const same = await helm(['upgrade', 'aw', chartDir, ...base], { kubeconfig: adminKubeconfig });
    expect(same.code, same.stderr).toBe(0);
    expect(await checksums()).toEqual(before);

    const changed = await helm(['upgrade', 'aw', chartDir, ...base, '--set', 'controller.retentionSeconds=600'], {
      kubeconfig: adminKubeconfig,
    });
    expect(changed.code, changed.stderr).toBe(0);
    const after = await checksums();
    for (const [name, sum] of after) expect(sum, name).not.toBe(before.get(name));

    const removed = await helm(['uninstall', 'aw', '--namespace', ns], { kubeconfig: adminKubeconfig });
    expect(removed.code, removed.stderr).toBe(0);
    const left = await kubectl(['get', 'deployments,services,configmaps,roles,rolebindings,serviceaccounts,pdb', '-n', ns, '-l', 'app.kubernetes.io/instance=aw', '-o', 'name']);
    expect(left.stdout.trim()).toBe('');
  });
});

describe("the chart's RBAC", () => {
  let ns = '';
  const can = async (account: string, verb: string, resource: string, opts: { name?: string; namespace?: string } = {}) => {
    // `kind/status` would be read as the object named "status": a subresource goes in --subresource.
    const [kind, subresource] = resource.split('/') as [string, string | undefined];
    const target = opts.name ? `${kind}/${opts.name}` : kind;
    const r = await kubectl([
      'auth', 'can-i', verb, target, ...(subresource ? [`--subresource=${subresource}`] : []),
      '-n', opts.namespace ?? ns, '--as', `system:serviceaccount:${ns}:${account}`,
    ]);
    if (r.code !== 0 && r.stdout.trim() !== 'no') throw new Error(`kubectl auth can-i failed: ${r.stderr}`);
    return r.stdout.trim() === 'yes';
  };
  const exr = `executionrequests.${GROUP}`;
  const clients = `apiclients.${GROUP}`;
  const receipts = `paymentreceipts.${GROUP}`;
  const policies = `agentpolicies.${GROUP}`;

  beforeAll(async () => {
    ns = await newNamespace();
    await installChartRbac({ adminKubeconfig, kubectl: kubectlBin, namespace: ns });
  });

  it('lets the gateway create and watch requests, read keys and receipts, manage keys, and nothing more', async () => {
    const gw = componentName('aw', 'gateway');
    // update: a payment sent after a 402 is attached to the request awaiting it (docs/payments.md).
    for (const verb of ['get', 'list', 'watch', 'create', 'update']) expect(await can(gw, verb, exr), verb).toBe(true);
    for (const verb of ['patch', 'delete']) expect(await can(gw, verb, exr), verb).toBe(false);
    expect(await can(gw, 'update', `${exr}/status`)).toBe(false);
    for (const verb of ['get', 'list', 'watch', 'create', 'update', 'patch']) expect(await can(gw, verb, clients), verb).toBe(true);
    for (const verb of ['update', 'patch']) expect(await can(gw, verb, `${clients}/status`), verb).toBe(true);
    expect(await can(gw, 'delete', clients)).toBe(false);
    expect(await can(gw, 'list', receipts)).toBe(true);
    expect(await can(gw, 'create', receipts)).toBe(false);
    expect(await can(gw, 'get', 'leases.coordination.k8s.io')).toBe(false);
    expect(await can(gw, 'get', 'secrets')).toBe(false);
    // keys create / rotate-webhook-secret store webhook secrets: create, and nothing that reads one back.
    expect(await can(gw, 'create', 'secrets')).toBe(true);
    for (const verb of ['get', 'list', 'watch', 'update', 'patch', 'delete']) expect(await can(gw, verb, 'secrets'), verb).toBe(false);
    expect(await can(gw, 'list', exr, { namespace: 'default' })).toBe(false);
    // Its policy view reads AgentPolicies; `policy … --kube` run with its account writes them (keyManagement.viaGateway).
    for (const verb of ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']) expect(await can(gw, verb, policies), verb).toBe(true);
  });

  it('lets the controllers reconcile, record receipts and hold their own Lease, and nothing more', async () => {
    const ctl = componentName('aw', 'controller');
    for (const verb of ['get', 'list', 'watch', 'update', 'patch', 'delete']) expect(await can(ctl, verb, exr), verb).toBe(true);
    expect(await can(ctl, 'create', exr)).toBe(false);
    for (const verb of ['update', 'patch']) expect(await can(ctl, verb, `${exr}/status`), verb).toBe(true);
    expect(await can(ctl, 'create', receipts)).toBe(true);
    expect(await can(ctl, 'update', receipts)).toBe(true); // an x402 settlement's transaction, recorded on its receipt
    expect(await can(ctl, 'delete', receipts)).toBe(false);
    expect(await can(ctl, 'list', clients)).toBe(true);
    expect(await can(ctl, 'create', clients)).toBe(false);
    expect(await can(ctl, 'update', clients)).toBe(false);
    // The policy admission step reads AgentPolicies and writes no spec; the budgets' spend goes to their status.
    for (const verb of ['get', 'list', 'watch']) expect(await can(ctl, verb, policies), verb).toBe(true);
    for (const verb of ['create', 'update', 'patch', 'delete']) expect(await can(ctl, verb, policies), verb).toBe(false);
    for (const verb of ['update', 'patch']) expect(await can(ctl, verb, `${policies}/status`), verb).toBe(true);
    // The webhook sender reads a signing secret by the name its ApiClient gives: get, not list or watch.
    expect(await can(ctl, 'get', 'secrets')).toBe(true);
    for (const verb of ['list', 'watch', 'create', 'update', 'patch', 'delete']) expect(await can(ctl, verb, 'secrets'), verb).toBe(false);
    expect(await can(ctl, 'get', 'secrets', { namespace: 'default' })).toBe(false);
    expect(await can(ctl, 'list', exr, { namespace: 'default' })).toBe(false);
    const lease = componentName('aw', 'controller');
    expect(await can(ctl, 'create', 'leases.coordination.k8s.io')).toBe(true);
    for (const verb of ['get', 'update']) expect(await can(ctl, verb, 'leases.coordination.k8s.io', { name: lease }), verb).toBe(true);
    expect(await can(ctl, 'update', 'leases.coordination.k8s.io', { name: 'someone-elses-lease' })).toBe(false);
    expect(await can(ctl, 'delete', 'leases.coordination.k8s.io', { name: lease })).toBe(false);
  });

  it('gives the chain workers nothing', async () => {
    const worker = componentName('aw', 'chain-worker');
    for (const [verb, resource] of [['get', exr], ['list', clients], ['create', receipts], ['list', policies], ['get', 'leases.coordination.k8s.io'], ['get', 'secrets']] as const) {
      expect(await can(worker, verb, resource), `${verb} ${resource}`).toBe(false);
    }
  });

  it('without keyManagement.viaGateway, the gateway only reads ApiClients and AgentPolicies', async () => {
    const other = await newNamespace();
    const { serviceAccounts } = await installChartRbac({ adminKubeconfig, kubectl: kubectlBin, namespace: other, set: { 'keyManagement.viaGateway': 'false' } });
    const gatewayCan = async (verb: string, resource: string) =>
      (await run(kubectlBin, ['--kubeconfig', adminKubeconfig, 'auth', 'can-i', verb, resource, '-n', other, '--as', `system:serviceaccount:${other}:${serviceAccounts.gateway}`])).stdout.trim();
    for (const [verb, resource] of [['create', clients], ['update', clients], ['update', `${clients}/status`], ['create', 'secrets'], ...['create', 'update', 'patch', 'delete'].map((v) => [v, policies])] as const) {
      expect(await gatewayCan(verb, resource), `${verb} ${resource}`).toBe('no');
    }
    for (const verb of ['get', 'list', 'watch']) expect(await gatewayCan(verb, policies), verb).toBe('yes');
  });

  it("works with the ServiceAccounts' own tokens: the controller takes its Lease, not another", async () => {
    const { kubeconfigs } = await installChartRbac({ adminKubeconfig, kubectl: kubectlBin, namespace: ns });
    const asController = (args: string[], stdin?: string) => run(kubectlBin, ['--kubeconfig', kubeconfigs.controller, '-n', ns, ...args], stdin === undefined ? {} : { stdin });
    const lease = (name: string) =>
      JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: 'controller-0', leaseDurationSeconds: 15 } });
    const own = componentName('aw', 'controller');
    const created = await asController(['create', '-f', '-'], lease(own));
    expect(created.code, created.stderr).toBe(0);
    // Renewal is an update (PUT) of the object just read, as leader election does it.
    const read = await asController(['get', 'lease', own, '-o', 'json']);
    expect(read.code, read.stderr).toBe(0);
    const renewed = JSON.parse(read.stdout) as Tree;
    renewed.spec.renewTime = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    const replaced = await asController(['replace', '-f', '-'], JSON.stringify(renewed));
    expect(replaced.code, replaced.stderr).toBe(0);
    // create cannot be limited by name (see rbac.yaml), but another Lease can be neither read nor updated.
    const other = await asController(['create', '-f', '-'], lease('other-lease'));
    expect(other.code, other.stderr).toBe(0);
    const stolen = await asController(['get', 'lease', 'other-lease']);
    expect(stolen.code).not.toBe(0);
    expect(stolen.stderr).toContain('forbidden');
    const gatewayReads = await run(kubectlBin, ['--kubeconfig', kubeconfigs.gateway, '-n', ns, 'get', exr]);
    expect(gatewayReads.code, gatewayReads.stderr).toBe(0);
  });

  it('runs the NOTES key commands (keys create, list, rotate, rotate-webhook-secret, revoke --kube) as the gateway, as an operator would', async () => {
    const { kubeconfigs } = await installChartRbac({ adminKubeconfig, kubectl: kubectlBin, namespace: ns });
    // In the pod: `kubectl exec deploy/<gateway> -- node bin/agent-wallet.js keys …` with the gateway's token
    // and POD_NAMESPACE; here the same CLI with a kubeconfig holding that token.
    const keys = (args: string[]) =>
      run(process.execPath, [join(repoRoot, 'bin/agent-wallet.js'), 'keys', ...args, '--kube', '--kubeconfig', kubeconfigs.gateway, '--json'], {
        env: { ...process.env, POD_NAMESPACE: ns, KUBECONFIG: '' },
      });
    const created = await keys(['create', '--mode', 'sponsored', '--name', 'chart-test']);
    expect(created.code, created.stderr).toBe(0);
    const apiKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
    const id = /^aw_([^_]+)_/.exec(apiKey)?.[1];
    expect(id, apiKey).toBeDefined();
    const listed = await keys(['list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((k) => k.id)).toContain(id);
    const rotated = await keys(['rotate', id!]);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect((JSON.parse(rotated.stdout) as { api_key: string }).api_key).not.toBe(apiKey);
    // The webhook secret: created with the key as an immutable Secret the gateway cannot read back.
    const firstSecret = (JSON.parse(created.stdout) as { webhook_secret: string }).webhook_secret;
    expect(firstSecret).toMatch(/^whsec_/);
    const rotatedSecret = await keys(['rotate-webhook-secret', id!, '--overlap-seconds', '600']);
    expect(rotatedSecret.code, rotatedSecret.stderr).toBe(0);
    const signing = (JSON.parse((await kubectl(['get', clients, id!, '-n', ns, '-o', 'json'])).stdout) as Tree).spec.webhookSigning;
    expect(signing.previous.secretRef).not.toBe(signing.current.secretRef);
    const stored = JSON.parse((await kubectl(['get', 'secret', signing.current.secretRef, '-n', ns, '-o', 'json'])).stdout) as Tree;
    expect(stored.immutable).toBe(true);
    expect(Buffer.from(stored.data.secret, 'base64').toString()).toBe((JSON.parse(rotatedSecret.stdout) as { webhook_secret: string }).webhook_secret);
    const readBack = await run(kubectlBin, ['--kubeconfig', kubeconfigs.gateway, '-n', ns, 'get', 'secret', signing.current.secretRef]);
    expect(readBack.stderr).toContain('forbidden');
    const revoked = await keys(['revoke', id!]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const revokedClient = await kubectl(['get', clients, id!, '-n', ns, '-o', 'json']);
    expect((JSON.parse(revokedClient.stdout) as Tree).spec.enabled).toBe(false);
  }, 180_000); // four CLI processes, each loading tsx and the Kubernetes client

  it('runs policy apply, list, get, suspend, resume and delete --kube as the gateway, as an operator would', async () => {
    const { kubeconfigs } = await installChartRbac({ adminKubeconfig, kubectl: kubectlBin, namespace: ns });
    const asGateway = (command: string, args: string[]) =>
      run(process.execPath, [join(repoRoot, 'bin/agent-wallet.js'), command, ...args, '--kube', '--kubeconfig', kubeconfigs.gateway, '--json'], {
        env: { ...process.env, POD_NAMESPACE: ns, KUBECONFIG: '' },
      });
    const created = await asGateway('keys', ['create', '--mode', 'sponsored', '--name', 'policy-test']);
    expect(created.code, created.stderr).toBe(0);
    const id = /^aw_([^_]+)_/.exec((JSON.parse(created.stdout) as { api_key: string }).api_key)![1]!;
    const dir = mkdtempSync(join(tmpdir(), 'aw-policy-kube-'));
    const file = join(dir, 'policy.yaml');
    writeFileSync(file, `name: bot-1\nspec:\n  apiClient: ${id}\n  agents: { match: exact, agentId: bot-1 }\n  rules:\n    - { name: base-only, action: accept, chains: [base] }\n`);
    const applied = await asGateway('policy', ['apply', '-f', file]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(JSON.parse(applied.stdout)).toMatchObject({ created: true, policy: { name: 'bot-1', api_client: id } });
    // The API server holds it as the CRD has it (and `kubectl get agentpolicies` shows it).
    const stored = JSON.parse((await kubectl(['get', policies, 'bot-1', '-n', ns, '-o', 'json'])).stdout) as Tree;
    expect(stored.spec).toEqual({ apiClient: id, agents: { match: 'exact', agentId: 'bot-1' }, suspended: false, rules: [{ name: 'base-only', action: 'accept', chains: ['base'] }] });
    const listed = await asGateway('policy', ['list', '--client', id]);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { name: string }[]).map((p) => p.name)).toEqual(['bot-1']);
    const suspended = await asGateway('policy', ['suspend', 'bot-1']);
    expect(suspended.code, suspended.stderr).toBe(0);
    expect((JSON.parse((await kubectl(['get', policies, 'bot-1', '-n', ns, '-o', 'json'])).stdout) as Tree).spec.suspended).toBe(true);
    expect((await asGateway('policy', ['resume', 'bot-1'])).code).toBe(0);
    const got = await asGateway('policy', ['get', 'bot-1']);
    expect(JSON.parse(got.stdout)).toMatchObject({ name: 'bot-1', spec: { suspended: false } });
    // An invalid policy is refused before the API server is asked; a key that is not there too.
    writeFileSync(file, JSON.stringify({ name: 'bad', spec: { apiClient: 'nosuchkey0000000' } }));
    const orphan = await asGateway('policy', ['apply', '-f', file]);
    expect([orphan.code, orphan.stderr]).toEqual([3, `agent-wallet: spec.apiClient: no API key with id "nosuchkey0000000" in namespace ${ns}\n`]);
    const deleted = await asGateway('policy', ['delete', 'bot-1']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect((await kubectl(['get', policies, '-n', ns, '-o', 'name'])).stdout.trim()).toBe('');
  }, 180_000);
});

describe('the chart’s values schema', () => {
  it('takes per chain the protocols configuration the service takes (each family config.ts, assembled in src/protocols/config.ts), and the tokens it knows', () => {
    const schema = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8')) as Tree;
    const { $schema: _, ...protocols } = z.toJSONSchema(protocolsConfigSchema(FAMILIES), { io: 'input' }) as Record<string, unknown>;
    for (const chain of ['ethereum', 'base', 'arbitrum']) {
      const { description: __, ...inChart } = schema.properties.chains.properties[chain].properties.protocols;
      expect(inChart, chain).toEqual(protocols);
      expect(schema.properties.chains.properties[chain].properties.tokens.items.properties.symbol.enum).toEqual(['USDC', 'USDT', 'aUSD', 'WETH']);
    }
  });
});

describe('the PrometheusRule', () => {
  type Rule = { alert: string; expr: string; for?: string; labels: Record<string, string>; annotations: Record<string, string> };
  const rulesOf = async (values: 'minimal' | 'full', set: Record<string, string> = {}): Promise<Rule[] | undefined> => {
    const ms = parseManifests(await renderChart({ namespace: 'agents', values: [valuesFile(values)], set }));
    const rule = ms.find((m) => m.kind === 'PrometheusRule') as Tree;
    if (!rule) return undefined;
    expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(rule.spec.groups).toHaveLength(1);
    return rule.spec.groups[0].rules as Rule[];
  };
  const find = (rules: Rule[], alert: string, chain: string) => rules.find((r) => r.alert === alert && r.expr.includes(`chain="${chain}"`));

  it('is off by default', async () => {
    expect(await rulesOf('minimal')).toBeUndefined();
  });

  it('alerts per enabled chain on the executors, the settler, the faucet and the paymaster deposit, at the values’ thresholds in ether', async () => {
    const rules = (await rulesOf('full'))!;
    for (const chain of ['ethereum', 'base', 'arbitrum']) {
      for (const alert of ['AgentWalletExecutorBalanceLow', 'AgentWalletSettlerBalanceLow', 'AgentWalletFaucetBalanceLow', 'AgentWalletPaymasterDepositLow']) {
        const r = find(rules, alert, chain);
        expect(r, `${alert} ${chain}`).toBeDefined();
        expect(r!.for).toBe('15m');
        expect(r!.labels).toEqual({ severity: 'page' });
        expect(r!.expr).toContain('namespace="agents"');
      }
    }
    // base's thresholds from values-full.yaml; ethereum's the chart's defaults (values.yaml).
    expect(find(rules, 'AgentWalletExecutorBalanceLow', 'base')!.expr).toBe(
      'agentwallet_account_balance_wei{namespace="agents", chain="base", account=~"executor-[0-9]+"} / 1e18 < 0.02',
    );
    expect(find(rules, 'AgentWalletPaymasterDepositLow', 'base')!.expr).toBe('agentwallet_paymaster_deposit_wei{namespace="agents", chain="base"} / 1e18 < 0.25');
    expect(find(rules, 'AgentWalletSettlerBalanceLow', 'ethereum')!.expr).toBe(
      'agentwallet_account_balance_wei{namespace="agents", chain="ethereum", account="x402-settler"} / 1e18 < 0.05',
    );
    expect(find(rules, 'AgentWalletExecutorBalanceLow', 'ethereum')!.expr).toMatch(/ < 0\.1$/);
    // Prometheus's own templates reach it untouched by Helm's.
    expect(find(rules, 'AgentWalletExecutorBalanceLow', 'base')!.annotations.description).toMatch(/^\{\{ \$labels\.account \}\} \(\{\{ \$labels\.address \}\}\) holds \{\{ \$value \}\} ETH/);
    const stale = rules.filter((r) => r.alert === 'AgentWalletBalancesStale');
    expect(stale.map((r) => r.expr)).toEqual(['time() - agentwallet_balances_updated_timestamp_seconds{namespace="agents"} > 5400']);
  });

  it('names only metrics and labels the service exports', async () => {
    const rules = (await rulesOf('full'))!;
    const { registry } = createMetrics({ defaultMetrics: false });
    const types = new Map((await registry.getMetricsAsJSON()).map((m) => [m.name, String(m.type)]));
    const labelNames = (name: string) => (registry.getSingleMetric(name) as unknown as { labelNames: string[] }).labelNames;
    for (const r of rules) {
      const m = /(agentwallet_[a-z_]+)\{([^}]*)\}/.exec(r.expr);
      expect(m, r.expr).not.toBeNull();
      expect(types.get(m![1]!), m![1]).toBe('gauge');
      // Every selector label but the one Prometheus adds to every target (namespace) is one of the gauge's.
      const used = [...m![2]!.matchAll(/([a-z_]+)=~?"/g)].map((x) => x[1]!).filter((l) => l !== 'namespace');
      for (const l of used) expect(labelNames(m![1]!), `${r.alert}: ${l}`).toContain(l);
    }
  });

  it('leaves out the settler and faucet alerts when the release holds no such keys, and requires a chain’s thresholds', async () => {
    const rules = (await rulesOf('minimal', { 'prometheusRule.enabled': 'true' }))!;
    expect(rules.map((r) => r.alert)).toEqual(['AgentWalletExecutorBalanceLow', 'AgentWalletPaymasterDepositLow', 'AgentWalletBalancesStale']);
    expect(rules[0]!.expr).toMatch(/chain="base".* < 0\.01$/);
    expect(rules[2]!.expr).toMatch(/ > 600$/);
    await expect(rulesOf('minimal', { 'prometheusRule.enabled': 'true', 'prometheusRule.thresholds.base.executorBalanceEth': 'lots' })).rejects.toThrow(
      /executorBalanceEth/,
    );
  });
});
