/**
 * Rotating the built-in sponsor's paymaster. The v0.7 VerifyingPaymaster's verifyingSigner is immutable, so a new
 * signer means a new paymaster; operations the service signed for the old one stay valid (and includable) until
 * their validUntil, at most the sponsorship TTL after the service stopped signing for it. So, in three phases:
 *
 *   start     deploy the new paymaster for the new signer, fund and stake it, unlock the old one's stake (its
 *             unstake delay runs meanwhile); the old one keeps its whole deposit. Then the operator switches the
 *             configuration (paymaster and signer key together)
 *   switched  the operator says the service now signs for the new one: the overlap runs from then
 *   finish    refused until the overlap (switched + TTL) and the old stake's unstake delay have passed; then
 *             withdrawStake, and withdrawTo the old deposit to the new paymaster's deposit or to an address
 *
 * The overlap counts from the operator's word, not from start: a configuration applied minutes after start
 * printed it must not shorten it.
 *
 * Every step looks at the chain first and is skipped when done; each transaction's hash is written to the state
 * file before it is waited for, so a run killed anywhere resumes without sending it twice.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isAddressEqual, type Address, type Hash, type PublicClient } from 'viem';
import { z } from 'zod';
import {
  confirm,
  readPaymaster,
  sendAddStake,
  sendDeploy,
  sendDeposit,
  sendUnlockStake,
  sendWithdrawDeposit,
  sendWithdrawStake,
  type Owner,
  type Sent,
} from './operations.ts';

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/).transform((a) => a as Address);
const wei = z.string().regex(/^\d+$/);

export const RotationStateSchema = z.object({
  version: z.literal(1),
  chain: z.string(),
  chainId: z.number().int(),
  entryPoint: address,
  owner: address,
  old: z.object({ address, signer: address }),
  new: z.object({ signer: address, address: address.optional() }),
  /** What the new paymaster gets: its deposit (wei), its stake (wei) and unstake delay. */
  deposit: wei,
  stake: wei,
  unstakeDelaySec: z.number().int().nonnegative(),
  sponsorshipTtlSeconds: z.number().int().positive(),
  /** Unix seconds: start completed (every step done). */
  startedAt: z.number().int().optional(),
  /** Unix seconds: the service signs for the new one from then. Operations signed for the old one expire by switchedAt + TTL. */
  switchedAt: z.number().int().optional(),
  /** finish: where the old deposit goes (the new paymaster's deposit when it is the new paymaster) and how much. */
  moving: z.object({ to: address, amount: wei }).optional(),
  /** Each transaction's hash by step, written before waiting for it. */
  txs: z.record(z.string(), z.string()),
  finishedAt: z.number().int().optional(),
});
export type RotationState = z.infer<typeof RotationStateSchema>;

export function loadRotation(path: string): RotationState | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  const parsed = RotationStateSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new RotationError('bad_state', `${path}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

export function saveRotation(path: string, state: RotationState): void {
  writeFileSync(`${path}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(`${path}.tmp`, path);
}

export type RotationErrorCode = 'bad_state' | 'mismatch' | 'not_yet' | 'not_started';
export class RotationError extends Error {
  override readonly name = 'RotationError';
  constructor(
    readonly code: RotationErrorCode,
    message: string,
    /** not_yet: the Unix second from which the step may run. */
    readonly notBefore?: number,
  ) {
    super(message);
  }
}

/** What a step did: `did` (sent, with the transaction), `already` (the chain says it is done), or `wait`. */
export interface StepReport {
  step: string;
  result: 'did' | 'already' | 'wait';
  detail: string;
  tx?: Hash;
}

