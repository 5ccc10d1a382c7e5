/**
 * A real Kubernetes API server for the tests: Debian's etcd 3.4 and kube-apiserver v1.30 built from its Go
 * modules (test/cluster/kube-build/build.sh, cached outside the repository), on loopback, with the CRDs of
 * crds/ applied and Established. kind cannot run here (no Docker engine), and a fake API server would
 * agree with our assumptions instead of testing them.
 *
 *   const kube = await startKubeApiServer();
 *   const kc = kube.kubeConfig();            // @kubernetes/client-node, as admin (system:masters)
 *   await kube.kubectl(['get', 'exr', '-A']);
 *   await kube.stop();
 *
 * Every process is started in its own process group and stopped on stop(), on this process's exit and on
 * SIGINT/SIGTERM/SIGHUP; a watchdog shell (one per server) kills them if this process dies without running
 * any of that (SIGKILL, OOM), so no test run leaves an etcd or an API server behind.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { freePorts } from './net.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const BUILD_SCRIPT = join(repoRoot, 'test/cluster/kube-build/build.sh');

export interface KubeApiServerOptions {
  /**
   * CRD manifests to apply and wait for: a directory (every *.yaml in it) or a list of files. Default: the
   * repository's crds/. `false` applies none.
   */
  crds?: string | string[] | false;
  /** Namespaces to create once the server is up ("default" always exists). */
  namespaces?: string[];
  /** Extra kube-apiserver flags (`--name=value`), e.g. `--watch-cache=false`. */
  apiServerArgs?: string[];
  /** Where progress and the servers' output go (default: nowhere; the output's tail is in start errors). */
  log?: (line: string) => void;
}

export interface KubeApiServer {
  /** A kubeconfig for the admin user (group system:masters), trusting the server's self-signed CA. */
  readonly kubeconfigPath: string;
  /** https://127.0.0.1:<port> */
  readonly server: string;
  /** The admin's bearer token. */
  readonly token: string;
  /** PEM of the CA that signed the serving certificate. */
  readonly caPem: string;
  /** Directory of kube-apiserver and kubectl. */
  readonly binDir: string;
  /** How long each start-up stage took (ms): build, etcd, apiServer (to /readyz), crds, warmUp, total. */
  readonly timings: Readonly<Record<string, number>>;
  /** A fresh client-node KubeConfig for the admin. */
  kubeConfig(): KubeConfig;
  /** Runs the built kubectl against this server as admin. Never rejects on a non-zero exit: check `code`. */
  kubectl(args: string[], opts?: { stdin?: string; timeoutMs?: number }): Promise<KubectlResult>;
  /**
   * A kubeconfig for a ServiceAccount (created if missing) with a token from the TokenRequest API: for
   * tests of RBAC rules, which do not apply to the admin.
   */
  serviceAccountKubeconfig(namespace: string, name: string): Promise<string>;
  /** SIGKILLs the API server (etcd keeps running): clients see connection refused until startApiServer(). */
  killApiServer(): Promise<void>;
  /** SIGSTOPs the API server: connections stay open and nothing answers (a hung server, not a dead one). */
  pauseApiServer(): void;
  resumeApiServer(): void;
  /** Starts the API server again (same port, certificates and etcd) after killApiServer(); waits for /readyz. */
  startApiServer(): Promise<void>;
  /** Stops everything and removes the data directory. Idempotent. */
  stop(): Promise<void>;
}

export interface KubectlResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** Runs test/cluster/kube-build/build.sh (instant once built) and returns the directory of the binaries. */
export async function kubeBinDir(log?: (line: string) => void): Promise<string> {
  const { stdout, stderr, code } = await run('bash', [BUILD_SCRIPT], { timeoutMs: 60 * 60_000 });
  if (code !== 0) throw new Error(`${BUILD_SCRIPT} failed (exit ${code}):\n${tail(stderr)}`);
  if (stderr.trim() !== '') log?.(`kube-build: ${tail(stderr, 2_000)}`);
  const dir = stdout.trim().split('\n').at(-1) ?? '';
  if (!existsSync(join(dir, 'kube-apiserver')) || !existsSync(join(dir, 'kubectl'))) {
    throw new Error(`${BUILD_SCRIPT} printed ${JSON.stringify(dir)}, which does not hold kube-apiserver and kubectl`);
  }
  return dir;
}

