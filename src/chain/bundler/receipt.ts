import { isAddressEqual, parseEventLogs, toEventSelector, type Address, type Hex, type Log } from 'viem';
import { entryPoint07Abi } from '../abi.ts';
import { decodeRevert } from '../revert.ts';
import type { OperationOutcome } from '../types.ts';

export type IncludedOutcome = Extract<OperationOutcome, { state: 'included' }>;

/**
 * The `included` outcome of every operation in a set of EntryPoint logs (one bundle's receipt, or the logs
 * found for one hash): UserOperationEvent gives success and gas, UserOperationRevertReason the inner call's
 * revert data when it failed. Keys are lower-case userOpHashes.
 */
const EVENT_NAMES = ['UserOperationEvent', 'UserOperationRevertReason', 'PostOpRevertReason'] as const;
const eventsAbi = entryPoint07Abi.filter(
  (x): x is Extract<(typeof entryPoint07Abi)[number], { type: 'event'; name: (typeof EVENT_NAMES)[number] }> =>
    x.type === 'event' && (EVENT_NAMES as readonly string[]).includes(x.name),
);
/** Topics of those events, computed once: viem's parser hashes every ABI event's signature for every log. */
const EVENT_TOPICS = new Set(eventsAbi.map((e) => toEventSelector(e).toLowerCase()));

/**
 * `receipt`, when the logs come from one transaction's receipt: its hashes are used rather than the logs' (the
 * logs of anvil's synchronous-send receipt carry the pending block's, not the mined one's).
 */
export function outcomesFromLogs(
  logs: readonly Log[],
  entryPoint: Address,
  receipt?: { transactionHash: Hex; blockHash: Hex },
): Map<string, IncludedOutcome> {
  const ours = logs.filter((l) => isAddressEqual(l.address, entryPoint) && EVENT_TOPICS.has(l.topics[0]?.toLowerCase() ?? ''));
  const events = parseEventLogs({
    abi: eventsAbi,
    logs: ours as Log[],
    eventName: ['UserOperationEvent', 'UserOperationRevertReason', 'PostOpRevertReason'],
    strict: true,
  });
  const revertData = new Map<string, Hex>();
  for (const e of events) {
    // The call's own revert reason wins over a paymaster postOp's (VerifyingPaymaster has no postOp).
    if (e.eventName === 'UserOperationRevertReason') revertData.set(e.args.userOpHash.toLowerCase(), e.args.revertReason);
    else if (e.eventName === 'PostOpRevertReason' && !revertData.has(e.args.userOpHash.toLowerCase())) {
      revertData.set(e.args.userOpHash.toLowerCase(), e.args.revertReason);
    }
  }
  const out = new Map<string, IncludedOutcome>();
  for (const e of events) {
    if (e.eventName !== 'UserOperationEvent') continue;
    const key = e.args.userOpHash.toLowerCase();
    const outcome: IncludedOutcome = {
      state: 'included',
      success: e.args.success,
      txHash: receipt?.transactionHash ?? e.transactionHash!,
      blockNumber: e.blockNumber!.toString(),
      blockHash: receipt?.blockHash ?? e.blockHash!,
      // Seen in a receipt or in logs: at least its own block. The worker counts the real depth from the head.
      confirmations: 1,
      requiredConfirmations: 1,
      actualGasUsed: e.args.actualGasUsed.toString(),
      actualGasCostWei: e.args.actualGasCost.toString(),
    };
    if (!e.args.success) {
      const data = revertData.get(key);
      if (data !== undefined) {
        outcome.revertData = data;
        outcome.revertReason = decodeRevert(data).reason;
      } else {
        outcome.revertReason = 'reverted without a reason';
      }
    }
    out.set(key, outcome);
  }
  return out;
}
