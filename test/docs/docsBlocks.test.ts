/**
 * Docs that run: every fenced block of README.md and docs/**\/*.md is run, checked as the output of the block
 * before it, or marked why not (test/docs/blocks.ts has the markers). Each page gets what `npm start` gives a
 * reader: a fresh data directory `.data` in a fresh working directory (the run's devnet manifest in
 * `.data/devnet/manifest.json`, as `npm start` writes it), the whole service on it (admin socket, development key,
 * the devnet's x402 settler) and the aUSD faucet, all against the run's one devnet.
 *
 * What is substituted, so a page reads as a person follows it:
 * - `http://127.0.0.1:8080` and `http://127.0.0.1:8090` (the defaults of `npm start`) become the page's service
 *   and faucet URLs; the CLI's own defaults are pointed there too (AGENT_WALLET_BASE_URL, AGENT_WALLET_FAUCET_URL),
 *   as the defaults point at `npm start`.
 * - in shell blocks, `<the development key npm start prints>` (or `<key>`) is the page's development key,
 *   `<the webhook secret npm start prints>` its webhook signing secret,
 *   `<counter>` the devnet's Counter (one address on every chain), and any other `<name>` or `<a.b>` the latest
 *   value of that JSON field in an earlier block's output on the page (`<request_id>`, `<required_amount_raw.aUSD>`),
 *   as a reader copies it from the answer above. A placeholder that is none of these fails the block.
 * - shell variables set in a block (`K=…`, `export …`) carry over to the page's next blocks, as in one terminal.
 *   Blocks run with `set -eo pipefail`, in the page's working directory, with `agent-wallet` (and `npx agent-wallet`)
 *   being bin/agent-wallet.js and node_modules this repository's.
 * - each block runs in a process group of its own: what it leaves running in the background (a receiver,
 *   `node receiver.mjs > receiver.log 2>&1 &`: its output redirected, or the block never ends) is stopped at the end
 *   of the page.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensurePrivateDir } from '../../src/lib/privateFs.ts';
import { registerRunningService } from '../../src/admin/running.ts';
import { faucetSettingsFromManifest, startFaucet } from '../../src/faucet/index.ts';
import { ensureDevKey } from '../../src/roles/devKey.ts';
import { devParseOptions, devWebhookSettings } from '../../src/roles/devOptions.ts';
import { parse } from '../../src/lib/args.ts';
import { startEmbeddedService } from '../../src/roles/embedded.ts';
import { newServiceSecret, tempDir, testDevnet } from '../support/env.ts';
import { withPoolLock } from '../support/poolLock.ts';
import { leaves, jsonValues, missingFromOutput, readBlocks, type Block } from './blocks.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const mdFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? mdFiles(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
const PAGES = ['README.md', ...mdFiles('docs').sort()];
const TRADES_IN_SHARED_POOLS = /protocols\/pool-[ab]-v[34]\.md$/;
/** The perp-v2 page trades in the devnet's one GMX market and shows its prices (test/e2e/protocols/perpV2.test.ts moves them). */
const TRADES_IN_GMX = /protocols\/perp-v2\.md$/;
const RUNNABLE = new Set(['sh', 'bash', 'js', 'mjs', 'ts']);
const BLOCK_TIMEOUT_MS = 120_000;

const devnet = testDevnet();
const counters = new Set(devnet.manifest.chains.map((c) => c.testContracts.counter));
const tally = { ran: 0, outputsChecked: 0, checkedBy: 0, skipped: [] as string[] };

interface PageEnv {
  workDir: string;
  /** Where the page's service says it runs (src/admin/running.ts), so `keys` without --data-dir finds it, as after `npm start`. */
  runtimeDir: string;
  url: string;
  faucetUrl: string;
  apiKey: string;
  webhookSecret: string | undefined;
  serviceSecret: string;
  stop(): Promise<void>;
}

/**
 * What `npm start` gives a reader, for one page: its own data directory, service and faucet on the run's devnet.
 * Given the page's earlier env (stopped), it starts again on the same directory, as `npm start -- <flags>` does.
 */