export interface RotationDeps {
  client: PublicClient;
  owner: Owner;
  statePath: string;
  /** Unix seconds now (the wall clock: validUntil is compared with the block time, which follows it). */
  now?: () => number;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Sends once per step: a hash already recorded is waited for (and sent again only if it reverted). */
async function once(deps: RotationDeps, state: RotationState, step: string, what: string, send: () => Promise<Sent>) {
  const recorded = state.txs[step] as Hash | undefined;
  if (recorded !== undefined) {
    const receipt = await deps.client.getTransactionReceipt({ hash: recorded }).catch(() => undefined);
    if (receipt?.status === 'success') return { hash: recorded, ...(receipt.contractAddress && { contractAddress: receipt.contractAddress }) };
    if (receipt === undefined) {
      const pending = await deps.client.getTransaction({ hash: recorded }).catch(() => undefined);
      if (pending) return confirm(deps.client, { hash: recorded }, what);
    }
  }
  const sent = await send();
  state.txs[step] = sent.hash;
  saveRotation(deps.statePath, state);
  return confirm(deps.client, sent, what);
}

export interface StartParams {
  chain: string;
  entryPoint: Address;
  oldPaymaster: Address;
  newSigner: Address;
  deposit: bigint;
  /** Defaults: the old one's stake and unstake delay. */
  stake?: bigint;
  unstakeDelaySec?: number;
  sponsorshipTtlSeconds: number;
}

/** Phase one. Resumable: run again with the same state file, it goes on where it stopped. */
export async function rotateStart(deps: RotationDeps, params: StartParams): Promise<{ state: RotationState; steps: StepReport[] }> {
  const { client, owner } = deps;
  const now = deps.now ?? nowSeconds;
  const ownerAddress = owner.account.address;
  let state = loadRotation(deps.statePath);
  const old = await readPaymaster(client, params.entryPoint, params.oldPaymaster);
  if (!old.code || !old.verifyingSigner) throw new RotationError('mismatch', `${params.oldPaymaster} is not a VerifyingPaymaster (no code or no verifyingSigner())`);
  if (!old.owner || !isAddressEqual(old.owner, ownerAddress)) throw new RotationError('mismatch', `the old paymaster's owner is ${old.owner}, not the owner key's ${ownerAddress}`);
  if (state === undefined) {
    if (isAddressEqual(old.verifyingSigner, params.newSigner)) throw new RotationError('mismatch', `the new signer ${params.newSigner} already signs for ${params.oldPaymaster}: nothing to rotate`);
    state = {
      version: 1,
      chain: params.chain,
      chainId: await client.getChainId(),
      entryPoint: params.entryPoint,
      owner: ownerAddress,
      old: { address: params.oldPaymaster, signer: old.verifyingSigner },
      new: { signer: params.newSigner },
      deposit: params.deposit.toString(),
      stake: (params.stake ?? old.stake).toString(),
      unstakeDelaySec: params.unstakeDelaySec ?? old.unstakeDelaySec,
      sponsorshipTtlSeconds: params.sponsorshipTtlSeconds,
      txs: {},
    };
    saveRotation(deps.statePath, state);
  } else {
    const chainId = await client.getChainId();
    if (state.chainId !== chainId) throw new RotationError('mismatch', `${deps.statePath} is a rotation on chain id ${state.chainId}, the RPC's is ${chainId}`);
    if (!isAddressEqual(state.old.address, params.oldPaymaster) || !isAddressEqual(state.new.signer, params.newSigner)) {
      throw new RotationError('mismatch', `${deps.statePath} is the rotation of ${state.old.address} to signer ${state.new.signer}; finish it or use another --state`);
    }
    if (state.finishedAt !== undefined) throw new RotationError('mismatch', `${deps.statePath}: this rotation finished at ${iso(state.finishedAt)}`);
  }
  const steps: StepReport[] = [];

  // 1. The new paymaster, for the new signer, owned by the owner key.
  if (state.new.address === undefined) {
    const r = await once(deps, state, 'deploy', 'deploying the new VerifyingPaymaster', () => sendDeploy(owner, state.entryPoint, state.new.signer));
    if (!r.contractAddress) throw new RotationError('mismatch', `the deploy transaction ${r.hash} created no contract`);
    state.new.address = r.contractAddress;
    saveRotation(deps.statePath, state);
    steps.push({ step: 'deploy', result: 'did', detail: `deployed ${r.contractAddress} (verifyingSigner ${state.new.signer})`, tx: r.hash });
  } else steps.push({ step: 'deploy', result: 'already', detail: `deployed at ${state.new.address}` });
  const newAddress = state.new.address;
  const fresh = await readPaymaster(client, state.entryPoint, newAddress);
  if (!fresh.verifyingSigner || !isAddressEqual(fresh.verifyingSigner, state.new.signer)) throw new RotationError('mismatch', `${newAddress}'s verifyingSigner is ${fresh.verifyingSigner}, not ${state.new.signer}`);

  // 2. Its deposit: topped up to the target (operations it sponsors meanwhile do not make this send again).
  steps.push(await fundStep(deps, state, 'fund', fresh.deposit));
  // 3. Its stake.
  steps.push(await stakeStep(deps, state, fresh));

  // 4. The old stake starts its unstake delay (it keeps its deposit: the overlap's operations draw on it).
  const oldNow = await readPaymaster(client, state.entryPoint, state.old.address);
  if (oldNow.stake > 0n && oldNow.withdrawTime === 0) {
    const r = await once(deps, state, 'unlock', 'unlocking the old stake', () => sendUnlockStake(owner, state.old.address));
    const after = await readPaymaster(client, state.entryPoint, state.old.address);
    steps.push({ step: 'unlock', result: 'did', detail: `the old stake (${after.stake} wei) is withdrawable from ${iso(after.withdrawTime)}`, tx: r.hash });
  } else {
    steps.push({ step: 'unlock', result: 'already', detail: oldNow.stake > 0n ? `the old stake is withdrawable from ${iso(oldNow.withdrawTime)}` : 'the old paymaster has no stake' });
  }
  // 5. The switch is the operator's: this says what to change, and `switched` records when it was done.
  state.startedAt ??= now();
  saveRotation(deps.statePath, state);
  steps.push(
    state.switchedAt === undefined
      ? { step: 'switch', result: 'wait', detail: `switch the configuration now: paymaster ${newAddress} with the signer key of ${state.new.signer}; then \`rotate switched\`` }
      : { step: 'switch', result: 'already', detail: `switched at ${iso(state.switchedAt)}; the overlap ends at ${iso(overlapEnd(state))}` },
  );
  return { state, steps };
}

/**
 * Phase two: the service signs for the new paymaster from `at` (default now; an earlier time when the switch was
 * applied before this ran). Recorded once; asked again, it answers what it recorded.
 */
export async function rotateSwitched(deps: RotationDeps, params: { at?: number } = {}): Promise<{ state: RotationState; steps: StepReport[] }> {
  const now = (deps.now ?? nowSeconds)();
  const state = await startedRotation(deps);
  if (state.startedAt === undefined) throw new RotationError('not_started', `\`rotate start\` has not completed for ${deps.statePath}: run it again first`);
  if (state.switchedAt !== undefined) {
    return { state, steps: [{ step: 'switched', result: 'already', detail: `switched at ${iso(state.switchedAt)}; the overlap ends at ${iso(overlapEnd(state))}` }] };
  }
  const at = params.at ?? now;
  if (at > now) throw new RotationError('mismatch', `--switched-at ${iso(at)} is in the future`);
  state.switchedAt = at;
  saveRotation(deps.statePath, state);
  return { state, steps: [{ step: 'switched', result: 'did', detail: `switched at ${iso(at)}: operations signed for the old paymaster may be valid until ${iso(overlapEnd(state))}` }] };
}

/** The state of a rotation on this chain for this owner, or why not. */
async function startedRotation(deps: RotationDeps): Promise<RotationState> {
  const state = loadRotation(deps.statePath);
  if (state === undefined || state.new.address === undefined) {
    throw new RotationError('not_started', `no started rotation in ${deps.statePath}: run \`paymaster rotate start\` first`);
  }
  const chainId = await deps.client.getChainId();
  if (state.chainId !== chainId) throw new RotationError('mismatch', `${deps.statePath} is a rotation on chain id ${state.chainId}, the RPC's is ${chainId}`);
  if (!isAddressEqual(state.owner, deps.owner.account.address)) throw new RotationError('mismatch', `the rotation's owner is ${state.owner}, not the owner key's ${deps.owner.account.address}`);
  return state;
}

async function fundStep(deps: RotationDeps, state: RotationState, step: string, deposit: bigint): Promise<StepReport> {
  const target = BigInt(state.deposit);
  if (state.txs[step] === undefined && deposit >= target) return { step, result: 'already', detail: `deposit ${deposit} wei (target ${target})` };
  const recorded = state.txs[step] !== undefined;
  const r = await once(deps, state, step, 'funding the new paymaster', () => sendDeposit(deps.owner, state.entryPoint, state.new.address!, target - deposit));
  return { step, result: recorded ? 'already' : 'did', detail: `deposit topped up to ${target} wei`, tx: r.hash };
}

async function stakeStep(deps: RotationDeps, state: RotationState, fresh: { stake: bigint; staked: boolean; unstakeDelaySec: number }): Promise<StepReport> {
  const target = BigInt(state.stake);
  if (target === 0n) return { step: 'stake', result: 'already', detail: 'no stake asked' };
  if (fresh.staked && fresh.stake >= target && fresh.unstakeDelaySec >= state.unstakeDelaySec) {
    return { step: 'stake', result: 'already', detail: `staked ${fresh.stake} wei, unstake delay ${fresh.unstakeDelaySec} s` };
  }
  // addStake also raises the delay: with the stake already there, it adds nothing to it.
  const more = target > fresh.stake ? target - fresh.stake : 0n;
  const r = await once(deps, state, 'stake', 'staking the new paymaster', () => sendAddStake(deps.owner, state.new.address!, state.unstakeDelaySec, more));
  return { step: 'stake', result: 'did', detail: `staked ${target} wei, unstake delay ${state.unstakeDelaySec} s`, tx: r.hash };
}

/** The last second an operation signed for the old paymaster can be valid: the switch plus the sponsorship TTL. */
export const overlapEnd = (state: RotationState): number => state.switchedAt! + state.sponsorshipTtlSeconds;

export interface FinishParams {
  /** Where the old deposit goes; default the new paymaster's deposit. */
  to?: Address;
}

/** Phase three: refused (not_yet) before the overlap and the unstake delay have passed. Resumable. */
export async function rotateFinish(deps: RotationDeps, params: FinishParams = {}): Promise<{ state: RotationState; steps: StepReport[] }> {
  const { client, owner } = deps;
  const now = (deps.now ?? nowSeconds)();
  const state = await startedRotation(deps);
  if (state.switchedAt === undefined) {
    throw new RotationError('not_started', `the switch is not recorded: once the service signs for ${state.new.address}, run \`paymaster rotate switched\``);
  }
  const steps: StepReport[] = [];
  if (state.finishedAt !== undefined) return { state, steps: [{ step: 'finish', result: 'already', detail: `finished at ${iso(state.finishedAt)}` }] };
  // validUntil is inclusive (the EntryPoint refuses only block.timestamp > validUntil): wait a second past it.
  const overlapOver = overlapEnd(state) + 1;
  if (now < overlapOver) {
    throw new RotationError('not_yet', `operations signed for the old paymaster may be valid until ${iso(overlapEnd(state))}: finish from ${iso(overlapOver)}`, overlapOver);
  }
  const old = await readPaymaster(client, state.entryPoint, state.old.address);
  if (old.stake > 0n) {
    if (old.withdrawTime === 0) {
      throw new RotationError('mismatch', `the old stake is still locked: run \`paymaster rotate start\` again to unlock it`);
    }
    // The EntryPoint compares withdrawTime with the next block's timestamp, which is at least the wall clock.
    if (now < old.withdrawTime) throw new RotationError('not_yet', `the old stake is withdrawable from ${iso(old.withdrawTime)}`, old.withdrawTime);
    const r = await once(deps, state, 'withdrawStake', 'withdrawing the old stake', () => sendWithdrawStake(owner, state.old.address, owner.account.address));
    steps.push({ step: 'withdrawStake', result: 'did', detail: `${old.stake} wei of stake to the owner ${owner.account.address}`, tx: r.hash });
  } else steps.push({ step: 'withdrawStake', result: 'already', detail: 'no stake left on the old paymaster' });

  // The deposit: to an address in one withdrawTo; to the new paymaster by way of the owner (a paymaster has no
  // receive(), and withdrawTo sends plain value), then EntryPoint.depositTo(new).
  const newAddress = state.new.address!;
  const intoNew = params.to === undefined || isAddressEqual(params.to, newAddress);
  const moving = (state.moving ??= { to: intoNew ? newAddress : params.to!, amount: old.deposit.toString() });
  saveRotation(deps.statePath, state);
  const amount = BigInt(moving.amount);
  const viaOwner = isAddressEqual(moving.to, newAddress);
  const via = viaOwner ? owner.account.address : moving.to;
  if (amount === 0n) steps.push({ step: 'withdrawDeposit', result: 'already', detail: 'the old paymaster had no deposit' });
  else {
    const done = state.txs.withdrawDeposit !== undefined;
    const r = await once(deps, state, 'withdrawDeposit', 'withdrawing the old deposit', () => sendWithdrawDeposit(owner, state.old.address, via, amount));
    steps.push({ step: 'withdrawDeposit', result: done ? 'already' : 'did', detail: `${amount} wei of deposit to ${via}`, tx: r.hash });
    if (viaOwner) {
      const deposited = state.txs.depositNew !== undefined;
      const d = await once(deps, state, 'depositNew', 'depositing for the new paymaster', () => sendDeposit(owner, state.entryPoint, state.new.address!, amount));
      steps.push({ step: 'depositNew', result: deposited ? 'already' : 'did', detail: `${amount} wei into ${state.new.address}'s deposit`, tx: d.hash });
    }
  }
  state.finishedAt = now;
  saveRotation(deps.statePath, state);
  return { state, steps };
}

export const iso = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString();
