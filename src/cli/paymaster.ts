import { BaseError, createPublicClient, createWalletClient, formatEther, http, isAddress, parseEther, type Address, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount, privateKeyToAddress } from 'viem/accounts';
import { canonicalChain, CHAIN_IDS, type ChainName } from '../config/chains.ts';
import { CliError, parse } from '../lib/args.ts';
import {
  confirm,
  ENTRY_POINT_V07,
  readPaymaster,
  sendAddStake,
  sendDeploy,
  sendDeposit,
  TransactionFailed,
  type Owner,
  type PaymasterStatus,
} from '../paymaster/operations.ts';
import { iso, loadRotation, overlapEnd, RotationError, rotateFinish, rotateStart, rotateSwitched, type RotationState, type StepReport } from '../paymaster/rotation.ts';
import { isNetworkName, NETWORKS, readNetworkFile } from '../roles/networks.ts';
import { EXIT, fields } from './output.ts';

export const PAYMASTER_OPTIONS = {
  chain: { type: 'string' },
  'rpc-url': { type: 'string' },
  'entry-point': { type: 'string' },
  paymaster: { type: 'string' },
  signer: { type: 'string' },
  amount: { type: 'string' },
  deposit: { type: 'string' },
  stake: { type: 'string' },
  'unstake-delay': { type: 'string' },
  'sponsorship-ttl': { type: 'string' },
  state: { type: 'string' },
  to: { type: 'string' },
  'switched-at': { type: 'string' },
  json: { type: 'boolean' },
} as const;

export const OWNER_KEY_ENV = 'AGENT_WALLET_PAYMASTER_OWNER_KEY';
const SIGNER_KEY_ENV = 'AGENT_WALLET_PAYMASTER_SIGNER_KEY';
const DEFAULT_UNSTAKE_DELAY_SEC = 86_400;
const DEFAULT_TTL_SEC = 600;

type Out = (text: string) => void;

