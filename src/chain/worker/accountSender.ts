import {
  encodeFunctionData,
  erc20Abi,
  getAddress,
  isAddress,
  isAddressEqual,
  isHex,
  keccak256,
  parseAbi,
  parseSignature,
  parseUnits,
  zeroAddress,
  size,
  type Address,
  type Hex,
  type PrivateKeyAccount,
} from 'viem';
import type { ChainConfig } from '../../config/chainConfig.ts';
import { silentLogger, type Logger } from '../../lib/logger.ts';
import { err, ok, type Result } from '../../lib/result.ts';
import type { LockManager } from '../../locks/types.ts';
import type { ChainClient } from '../client.ts';
import type { FeeSnapshot } from '../fees.ts';
import { decodeRevert, describeError, extractRevertData, isExecutionRevert } from '../revert.ts';
import type { SendFailure, SendFailureCode, SendingAccounts, SendPurpose, SendPurposeKind, SignedSend } from '../types.ts';

const eip3009Abi = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
]);

export interface AccountSenderDeps {
  config: Pick<ChainConfig, 'name' | 'chainId' | 'treasury' | 'tokens' | 'faucetCap'>;
  client: ChainClient;
  locks: LockManager;
  fees: () => Promise<FeeSnapshot>;
  /** The sending account of each purpose; a purpose without one is refused with `no_account`. */
  accounts: Partial<Record<SendPurposeKind, PrivateKeyAccount>>;
  /**
   * The service's other accounts on this chain (executors, paymaster signer, beneficiary): never a faucet
   * transfer's recipient, like the treasury and the sending accounts themselves.
   */
  serviceAccounts?: readonly Address[];
  /** How long a signed transaction may wait for its send (default 60 s). */
  sendWindowMs?: number;
  log?: Logger;
}

/** What a purpose asks for, as the worker builds it, and what it spends (bySpend's key). */
interface Built {
  to: Address;
  data: Hex;
  value: bigint;
  spend: string;
  token?: Address;
  from?: Address;
  authorizationNonce?: Hex;
}

/** One signed transaction as the sender holds it: the bytes are never given out, only sent from here. */
interface Held {
  signed: SignedSend;
  serialized: Hex;
  /** signed: not broadcast; sent: broadcast (or known to the node); dropped: never to be sent. */
  state: 'signed' | 'sent' | 'dropped';
  /** A broadcast was tried, even if it failed: the node may hold it, so its nonce is never handed out again. */
  broadcastTried: boolean;
  timer?: NodeJS.Timeout;
}

interface AccountState {
  account: PrivateKeyAccount;
  /** The nonce after the highest this process signed; undefined until the first sign reads the chain. */
  next: number | undefined;
}

const failure = (code: SendFailureCode, message: string): Result<never, SendFailure> => err({ code, message });

/**
 * Owns the nonces of the service's sending accounts on one chain (the x402 settler, the faucet), so no other module sends
 * from them: every transaction is signed and broadcast here, serialized per account by the worker's LockManager
 * (Redis in a cluster, in-process in the embedded layout).
 *
 * A transaction that is signed and never sent must not leave a nonce gap, or every later one of the account
 * would wait behind it. Its send window closes after `sendWindowMs`, then:
 * - never broadcast and still the account's last nonce: the nonce is simply given back (nothing can carry it);
 * - otherwise the nonce is filled with a 0-value transfer to the account itself, which costs 21 000 gas but is
 *   safe whatever came after it. A node that refuses the filler as a replacement still holds the original,
 *   which is then counted as sent.
 * Sending the original itself after its window is not an option: the caller may have given up on it (its claim
 * was refused), and an x402 settlement nobody claimed must never be sent.
 */
