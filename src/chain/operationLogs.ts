import { isAddressEqual, parseAbiItem, toEventSelector, type Address, type Hex } from 'viem';
import type { ReceiptLog } from './types.ts';

const USER_OPERATION_EVENT = toEventSelector(
  parseAbiItem('event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)'),
);
const BEFORE_EXECUTION = toEventSelector(parseAbiItem('event BeforeExecution()'));

/**
 * The logs one ERC-4337 operation's execution emitted, from its bundle's receipt: the EntryPoint (v0.6 to v0.8)
 * emits BeforeExecution once before the bundle's executions and each operation's UserOperationEvent right after
 * its own logs, so an operation's logs lie between the previous of those two and its own UserOperationEvent.
 * Empty when the receipt holds no UserOperationEvent for `userOpHash` from `entryPoint`.
 */
export function operationLogs(logs: readonly ReceiptLog[], entryPoint: Address, userOpHash: Hex): ReceiptLog[] {
  const fromEntryPoint = (l: ReceiptLog, topic: Hex) => l.topics[0] === topic && isAddressEqual(l.address, entryPoint);
  const end = logs.findIndex((l) => fromEntryPoint(l, USER_OPERATION_EVENT) && l.topics[1]?.toLowerCase() === userOpHash.toLowerCase());
  if (end < 0) return [];
  let start = end;
  while (start > 0 && !fromEntryPoint(logs[start - 1]!, USER_OPERATION_EVENT) && !fromEntryPoint(logs[start - 1]!, BEFORE_EXECUTION)) start--;
  return logs.slice(start, end);
}