/** `agent-wallet paymaster …`: src/paymaster's operations on one chain through an RPC URL. */
export async function runPaymasterCommand(argv: string[], env: NodeJS.ProcessEnv = process.env, out: Out = (t) => process.stdout.write(t)): Promise<number> {
  const { values, positionals } = parse(argv, PAYMASTER_OPTIONS);
  const [verb, phase, ...extra] = positionals;
  const verbs = ['deploy', 'fund', 'stake', 'status', 'rotate'];
  if (verb === undefined || !verbs.includes(verb)) throw new CliError(`paymaster: one of ${verbs.join(', ')} (agent-wallet paymaster --help)`);
  if (verb === 'rotate' ? !['start', 'switched', 'finish'].includes(phase ?? '') : phase !== undefined) {
    throw new CliError(verb === 'rotate' ? 'paymaster rotate: start, switched or finish' : `paymaster ${verb}: unexpected ${phase}`);
  }
  if (extra.length > 0) throw new CliError(`paymaster: unexpected ${extra.join(' ')}`);
  const chain = chainOf(values.chain);
  const rpcUrl = values['rpc-url'] ?? env.AGENT_WALLET_RPC_URL?.trim();
  if (!rpcUrl) throw new CliError('paymaster: --rpc-url URL (or AGENT_WALLET_RPC_URL) is required');
  const entryPoint = addressOf(values['entry-point'], '--entry-point') ?? ENTRY_POINT_V07;
  const client = createPublicClient({ transport: http(rpcUrl), pollingInterval: 250 }) as PublicClient;
  const json = values.json === true;
  const print = (human: string, data: unknown) => out(json ? `${JSON.stringify(data, jsonBigints, 2)}\n` : human);
  try {
    const chainId = await client.getChainId();
    if (chainId !== CHAIN_IDS[chain.name]) throw new CliError(`the RPC's chain id is ${chainId}, not ${chain.name}'s ${CHAIN_IDS[chain.name]}`);
    const statePath = values.state ?? `paymaster-rotation-${chain.name}.json`;
    switch (verb) {
      case 'status': {
        const paymaster = required(addressOf(values.paymaster, '--paymaster'), '--paymaster');
        const status = await readPaymaster(client, entryPoint, paymaster);
        const rotation = values.state !== undefined ? loadRotation(statePath) : undefined;
        print(renderStatus(status, rotation), { chain: chain.name, entryPoint, ...status, ...(rotation && { rotation: rotationSummary(rotation) }) });
        return status.code ? EXIT.ok : EXIT.refused;
      }
      case 'deploy': {
        const owner = ownerFrom(env, client, rpcUrl);
        const signer = addressOf(values.signer, '--signer') ?? signerFromEnv(env);
        const r = await confirm(client, await sendDeploy(owner, entryPoint, signer), 'deploying the VerifyingPaymaster');
        const status = await readPaymaster(client, entryPoint, r.contractAddress!);
        print(`deployed the VerifyingPaymaster ${r.contractAddress} (tx ${r.hash})\n${renderStatus(status)}next: paymaster fund --paymaster ${r.contractAddress} --amount ETH; stake for an outside bundler\n`, {
          chain: chain.name, tx: r.hash, ...status,
        });
        return EXIT.ok;
      }
      case 'fund':
      case 'stake': {
        const owner = ownerFrom(env, client, rpcUrl);
        const paymaster = required(addressOf(values.paymaster, '--paymaster'), '--paymaster');
        const amount = ether(required(values.amount, '--amount'), '--amount');
        const before = await readPaymaster(client, entryPoint, paymaster);
        if (!before.code) throw new CliError(`no code at ${paymaster}: deploy it first (paymaster deploy)`);
        const delay = verb === 'stake' ? seconds(values['unstake-delay'], '--unstake-delay') ?? Math.max(before.unstakeDelaySec, DEFAULT_UNSTAKE_DELAY_SEC) : 0;
        const sent = verb === 'fund' ? await sendDeposit(owner, entryPoint, paymaster, amount) : await sendAddStake(owner, paymaster, delay, amount);
        const r = await confirm(client, sent, verb === 'fund' ? 'funding the deposit' : 'adding stake');
        const status = await readPaymaster(client, entryPoint, paymaster);
        print(`${verb === 'fund' ? `deposited ${formatEther(amount)} ETH` : `staked ${formatEther(amount)} ETH more, unstake delay ${delay} s`} (tx ${r.hash})\n${renderStatus(status)}`, {
          chain: chain.name, tx: r.hash, ...status,
        });
        return EXIT.ok;
      }
      default: {
        const owner = ownerFrom(env, client, rpcUrl);
        const deps = { client, owner, statePath };
        if (phase === 'start') {
          const oldPaymaster = required(addressOf(values.paymaster, '--paymaster'), '--paymaster');
          const signer = addressOf(values.signer, '--signer') ?? signerFromEnv(env);
          const resuming = loadRotation(statePath) !== undefined;
          const { state, steps } = await rotateStart(deps, {
            chain: chain.name,
            entryPoint,
            oldPaymaster,
            newSigner: signer,
            // A resumed start takes its targets from the state file.
            deposit: resuming && values.deposit === undefined ? 0n : ether(required(values.deposit, '--deposit'), '--deposit'),
            ...(values.stake !== undefined && { stake: ether(values.stake, '--stake') }),
            ...(values['unstake-delay'] !== undefined && { unstakeDelaySec: seconds(values['unstake-delay'], '--unstake-delay')! }),
            sponsorshipTtlSeconds: seconds(values['sponsorship-ttl'], '--sponsorship-ttl') ?? shippedTtl(chain.network),
          });
          const next = state.switchedAt === undefined
            ? `next: apply the switch, then \`agent-wallet paymaster rotate switched --chain ${chain.name} --state ${statePath}\` (the overlap of ${state.sponsorshipTtlSeconds} s runs from then)`
            : `next: from ${iso(overlapEnd(state) + 1)}, \`agent-wallet paymaster rotate finish --chain ${chain.name} --state ${statePath}\``;
          print(`${renderSteps(steps)}\nthe configuration switch for chain ${chain.name}:\n${switchText(state)}\n${next}\n`, {
            phase: state.switchedAt === undefined ? 'started' : 'switched', statePath, steps, switch: { paymaster: state.new.address, signer: state.new.signer }, state,
          });
          return EXIT.ok;
        }
        if (phase === 'switched') {
          const { state, steps } = await rotateSwitched(deps, values['switched-at'] !== undefined ? { at: unixSeconds(values['switched-at']) } : {});
          const finishFrom = Math.max(overlapEnd(state) + 1, (await readPaymaster(client, state.entryPoint, state.old.address)).withdrawTime);
          print(`${renderSteps(steps)}next: from ${iso(finishFrom)}, \`agent-wallet paymaster rotate finish --chain ${chain.name} --state ${statePath}\`\n`, {
            phase: 'switched', statePath, steps, finishFrom, state,
          });
          return EXIT.ok;
        }
        const { state, steps } = await rotateFinish(deps, values.to !== undefined ? { to: required(addressOf(values.to, '--to'), '--to') } : {});
        print(`${renderSteps(steps)}\nthe rotation to ${state.new.address} is finished: the old paymaster ${state.old.address} holds nothing\n`, { phase: 'finished', statePath, steps, state });
        return EXIT.ok;
      }
    }
  } catch (e) {
    if (e instanceof RotationError) {
      print(`paymaster rotate: ${e.message}\n`, { error: e.code, message: e.message, ...(e.notBefore !== undefined && { notBefore: e.notBefore, notBeforeIso: iso(e.notBefore) }) });
      return EXIT.refused;
    }
    if (e instanceof TransactionFailed) {
      print(`paymaster: ${e.message}\n`, { error: 'transaction_reverted', message: e.message, tx: e.hash });
      return EXIT.ended;
    }
    if (e instanceof CliError) throw e;
    const name = (e as Error)?.name ?? '';
    if (/HttpRequestError|TimeoutError|WaitForTransactionReceiptTimeoutError/.test(name)) {
      print(`paymaster: the RPC did not answer: ${(e as Error).message.split('\n')[0]}\n`, { error: 'rpc_unavailable', message: (e as Error).message.split('\n')[0] });
      return EXIT.unavailable;
    }
    if (e instanceof BaseError) {
      // A transaction the node would not take (funds, gas, a revert in estimation): nothing of it happened.
      const again = verb === 'rotate' ? `; fix it and run the same command again: it resumes from ${values.state ?? `paymaster-rotation-${chain.name}.json`}` : '';
      print(`paymaster: ${e.shortMessage}${again}\n`, { error: 'transaction_failed', message: e.shortMessage });
      return EXIT.ended;
    }
    throw e;
  }
}

