/**
 * The Helm chart as tests use it: render it with the helm built by tools.sh, split the output into objects,
 * and install its ServiceAccounts and RBAC into a namespace of the test API server with a kubeconfig per
 * role, so a test (or the cluster e2e layout) can run a role with exactly the rights the chart grants it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const chartDir = join(repoRoot, 'charts/agent-wallet');
export const valuesFile = (name: 'minimal' | 'full'): string => join(repoRoot, `test/cluster/helm/values-${name}.yaml`);

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export interface RunResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** Runs a command; never rejects on a non-zero exit (check `code`). */
export function run(cmd: string, args: string[], opts: { stdin?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      cmd,
      args,
      { env: opts.env ?? process.env, timeout: opts.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') return reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}`));
        resolve({ stdout, stderr, code: typeof err?.code === 'number' ? err.code : 0 });
      },
    );
    if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
  });
}

let toolsDir: Promise<string> | undefined;

/** The directory of helm and kubeconform (tools.sh: built from their Go modules once, then cached). */
export function chartTools(): Promise<string> {
  toolsDir ??= run('bash', [join(repoRoot, 'test/cluster/helm/tools.sh')], { timeoutMs: 30 * 60_000 }).then((r) => {
    if (r.code !== 0) throw new Error(`tools.sh failed (exit ${r.code}):\n${r.stderr.slice(-4_000)}`);
    return r.stdout.trim().split('\n').at(-1)!;
  });
  return toolsDir;
}

/** helm with its cache, config and data in a throwaway directory (never the user's ~/.config/helm). */
export async function helm(args: string[], opts: { kubeconfig?: string; stdin?: string } = {}): Promise<RunResult> {
  const home = mkdtempSync(join(tmpdir(), 'aw-helm-'));
  const env = {
    ...process.env,
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_DATA_HOME: join(home, 'data'),
    ...(opts.kubeconfig !== undefined && { KUBECONFIG: opts.kubeconfig }),
  };
  return run(join(await chartTools(), 'helm'), args, { env, timeoutMs: 120_000, ...(opts.stdin !== undefined && { stdin: opts.stdin }) });
}

export interface RenderOptions {
  namespace: string;
  release?: string;
  values?: string[];
  set?: Record<string, string>;
  showOnly?: string[];
  kubeVersion?: string;
}

/** `helm template`; throws with helm's message when the chart refuses the values. */
export async function renderChart(opts: RenderOptions): Promise<string> {
  const args = ['template', opts.release ?? 'aw', chartDir, '--namespace', opts.namespace, '--kube-version', opts.kubeVersion ?? '1.30.14'];
  for (const f of opts.values ?? []) args.push('-f', f);
  for (const [k, v] of Object.entries(opts.set ?? {})) args.push('--set', `${k}=${v}`);
  for (const s of opts.showOnly ?? []) args.push('--show-only', s);
  const r = await helm(args);
  if (r.code !== 0) throw new Error(r.stderr.trim());
  return r.stdout;
}

export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

export const componentName = (release: string, component: string): string => `${release}-agent-wallet-${component}`;

export interface ChartRbac {
  /** ServiceAccount name per role. */
  serviceAccounts: { gateway: string; controller: string; chainWorker: string };
  /** A kubeconfig per role that authenticates as its ServiceAccount (token from the TokenRequest API). */
  kubeconfigs: { gateway: string; controller: string };
}

/**
 * Applies the chart's ServiceAccounts, Roles and RoleBindings (release "aw", the minimal values) into an
 * existing namespace, as the admin of `adminKubeconfig`, and returns a kubeconfig per role that uses the
 * Kubernetes API. A role run with one of these has exactly the chart's rights: what it is denied, the chart
 * forgot. Chain workers get none: they never call the API (automountServiceAccountToken: false).
 */
export async function installChartRbac(opts: {
  adminKubeconfig: string;
  kubectl: string;
  namespace: string;
  values?: string[];
  set?: Record<string, string>;
}): Promise<ChartRbac> {
  const release = 'aw';
  const text = await renderChart({
    namespace: opts.namespace,
    release,
    values: opts.values ?? [valuesFile('minimal')],
    ...(opts.set && { set: opts.set }),
    showOnly: ['templates/serviceaccounts.yaml', 'templates/rbac.yaml'],
  });
  const kubectl = (args: string[], stdin?: string) =>
    run(opts.kubectl, ['--kubeconfig', opts.adminKubeconfig, '-n', opts.namespace, ...args], stdin === undefined ? {} : { stdin });
  const applied = await kubectl(['apply', '-f', '-'], text);
  if (applied.code !== 0) throw new Error(`kubectl apply of the chart's RBAC failed: ${applied.stderr}`);

  const sa = {
    gateway: componentName(release, 'gateway'),
    controller: componentName(release, 'controller'),
    chainWorker: componentName(release, 'chain-worker'),
  };
  const view = await kubectl(['config', 'view', '--raw', '--minify', '-o', 'json']);
  if (view.code !== 0) throw new Error(`kubectl config view failed: ${view.stderr}`);
  const cluster = (JSON.parse(view.stdout) as { clusters: { cluster: Record<string, string> }[] }).clusters[0]!.cluster;
  const dir = mkdtempSync(join(tmpdir(), 'aw-chart-rbac-'));
  const kubeconfigFor = async (account: string): Promise<string> => {
    const token = await kubectl(['create', 'token', account, '--duration', '1h']);
    if (token.code !== 0) throw new Error(`kubectl create token ${account} failed: ${token.stderr}`);
    const path = join(dir, `${account}.kubeconfig`);
    writeFileSync(
      path,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'test', cluster }],
        users: [{ name: account, user: { token: token.stdout.trim() } }],
        contexts: [{ name: 'test', context: { cluster: 'test', user: account, namespace: opts.namespace } }],
        'current-context': 'test',
      }),
      { mode: 0o600 },
    );
    return path;
  };
  return {
    serviceAccounts: sa,
    kubeconfigs: { gateway: await kubeconfigFor(sa.gateway), controller: await kubeconfigFor(sa.controller) },
  };
}
