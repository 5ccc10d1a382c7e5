import { decodeEventLog, keccak256, toEventSelector, toHex, type Hex } from 'viem';
import type { ReceiptLog } from '../../chain/types.ts';
import { eventEmitterAbi } from './abis.generated.ts';

/**
 * GMX logs everything through its EventEmitter as EventLog / EventLog1 / EventLog2: the event's name (its hash
 * indexed), up to two indexed topics (an order's key, an account), and a bag of items by key (`executionPrice`,
 * `reason`, …). This reads them back into plain maps.
 */
export const EVENT_LOG1 = toEventSelector(eventEmitterAbi.find((e) => e.name === 'EventLog1')!);
export const EVENT_LOG2 = toEventSelector(eventEmitterAbi.find((e) => e.name === 'EventLog2')!);

/** The indexed `eventNameHash` of an event name: keccak256 of the string (Solidity's indexed string). */
export const eventNameHash = (name: string): Hex => keccak256(toHex(name));

/** An account as GMX indexes it (topic1 or topic2): the address left-padded to 32 bytes. */
export const accountTopic = (account: string): Hex => `0x${account.slice(2).toLowerCase().padStart(64, '0')}`;

export interface GmxEvent {
  name: string;
  topic1?: Hex;
  topic2?: Hex;
  address: Record<string, string>;
  uint: Record<string, bigint>;
  int: Record<string, bigint>;
  bool: Record<string, boolean>;
  bytes32: Record<string, Hex>;
  bytes: Record<string, Hex>;
  string: Record<string, string>;
}

interface Items<T> {
  items: readonly { key: string; value: T }[];
}
const byKey = <T>(items: Items<T>): Record<string, T> => Object.fromEntries(items.items.map((i) => [i.key, i.value]));

/** A log of the EventEmitter decoded, or undefined when it is not an EventLog1/EventLog2. */
export function decodeGmxEvent(log: Pick<ReceiptLog, 'topics' | 'data'>): GmxEvent | undefined {
  const sig = log.topics[0];
  if (sig !== EVENT_LOG1 && sig !== EVENT_LOG2) return undefined;
  try {
    const decoded = decodeEventLog({ abi: eventEmitterAbi, topics: log.topics as [Hex, ...Hex[]], data: log.data });
    const args = decoded.args as unknown as {
      eventName: string;
      topic1?: Hex;
      topic2?: Hex;
      eventData: {
        addressItems: Items<string>;
        uintItems: Items<bigint>;
        intItems: Items<bigint>;
        boolItems: Items<boolean>;
        bytes32Items: Items<Hex>;
        bytesItems: Items<Hex>;
        stringItems: Items<string>;
      };
    };
    const d = args.eventData;
    return {
      name: args.eventName,
      ...(args.topic1 !== undefined && { topic1: args.topic1 }),
      ...(args.topic2 !== undefined && { topic2: args.topic2 }),
      address: byKey(d.addressItems),
      uint: byKey(d.uintItems),
      int: byKey(d.intItems),
      bool: byKey(d.boolItems),
      bytes32: byKey(d.bytes32Items),
      bytes: byKey(d.bytesItems),
      string: byKey(d.stringItems),
    };
  } catch {
    return undefined;
  }
}