export async function startKubeApiServer(opts: KubeApiServerOptions = {}): Promise<KubeApiServer> {
  const log = opts.log ?? (() => undefined);
  const timings: Record<string, number> = {};
  const t0 = performance.now();
  const mark = (stage: string, since: number) => (timings[stage] = Math.round(performance.now() - since));

  let t = performance.now();
  const binDir = await kubeBinDir(log);
  mark('build', t);

  // etcd fsyncs every write; tmpfs makes that free, which is all a throwaway test server needs.
  const base = existsSync('/dev/shm') && statSync('/dev/shm').isDirectory() ? '/dev/shm' : tmpdir();
  const dir = mkdtempSync(join(base, 'aw-kube-'));
  const group = new ProcessGroup(dir);
  try {
    const token = randomBytes(24).toString('hex');
    const files = writeServerFiles(dir, token);
    const [etcdClient, etcdPeer, apiPort] = await freePorts(3);
    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    const server = `https://127.0.0.1:${apiPort}`;

    // Both start at once: the API server retries etcd until it answers.
    t = performance.now();
    group.start('etcd', 'etcd', [
      '--name=aw-test',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=aw-test=http://127.0.0.1:${etcdPeer}`,
      '--logger=zap',
      '--log-level=error',
    ], log);
    const apiServerArgs = [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--cert-dir=${files.certDir}`,
      `--token-auth-file=${files.tokens}`,
      '--authorization-mode=RBAC',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${files.saPublic}`,
      `--service-account-signing-key-file=${files.saPrivate}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      // Nothing here needs them, and they cost start-up time and writes.
      '--enable-priority-and-fairness=false',
      '--endpoint-reconciler-type=none',
      '--profiling=false',
      ...(opts.apiServerArgs ?? []),
    ];
    const startApi = () => group.start('kube-apiserver', join(binDir, 'kube-apiserver'), apiServerArgs, log);
    startApi();
    group.startWatchdog();
    await waitFor(`etcd at ${etcdUrl}`, () => etcdHealthy(etcdUrl), 30_000, group);
    mark('etcd', t);
    await waitFor(`kube-apiserver at ${server}`, () => apiReady(server, token), 90_000, group);
    mark('apiServer', t);

    const caPem = await readFile(join(files.certDir, 'apiserver.crt'), 'utf8');
    const kubeconfigPath = join(dir, 'kubeconfig');
    writeFileSync(kubeconfigPath, tokenKubeconfig(server, caPem, 'admin', token));
    const kubectl = (args: string[], o: { stdin?: string; timeoutMs?: number } = {}) =>
      run(join(binDir, 'kubectl'), ['--kubeconfig', kubeconfigPath, ...args], o);
    const mustKubectl = async (args: string[], stdin?: string) => {
      const r = await kubectl(args, stdin === undefined ? {} : { stdin });
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (exit ${r.code}): ${r.stderr.trim()}`);
      return r.stdout;
    };

    t = performance.now();
    const crdFiles = crdManifests(opts.crds);
    for (const ns of opts.namespaces ?? []) {
      if (ns !== 'default') await mustKubectl(['create', 'namespace', ns]);
    }
    if (crdFiles.length > 0) {
      const fileArgs = crdFiles.flatMap((f) => ['-f', f]);
      await mustKubectl(['apply', ...fileArgs]);
      await mustKubectl(['wait', '--for=condition=Established', '--timeout=60s', ...fileArgs]);
    }
    mark('crds', t);
    t = performance.now();
    if (crdFiles.length > 0) await warmUpCustomResourceWrites(server, token, caPem, crdFiles[0]!);
    mark('warmUp', t);
    mark('total', t0);
    log(`kube-apiserver ${server} ready: ${JSON.stringify(timings)}`);

    let paused = false;
    return {
      kubeconfigPath,
      server,
      token,
      caPem,
      binDir,
      timings,
      kubeConfig() {
        const kc = new KubeConfig();
        kc.loadFromFile(kubeconfigPath);
        return kc;
      },
      kubectl,
      async serviceAccountKubeconfig(namespace, name) {
        const exists = await kubectl(['-n', namespace, 'get', 'serviceaccount', name]);
        if (exists.code !== 0) await mustKubectl(['-n', namespace, 'create', 'serviceaccount', name]);
        const saToken = (await mustKubectl(['-n', namespace, 'create', 'token', name, '--duration=1h'])).trim();
        const path = join(dir, `kubeconfig-${namespace}-${name}`);
        writeFileSync(path, tokenKubeconfig(server, caPem, `system:serviceaccount:${namespace}:${name}`, saToken, namespace));
        return path;
      },
      async killApiServer() {
        await group.kill('kube-apiserver');
      },
      pauseApiServer() {
        group.signal('kube-apiserver', 'SIGSTOP');
        paused = true;
      },
      resumeApiServer() {
        group.signal('kube-apiserver', 'SIGCONT');
        paused = false;
      },
      async startApiServer() {
        if (group.running('kube-apiserver')) throw new Error('kube-apiserver is still running: killApiServer() first');
        startApi();
        await waitFor(`kube-apiserver at ${server}`, () => apiReady(server, token), 90_000, group);
      },
      async stop() {
        if (paused) group.signal('kube-apiserver', 'SIGCONT');
        await group.stopAll();
      },
    };
  } catch (e) {
    await group.stopAll();
    throw e;
  }
}