export function createAccountSender(deps: AccountSenderDeps): SendingAccounts & { close(): void } {
  const log = deps.log ?? silentLogger;
  const windowMs = deps.sendWindowMs ?? 60_000;
  const { config, client, locks } = deps;
  const states = new Map<SendPurposeKind, AccountState>();
  for (const [purpose, account] of Object.entries(deps.accounts) as [SendPurposeKind, PrivateKeyAccount | undefined][]) {
    if (account) states.set(purpose, { account, next: undefined });
  }
  const byHash = new Map<Hex, Held>();
  /** What a purpose spends → the transaction signed for it, so a retried sign answers the same one. */
  const bySpend = new Map<string, Held>();
  // The lock of an account is per chain: the same key may send on several chains, each with its own nonces.
  const lockKey = (a: Address) => `account-nonce:${config.chainId}:${a.toLowerCase()}`;
  const LOCK_TTL_MS = 30_000;

  const withAccount = <T>(s: AccountState, fn: () => Promise<T>) => locks.withLock(lockKey(s.account.address), LOCK_TTL_MS, fn);

  const uint = /^(0|[1-9][0-9]{0,77})$/;
  /** The faucet's cap per asset in the smallest unit: 'native' or a token address (lowercase) → the most one drip moves. */
  const faucetCaps = new Map<string, bigint>();
  if (config.faucetCap.native !== undefined) faucetCaps.set('native', parseUnits(config.faucetCap.native, 18));
  for (const t of config.tokens) {
    const cap = config.faucetCap.tokens[t.symbol];
    if (cap !== undefined) faucetCaps.set(t.address.toLowerCase(), parseUnits(cap, t.decimals));
  }
  /** Never a faucet transfer's recipient: a drip to the treasury could pass for a payment, the rest are the operator's to fund. */
  const notRecipients = [config.treasury, zeroAddress, ...(deps.serviceAccounts ?? []), ...Object.values(deps.accounts).flatMap((a) => (a ? [a.address] : []))];

  /** The calldata and identity of a purpose, or why it is refused: the rules of each purpose live here. */
  function build(p: SendPurpose): Result<Built, SendFailure> {
    if (p.kind === 'faucetTransfer') return buildFaucetTransfer(p);
    if (p.kind !== 'x402Settlement') return failure('purpose_refused', `unknown purpose ${(p as { kind: string }).kind}`);
    const a = p.authorization;
    const token = config.tokens.find((t) => isAddressEqual(t.address, p.token));
    if (!token || !token.eip3009 || !token.acceptedForPayment) {
      return failure('purpose_refused', `${p.token} is not an EIP-3009 token accepted for payment on ${config.name}`);
    }
    if (!isAddressEqual(a.to, config.treasury)) return failure('purpose_refused', `an x402 settlement pays the treasury ${config.treasury}, not ${a.to}`);
    if (![a.value, a.validAfter, a.validBefore].every((v) => uint.test(v)) || BigInt(a.value) === 0n) {
      return failure('purpose_refused', 'value, validAfter and validBefore must be decimal integers, the value above 0');
    }
    if (!isHex(a.nonce) || size(a.nonce) !== 32) return failure('purpose_refused', 'the authorization nonce must be 32 bytes');
    if (!isHex(p.signature) || size(p.signature) < 65) return failure('purpose_refused', 'the signature must be at least 65 bytes');
    const fields = [getAddress(a.from), getAddress(a.to), BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce] as const;
    let data: Hex;
    if (size(p.signature) === 65) {
      const s = parseSignature(p.signature);
      data = encodeFunctionData({ abi: eip3009Abi, functionName: 'transferWithAuthorization', args: [...fields, Number(s.v ?? BigInt(s.yParity + 27)), s.r, s.s] });
    } else {
      data = encodeFunctionData({ abi: eip3009Abi, functionName: 'transferWithAuthorization', args: [...fields, p.signature] });
    }
    const from = getAddress(a.from);
    const authorizationNonce = a.nonce.toLowerCase() as Hex;
    return ok({
      to: token.address,
      data,
      value: 0n,
      spend: `x402:${token.address.toLowerCase()}:${from.toLowerCase()}:${authorizationNonce}`,
      token: token.address,
      from,
      authorizationNonce,
    });
  }

  /** A drip: the native coin or a configured token, within the chain's faucet cap, to anyone but the service itself. */
  function buildFaucetTransfer(p: Extract<SendPurpose, { kind: 'faucetTransfer' }>): Result<Built, SendFailure> {
    if (typeof p.id !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(p.id)) return failure('purpose_refused', 'a faucet transfer needs an id of 1-64 of [A-Za-z0-9_-]');
    if (typeof p.to !== 'string' || !isAddress(p.to, { strict: false })) return failure('purpose_refused', 'a faucet transfer needs a recipient address');
    if (notRecipients.some((x) => isAddressEqual(x, p.to))) {
      return failure('purpose_refused', `${p.to} is the service's own account on ${config.name}: the faucet never sends to it`);
    }
    if (typeof p.amount !== 'string' || !uint.test(p.amount) || BigInt(p.amount) === 0n) return failure('purpose_refused', 'the amount must be a decimal integer above 0');
    const amount = BigInt(p.amount);
    const token = p.asset === 'native' ? undefined : config.tokens.find((t) => isAddress(p.asset, { strict: false }) && isAddressEqual(t.address, p.asset as Address));
    if (p.asset !== 'native' && !token) return failure('purpose_refused', `${p.asset} is not a token configured on ${config.name}`);
    const cap = faucetCaps.get(token ? token.address.toLowerCase() : 'native');
    const what = token ? token.symbol : 'native coin';
    if (cap === undefined) return failure('purpose_refused', `the faucet sends no ${what} on ${config.name} (no faucetCap for it)`);
    if (amount > cap) return failure('purpose_refused', `${amount} is above the faucet's cap of ${cap} ${what} per transfer on ${config.name}`);
    const to = getAddress(p.to);
    const spend = `faucet:${p.id}`;
    if (!token) return ok({ to, data: '0x', value: amount, spend });
    const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] });
    return ok({ to: token.address, data, value: 0n, spend, token: token.address });
  }

  /** Forgets what was sent or dropped a window ago: a retry of its sign comes within the window, or not at all. */
  function prune(): void {
    const before = Date.now() - windowMs;
    for (const [hash, held] of byHash) {
      if (held.state === 'signed' || held.signed.sendBy > before) continue;
      byHash.delete(hash);
      for (const [spend, h] of bySpend) if (h === held) bySpend.delete(spend);
    }
  }

  async function nextNonce(s: AccountState): Promise<number> {
    const pending = await client.getTransactionCount({ address: s.account.address, blockTag: 'pending' });
    return Math.max(pending, s.next ?? 0);
  }

  /** Closes a transaction's send window (under its account's lock): see the comment of createAccountSender. */
  async function expire(s: AccountState, held: Held): Promise<void> {
    if (held.state !== 'signed') return;
    const { nonce, hash } = held.signed;
    if (!held.broadcastTried && s.next === nonce + 1) {
      held.state = 'dropped';
      s.next = nonce;
      log.info({ hash, nonce }, 'a signed transaction was not sent in its window: its nonce is given back');
      return;
    }
    const fees = await deps.fees();
    const filler = await s.account.signTransaction({
      chainId: config.chainId,
      type: 'eip1559',
      nonce,
      to: s.account.address,
      value: 0n,
      gas: 21_000n,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    try {
      await client.sendRawTransaction({ serializedTransaction: filler });
      held.state = 'dropped';
      log.info({ hash, nonce, filler: keccak256(filler) }, 'a signed transaction was not sent in its window: its nonce is filled with a 0-value transfer');
    } catch (e) {
      // The original is in the node's pool (a broadcast whose answer was lost) or already mined: it was sent.
      if (held.broadcastTried && (await client.getTransaction({ hash }).then(() => true, () => false))) held.state = 'sent';
      else throw e;
    }
  }

  function scheduleExpiry(s: AccountState, held: Held): void {
    const run = () => {
      withAccount(s, () => expire(s, held)).catch((e: unknown) => {
        // Try again: the nonce must not stay a gap.
        log.warn({ hash: held.signed.hash, err: describeError(e) }, 'could not close the send window of a signed transaction; retrying');
        held.timer = setTimeout(run, 1_000).unref();
      });
    };
    held.timer = setTimeout(run, Math.max(0, held.signed.sendBy - Date.now())).unref();
  }

  return {
    async sendingAccount(purpose) {
      return states.get(purpose)?.account.address;
    },

    async signSend(purpose) {
      const built = build(purpose);
      if (!built.ok) return built;
      const s = states.get(purpose.kind);
      if (!s) return failure('no_account', `${config.name} has no sending account for ${purpose.kind}`);
      const b = built.value;
      try {
        return await withAccount(s, async (): Promise<Result<SignedSend, SendFailure>> => {
          prune();
          const known = bySpend.get(b.spend);
          // A retry of a sign whose transaction is not sent yet (a caller that died between its claim and the send).
          // Once sent, signing again builds anew: the token refuses an authorization spent, and says so.
          if (known && known.state === 'signed') return ok(known.signed);
          let gas: bigint;
          try {
            gas = await client.estimateGas({ account: s.account.address, to: b.to, data: b.data, value: b.value });
          } catch (e) {
            return failure('simulation_reverted', `the ${purpose.kind} would revert: ${describeError(e)}`);
          }
          // Room for a state change between the estimate and the inclusion (a first write of a storage slot).
          gas = (gas * 6n) / 5n;
          const [nonce, fees, balance] = await Promise.all([nextNonce(s), deps.fees(), client.getBalance({ address: s.account.address })]);
          // Refused here rather than by the node at the send: the caller has claimed nothing yet.
          const needed = gas * fees.maxFeePerGas + b.value;
          if (balance < needed) {
            log.error({ account: s.account.address, purpose: purpose.kind, balance: String(balance), needed: String(needed) }, 'a sending account is out of native coin');
            return failure('insufficient_funds', `${s.account.address} holds ${balance} wei on ${config.name}, less than the ${needed} the ${purpose.kind} needs`);
          }
          const serialized = await s.account.signTransaction({
            chainId: config.chainId,
            type: 'eip1559',
            nonce,
            to: b.to,
            data: b.data,
            value: b.value,
            gas,
            maxFeePerGas: fees.maxFeePerGas,
            maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
          });
          s.next = nonce + 1;
          const signed: SignedSend = {
            hash: keccak256(serialized),
            account: s.account.address,
            nonce,
            purpose: purpose.kind,
            ...(b.token && { token: b.token }),
            ...(b.from && { from: b.from }),
            ...(b.authorizationNonce && { authorizationNonce: b.authorizationNonce }),
            sendBy: Date.now() + windowMs,
          };
          const held: Held = { signed, serialized, state: 'signed', broadcastTried: false };
          byHash.set(signed.hash, held);
          bySpend.set(b.spend, held);
          scheduleExpiry(s, held);
          return ok(signed);
        });
      } catch (e) {
        return failure('rpc_unavailable', `${config.name}: ${describeError(e)}`);
      }
    },

    async simulateSend(purpose) {
      const built = build(purpose);
      if (!built.ok) return built;
      const b = built.value;
      const from = states.get(purpose.kind)?.account.address;
      try {
        await client.call({ ...(from && { account: from }), to: b.to, data: b.data, value: b.value });
        return ok(undefined);
      } catch (e) {
        if (isExecutionRevert(e)) {
          const data = extractRevertData(e);
          return failure('simulation_reverted', `the ${purpose.kind} would revert: ${data ? decodeRevert(data).reason : describeError(e)}`);
        }
        return failure('rpc_unavailable', `${config.name}: ${describeError(e)}`);
      }
    },

    async send(hash) {
      const held = byHash.get(hash.toLowerCase() as Hex);
      if (!held) return failure('unknown_transaction', `${hash} was not signed by this worker`);
      const s = states.get(held.signed.purpose)!;
      try {
        // Under the account's lock: the send and the closing of its window never race.
        return await withAccount(s, async (): Promise<Result<void, SendFailure>> => {
          if (held.state === 'sent') return ok(undefined);
          if (held.state === 'dropped' || Date.now() > held.signed.sendBy) {
            return failure('expired', `${hash} was not sent in its window: sign again`);
          }
          held.broadcastTried = true;
          try {
            await client.sendRawTransaction({ serializedTransaction: held.serialized });
          } catch (e) {
            // A retried send after an answer that was lost: the node already has it.
            const known = await client.getTransaction({ hash: held.signed.hash }).then(() => true, () => false);
            if (!known) return failure('send_failed', `${config.name} refused ${hash}: ${describeError(e)}`);
          }
          held.state = 'sent';
          clearTimeout(held.timer);
          return ok(undefined);
        });
      } catch (e) {
        return failure('rpc_unavailable', `${config.name}: ${describeError(e)}`);
      }
    },

    async abandon(hash) {
      const held = byHash.get(hash.toLowerCase() as Hex);
      if (!held) return failure('unknown_transaction', `${hash} was not signed by this worker`);
      const s = states.get(held.signed.purpose)!;
      try {
        await withAccount(s, () => expire(s, held));
        clearTimeout(held.timer);
        return ok(undefined);
      } catch (e) {
        return failure('rpc_unavailable', `${config.name}: ${describeError(e)}`);
      }
    },

    close() {
      for (const held of byHash.values()) clearTimeout(held.timer);
    },
  };
}