/** --chain: a chain name (or alias) or a shipped network's name; the network gives defaults (its TTL). */
function chainOf(value: string | undefined): { name: ChainName; network?: keyof typeof NETWORKS } {
  if (value === undefined) throw new CliError('paymaster: --chain C is required (ethereum, base, arbitrum, or a network name)');
  if (isNetworkName(value)) return { name: NETWORKS[value], network: value };
  const name = canonicalChain(value);
  if (!name) throw new CliError(`unknown --chain ${value}: one of ethereum, base, arbitrum, ${Object.keys(NETWORKS).join(', ')}`);
  const network = (Object.keys(NETWORKS) as (keyof typeof NETWORKS)[]).find((n) => NETWORKS[n] === name);
  return { name, ...(network && { network }) };
}

function shippedTtl(network: keyof typeof NETWORKS | undefined): number {
  if (network === undefined) return DEFAULT_TTL_SEC;
  const ttl = (readNetworkFile(network).bundler as { sponsorshipTtlSeconds?: unknown } | undefined)?.sponsorshipTtlSeconds;
  return typeof ttl === 'number' ? ttl : DEFAULT_TTL_SEC;
}

function keyFrom(env: NodeJS.ProcessEnv, variable: string): Hex | undefined {
  const key = env[variable]?.trim();
  if (!key) return undefined;
  // Never echo a malformed key: name its variable.
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new CliError(`${variable} must hold a 0x-prefixed 32-byte private key`);
  return key as Hex;
}

function ownerFrom(env: NodeJS.ProcessEnv, client: PublicClient, rpcUrl: string): Owner {
  const key = keyFrom(env, OWNER_KEY_ENV);
  if (!key) throw new CliError(`${OWNER_KEY_ENV}: the paymaster owner's key (it sends the transactions) is not set`);
  return createWalletClient({ account: privateKeyToAccount(key), transport: http(rpcUrl), pollingInterval: client.pollingInterval });
}