/** A kubeconfig (YAML is a superset of JSON) with one cluster, one token user and one context. */
export function tokenKubeconfig(server: string, caPem: string, user: string, token: string, namespace = 'default'): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'aw-test', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: 'aw-test', context: { cluster: 'aw-test', user, namespace } }],
    'current-context': 'aw-test',
  });
}

/**
 * The first write of a custom resource after start-up waits ~2 s inside the API server (any kind, once; it
 * happens before admission, and even a dry run that fails validation pays it). Paid here, with a dry-run
 * create of an empty object, so that "ready" means writes run at full speed and no test's first write is slow.
 */
async function warmUpCustomResourceWrites(server: string, token: string, caPem: string, crdFile: string): Promise<void> {
  const crd = parseYaml(await readFile(crdFile, 'utf8')) as {
    spec: { group: string; scope: string; names: { kind: string; plural: string }; versions: { name: string }[] };
  };
  const { group, scope, names, versions } = crd.spec;
  const version = versions[0]!.name;
  const path = `/apis/${group}/${version}${scope === 'Namespaced' ? '/namespaces/default' : ''}/${names.plural}?dryRun=All`;
  const body = JSON.stringify({ apiVersion: `${group}/${version}`, kind: names.kind, metadata: { name: 'warm-up' } });
  const status = await new Promise<number>((resolve, reject) => {
    const req = httpsRequest(
      `${server}${path}`,
      {
        method: 'POST',
        ca: caPem,
        timeout: 30_000,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('warm-up write timed out')));
    req.end(body);
  });
  // 201 if an empty object is valid for that CRD, 422 if not: either way the write path has run.
  if (status !== 201 && status !== 422) throw new Error(`warm-up dry-run create on ${path} answered ${status}`);
}

function writeServerFiles(dir: string, token: string) {
  const certDir = join(dir, 'certs');
  const tokens = join(dir, 'tokens.csv');
  const saPrivate = join(dir, 'sa.key');
  const saPublic = join(dir, 'sa.pub');
  // token,user,uid,"groups": the admin bypasses RBAC through system:masters, as cluster-admin does.
  writeFileSync(tokens, `${token},admin,admin,"system:masters"\n`, { mode: 0o600 });
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  writeFileSync(saPrivate, privateKey, { mode: 0o600 });
  writeFileSync(saPublic, publicKey);
  return { certDir, tokens, saPrivate, saPublic };
}

function crdManifests(crds: KubeApiServerOptions['crds']): string[] {
  if (crds === false) return [];
  if (Array.isArray(crds)) return crds;
  const dir = crds ?? join(repoRoot, 'crds');
  if (!existsSync(dir)) throw new Error(`no CRD directory at ${dir}`);
  const files = readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => join(dir, f));
  if (files.length === 0) throw new Error(`no *.yaml CRD manifests in ${dir}`);
  return files;
}

// ---- processes ----

interface Proc {
  child: ChildProcess;
  exited: Promise<void>;
  output: string[];
}

/**
 * The servers of one KubeApiServer: each in its own process group (so a signal reaches whatever it forks),
 * all stopped together. Registered for this process's exit and fatal signals.
 */
class ProcessGroup {
  private readonly procs = new Map<string, Proc>();
  private watchdog: ChildProcess | undefined;
  private stopping: Promise<void> | undefined;

  constructor(readonly dir: string) {
    liveGroups.add(this);
    installExitHooks();
  }