async function startPageEnv(again?: { workDir: string; serviceSecret: string; flags: string[] }): Promise<PageEnv> {
  const workDir = again?.workDir ?? tempDir('aw-docs-');
  const dataDir = join(workDir, '.data');
  if (!again) {
    await ensurePrivateDir(dataDir);
    mkdirSync(join(dataDir, 'devnet'), { mode: 0o700 });
    copyFileSync(devnet.manifestPath, join(dataDir, 'devnet', 'manifest.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(workDir, 'node_modules'));
    mkdirSync(join(workDir, '.bin'));
    symlinkSync(join(ROOT, 'bin', 'agent-wallet.js'), join(workDir, '.bin', 'agent-wallet'));
  }
  const { values } = parse(again?.flags ?? [], devParseOptions);
  const accounts = devnet.manifest.accounts;
  const serviceSecret = again?.serviceSecret ?? newServiceSecret();
  const service = await startEmbeddedService({
    dataDir,
    chains: devnet.chainConfigs(),
    serviceSecret,
    port: 0,
    adminSocket: true,
    decisionTimeoutMs: 20_000,
    webhooks: devWebhookSettings(values, {}),
    // As `npm start` has it: the devnet's settler settles x402; the chain workers hold the faucet account.
    payments: { x402SettlerKey: accounts.settler?.privateKey },
  });
  const faucet = await startFaucet({ settings: faucetSettingsFromManifest(devnet.manifest), workers: service.workers, port: 0, host: '127.0.0.1', logLevel: 'silent' });
  const { apiKey, webhookSecret } = await ensureDevKey(service.store, dataDir, service.webhookSecrets);
  const runtimeDir = join(workDir, '.run');
  const unregister = await registerRunningService({ dataDir, url: service.url }, { AGENT_WALLET_RUNTIME_DIR: runtimeDir });
  return {
    workDir,
    runtimeDir,
    url: service.url,
    faucetUrl: faucet.url,
    apiKey,
    webhookSecret,
    serviceSecret,
    async stop() {
      await unregister();
      await faucet.stop();
      await service.stop();
    },
  };
}

const KEY_PLACEHOLDERS = new Set(['<the development key npm start prints>', '<key>']);
const WEBHOOK_SECRET_PLACEHOLDER = '<the webhook secret npm start prints>';
/** The flags of `npm start` the page env honours: the others (port, data directory…) are the env's own. */
const NPM_START_FLAGS = new Set(['--allow-loopback-webhooks']);

function substitute(block: Block, env: PageEnv, fields: Map<string, unknown>): string {
  let body = block.body.replaceAll('http://127.0.0.1:8080', env.url).replaceAll('http://127.0.0.1:8090', env.faucetUrl);
  if (block.lang !== 'sh' && block.lang !== 'bash') return body;
  body = body.replace(/<([A-Za-z_][\w .-]*)>/g, (whole, name: string) => {
    if (KEY_PLACEHOLDERS.has(whole)) return env.apiKey;
    if (whole === WEBHOOK_SECRET_PLACEHOLDER && env.webhookSecret) return env.webhookSecret;
    if (name === 'counter') return [...counters][0]!;
    if (fields.has(name)) return String(fields.get(name));
    throw new Error(`${block.page}:${block.line}: no value for the placeholder ${whole} (not a field of an earlier output on the page)`);
  });
  return body;
}

/** Shell variables a block assigns: kept for the page's next blocks. */
const assigned = (body: string) => [...body.matchAll(/(?:^|[\s;(])(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]!);

/** The process groups of a page's blocks, to stop what they left running in the background. */
const groups: number[] = [];

function stopGroup(pgid: number | undefined, signal: NodeJS.Signals): void {
  try {
    if (pgid !== undefined) process.kill(-pgid, signal);
  } catch {
    // that group has no process left
  }
}

function stopGroups(): void {
  for (const pgid of groups.splice(0)) stopGroup(pgid, 'SIGTERM');
}

function runBash(script: string, env: PageEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AGENT_WALLET_')));
  const child = spawn('bash', ['-c', script], {
    cwd: env.workDir,
    env: {
      ...clean,
      PATH: `${join(env.workDir, '.bin')}:${process.env.PATH}`,
      AGENT_WALLET_BASE_URL: env.url,
      AGENT_WALLET_FAUCET_URL: env.faucetUrl,
      AGENT_WALLET_JOURNAL: join(env.workDir, 'journal.jsonl'),
      AGENT_WALLET_RUNTIME_DIR: env.runtimeDir,
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // a process group of its own (stopGroups)
  });
  if (child.pid !== undefined) groups.push(child.pid);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => stopGroup(child.pid, 'SIGKILL'), BLOCK_TIMEOUT_MS);
  return new Promise((res) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      // Nothing left running in its group: forget it (its id may be another's later).
      const at = child.pid === undefined ? -1 : groups.indexOf(child.pid);
      try {
        process.kill(-child.pid!, 0);
      } catch {
        if (at >= 0) groups.splice(at, 1);
      }
      res({ code, stdout, stderr });
    }),
  );
}

async function runPage(page: string, blocks: Block[]): Promise<void> {
  const failures: string[] = [];
  const runs = blocks.filter((b) => b.marker.kind === 'run');
  for (const b of runs) if (!RUNNABLE.has(b.lang)) failures.push(`${page}:${b.line}: a \`${b.lang || 'plain'}\` block is neither run nor marked (docs-test: skip <reason> | output)`);
  if (failures.length > 0) throw new Error(failures.join('\n'));
  let env: PageEnv | undefined;
  try {
    const fields = new Map<string, unknown>();
    const stateFile = () => join(env!.workDir, '.docs-test-state.sh');
    const names = new Set(runs.filter((b) => b.lang === 'sh' || b.lang === 'bash').flatMap((b) => assigned(b.body)));
    let last: { block: Block; stdout: string } | undefined;
    for (const [i, b] of blocks.entries()) {
      const where = `${page}:${b.line}`;
      if (b.marker.kind === 'skip') {
        tally.skipped.push(`${where} (${b.marker.reason})`);
        last = undefined;
        continue;
      }
      if (b.marker.kind === 'checked-by') {
        const file = join(ROOT, b.marker.file);
        expect(existsSync(file) && readFileSync(file, 'utf8').includes(page), `${where}: ${b.marker.file} checks ${page}`).toBe(true);
        tally.checkedBy++;
        continue;
      }
      if (b.marker.kind === 'output') {
        if (!last) {
          failures.push(`${where}: an output block must follow a block that ran`);
          continue;
        }
        const missing = missingFromOutput(b, last.stdout);
        if (missing.length > 0) failures.push(`${where}: the output of ${page}:${last.block.line} lacks ${missing.join(', ')}\n--- it printed:\n${last.stdout}`);
        else tally.outputsChecked++;
        continue;
      }
      env ??= await startPageEnv();
      if (b.marker.kind === 'save') {
        writeFileSync(join(env.workDir, b.marker.file), substitute(b, env, fields) + '\n');
        continue;
      }
      if (b.marker.kind === 'npm-start') {
        const m = /^npm start(?: -- ([^#\n]*))?\s*(?:#.*)?$/.exec(b.body.trim());
        const flags = m?.[1]?.trim().split(/\s+/).filter(Boolean) ?? [];
        const unknown = flags.filter((f) => !NPM_START_FLAGS.has(f));
        if (!m || unknown.length > 0) {
          failures.push(`${where}: an npm-start block is one \`npm start [-- <flags>]\` line, with flags among ${[...NPM_START_FLAGS].join(', ')}${unknown.length > 0 ? ` (not ${unknown.join(' ')})` : ''}`);
          break;
        }
        const { workDir, serviceSecret } = env;
        await env.stop();
        env = undefined;
        env = await startPageEnv({ workDir, serviceSecret, flags });
        tally.ran++;
        last = undefined;
        continue;
      }
      const body = substitute(b, env, fields);
      let command = body;
      if (b.lang === 'js' || b.lang === 'mjs' || b.lang === 'ts') {
        const file = join(env.workDir, `block-${i}.${b.lang === 'ts' ? 'ts' : 'mjs'}`);
        writeFileSync(file, body);
        command = b.lang === 'ts' ? `node ${JSON.stringify(join(ROOT, 'bin/run-ts.js'))} ${file}` : `node ${file}`;
      }
      const keep = [...names].map((n) => `declare -p ${n} 2>/dev/null`).join('; ');
      const script = [
        `npx() { if [ "$1" = agent-wallet ]; then shift; agent-wallet "$@"; else command npx "$@"; fi; }`,
        `[ -f ${stateFile()} ] && source ${stateFile()}`,
        // The block's own exit status stands: saving the variables (some maybe unset yet) must not change it.
        `trap 'rc=$?; set +e; { ${keep || ':'}; } > ${stateFile()}; exit $rc' EXIT`,
        'set -eo pipefail',
        command,
      ].join('\n');
      const r = await runBash(script, env);
      tally.ran++;
      const expected = b.marker.exit;
      if (r.code !== expected) {
        failures.push(`${where}: exited ${r.code}, expected ${expected}\n--- stdout:\n${r.stdout}\n--- stderr:\n${r.stderr}`);
        break; // the page's next blocks build on this one
      }
      for (const v of jsonValues(r.stdout)) leaves(v, fields);
      last = { block: b, stdout: r.stdout };
    }
  } finally {
    stopGroups();
    await env?.stop();
  }
  if (failures.length > 0) throw new Error(failures.join('\n\n'));
}

describe('docs that run', () => {
  const all = readBlocks(ROOT, PAGES);
  it.each(PAGES)('%s', { timeout: 300_000 }, async (page) => {
    const blocks = all.filter((b) => b.page === page);
    // The exchange families' pages trade in the devnet's shared Uniswap pools and show their prices: no other file
    // trades there while one runs (test/support/poolLock.ts).
    if (TRADES_IN_SHARED_POOLS.test(page)) await withPoolLock(() => runPage(page, blocks));
    else if (TRADES_IN_GMX.test(page)) await withPoolLock(() => runPage(page, blocks), 'gmx');
    else await runPage(page, blocks);
  });

  afterAll(() => {
    console.log(
      `docs test: ${all.length} blocks in ${PAGES.length} pages: ${tally.ran} ran, ${tally.outputsChecked} outputs checked, ` +
        `${tally.checkedBy} checked by other tests, ${tally.skipped.length} skipped:\n  ${tally.skipped.join('\n  ')}`,
    );
  });
});