function signerFromEnv(env: NodeJS.ProcessEnv): Address {
  const key = keyFrom(env, SIGNER_KEY_ENV);
  if (!key) throw new CliError(`the signer: --signer ADDRESS, or its key in ${SIGNER_KEY_ENV}`);
  return privateKeyToAddress(key);
}

function addressOf(value: string | undefined, flag: string): Address | undefined {
  if (value === undefined) return undefined;
  if (!isAddress(value, { strict: false })) throw new CliError(`${flag} ${value}: not an address`);
  return value as Address;
}

function required<T>(value: T | undefined, flag: string): T {
  if (value === undefined) throw new CliError(`${flag} is required`);
  return value;
}

function ether(value: string, flag: string): bigint {
  if (!/^\d+(\.\d{1,18})?$/.test(value)) throw new CliError(`${flag} ${value}: an amount of ETH, e.g. 0.5`);
  return parseEther(value);
}

function seconds(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 2 ** 32 - 1) throw new CliError(`${flag} ${value}: whole seconds`);
  return n;
}

function unixSeconds(value: string): number {
  if (/^\d+$/.test(value)) return Number(value);
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new CliError(`--switched-at ${value}: an ISO time or Unix seconds`);
  return Math.floor(ms / 1000);
}

const jsonBigints = (_: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);

function renderStatus(s: PaymasterStatus, rotation?: RotationState): string {
  const stake = s.stake === 0n ? 'none' : `${formatEther(s.stake)} ETH, unstake delay ${s.unstakeDelaySec} s, ${s.withdrawTime === 0 ? 'locked' : `unlocked: withdrawable from ${iso(s.withdrawTime)}`}`;
  return fields([
    ['paymaster', s.address],
    ['code', s.code ? 'yes' : 'none: not deployed'],
    ['owner', s.owner],
    ['verifyingSigner', s.verifyingSigner],
    ['entryPoint', s.entryPoint],
    ['deposit', `${formatEther(s.deposit)} ETH`],
    ['stake', stake],
    ...(rotation ? ([['rotation', describeRotation(rotation)]] as const) : []),
  ]);
}

function rotationSummary(r: RotationState) {
  return {
    old: r.old.address,
    new: r.new.address ?? null,
    switchedAt: r.switchedAt ?? null,
    overlapEnd: r.switchedAt === undefined ? null : overlapEnd(r),
    finishedAt: r.finishedAt ?? null,
    phase: r.finishedAt !== undefined ? 'finished' : r.switchedAt !== undefined ? 'switched' : r.startedAt !== undefined ? 'started' : 'starting',
  };
}

function describeRotation(r: RotationState): string {
  if (r.finishedAt !== undefined) return `${r.old.address} → ${r.new.address}, finished ${iso(r.finishedAt)}`;
  if (r.startedAt === undefined) return `${r.old.address} → ${r.new.address ?? '(not deployed)'}: start did not complete; run it again`;
  if (r.switchedAt === undefined) return `${r.old.address} → ${r.new.address}: started; switch the configuration, then \`rotate switched\``;
  return `${r.old.address} → ${r.new.address}: switched ${iso(r.switchedAt)}; finish from ${iso(overlapEnd(r) + 1)}`;
}

function renderSteps(steps: readonly StepReport[]): string {
  return steps.map((s) => `${s.result === 'did' ? 'done   ' : s.result === 'already' ? 'already' : 'waiting'}  ${s.step.padEnd(15)} ${s.detail}${s.tx ? ` (tx ${s.tx})` : ''}`).join('\n') + '\n';
}

function switchText(s: RotationState): string {
  return [
    `  cluster config / chart values: chains[${s.chain}].paymaster: "${s.new.address}"`,
    `  serve/doctor: --paymaster ${s.chain}=${s.new.address}`,
    `  AGENT_WALLET_PAYMASTER_SIGNER_KEY (the chain worker's Secret): the key of ${s.new.signer}`,
  ].join('\n');
}