  start(name: string, cmd: string, args: string[], log: (line: string) => void): void {
    const child = spawn(cmd, args, { cwd: this.dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const output: string[] = [];
    const onData = (d: Buffer) => {
      for (const line of d.toString().split('\n')) {
        if (line === '') continue;
        output.push(line);
        if (output.length > 200) output.shift();
        log(`[${name}] ${line}`);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.once('error', (e) => output.push(`spawn failed: ${e.message}`));
    this.procs.set(name, { child, exited, output });
    this.watchdog?.kill('SIGKILL');
    if (this.watchdog) this.startWatchdog();
  }

  /**
   * A shell in its own session that SIGKILLs the groups and removes the directory once this process is gone:
   * the only clean-up that survives a SIGKILL of the test process. Replaced whenever a server is (re)started.
   */
  startWatchdog(): void {
    const pgids = [...this.procs.values()].map((p) => p.child.pid).filter((p): p is number => p !== undefined);
    const script =
      `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ` +
      `kill -KILL ${pgids.map((p) => `-${p}`).join(' ')} 2>/dev/null; sleep 1; rm -rf '${this.dir}'`;
    this.watchdog = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
    this.watchdog.unref();
  }

  running(name: string): boolean {
    const p = this.procs.get(name);
    return p !== undefined && p.child.exitCode === null && p.child.signalCode === null;
  }

  /** Output of a process that has exited, for the error of a start that failed. */
  exitedEarly(): string | undefined {
    for (const [name, p] of this.procs) {
      if (!this.running(name)) {
        return `${name} exited (${p.child.exitCode ?? p.child.signalCode}):\n${p.output.slice(-30).join('\n')}`;
      }
    }
    return undefined;
  }

  signal(name: string, signal: NodeJS.Signals): void {
    const pid = this.procs.get(name)?.child.pid;
    if (pid !== undefined && this.running(name)) process.kill(-pid, signal);
  }

  async kill(name: string): Promise<void> {
    const p = this.procs.get(name);
    if (!p) return;
    if (this.running(name) && p.child.pid !== undefined) {
      try {
        process.kill(-p.child.pid, 'SIGCONT');
        process.kill(-p.child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await p.exited;
  }

  killAllNow(): void {
    for (const p of this.procs.values()) {
      if (p.child.pid === undefined || p.child.exitCode !== null || p.child.signalCode !== null) continue;
      try {
        process.kill(-p.child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    this.watchdog?.kill('SIGKILL');
  }

  stopAll(): Promise<void> {
    this.stopping ??= (async () => {
      // A throwaway server: SIGKILL is as good as a graceful stop and never hangs.
      await Promise.all([...this.procs.keys()].map((n) => this.kill(n)));
      this.watchdog?.kill('SIGKILL');
      rmSync(this.dir, { recursive: true, force: true });
      liveGroups.delete(this);
    })();
    return this.stopping;
  }
}

const liveGroups = new Set<ProcessGroup>();
let exitHooksInstalled = false;

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', () => {
    for (const g of liveGroups) {
      g.killAllNow();
      rmSync(g.dir, { recursive: true, force: true });
    }
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      for (const g of liveGroups) g.killAllNow();
      // A listener disables Node's default exit on the signal: restore it unless someone else listens too.
      if (process.listenerCount(signal) === 1) {
        process.off(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

// ---- readiness ----

async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs: number, group: ProcessGroup): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const early = group.exitedEarly();
    if (early !== undefined) throw new Error(`${what} did not start: ${early}`);
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`${what} not ready after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function etcdHealthy(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpRequest(`${url}/health`, { timeout: 1_000 }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve(res.statusCode === 200 && body.includes('"true"')));
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** /readyz answers 200 once etcd is reachable and every post-start hook (RBAC bootstrap roles…) is done. */
function apiReady(server: string, token: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpsRequest(
      `${server}/readyz`,
      // The serving certificate does not exist before the server writes it: trust is checked by the clients.
      { timeout: 2_000, rejectUnauthorized: false, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

function run(cmd: string, args: string[], opts: { stdin?: string; timeoutMs?: number } = {}): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile(
      cmd,
      args,
      { timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 << 20, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ stdout, stderr: error && code === 1 && stderr === '' ? error.message : stderr, code });
      },
    );
    if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
    else child.stdin!.end();
  });
}

const tail = (s: string, n = 4_000): string => (s.length > n ? `…${s.slice(-n)}` : s);
