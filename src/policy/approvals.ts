import { decodeFunctionData, getAddress, parseAbi, toFunctionSelector, type Address, type Hex } from 'viem';
import type { Call } from '../api/v1alpha1/index.ts';

/**
 * The allowance a call grants, if it grants one: what lets someone else move the wallet's tokens later, so a policy
 * judges it as a kind of its own. Revoking (`approve(_, 0)`, `setApprovalForAll(_, false)`) grants nothing.
 */
export interface Approval {
  /** The standard it goes through. */
  kind: 'erc20' | 'erc20-increase' | 'operator' | 'permit2';
  spender: Address;
  /** The amount granted (ERC-20, Permit2); undefined for an operator, who may move every token of the collection. */
  amount?: bigint;
  /** The token whose allowance it is: the call's target, or Permit2's `token` argument. */
  token: Address;
}

const ABI = parseAbi([
  'function approve(address spender, uint256 amount)',
  'function increaseAllowance(address spender, uint256 addedValue)',
  // OpenZeppelin before 2.0 (and tokens copied from it).
  'function increaseApproval(address spender, uint256 addedValue)',
  'function setApprovalForAll(address operator, bool approved)',
  // Permit2's AllowanceTransfer.approve: the same name, a selector of its own (0x87517c45).
  'function approve(address token, address spender, uint160 amount, uint48 expiration)',
]);

const SELECTORS = new Set<string>(ABI.map((f) => toFunctionSelector(f)));

/**
 * The allowance `call` grants; undefined when it grants none; `undecodable` when it calls one of these functions
 * with arguments that do not decode (a lenient token may still run it: a rule judges it as it judges doubt).
 * Decoded once per call however many rules ask.
 */
export function approvalOf(call: Call): Approval | undefined | 'undecodable' {
  if (approvalByCall.has(call)) return approvalByCall.get(call);
  const found = decodeApproval(call);
  approvalByCall.set(call, found);
  return found;
}
const approvalByCall = new WeakMap<Call, Approval | undefined | 'undecodable'>();

function decodeApproval(call: Call): Approval | undefined | 'undecodable' {
  if (call.data.length < 10 || !SELECTORS.has(call.data.slice(0, 10).toLowerCase())) return undefined;
  let decoded;
  try {
    decoded = decodeFunctionData({ abi: ABI, data: call.data as Hex });
  } catch {
    return 'undecodable';
  }
  const target = getAddress(call.target);
  const args = decoded.args as readonly unknown[];
  switch (decoded.functionName) {
    case 'approve':
      if (args.length === 4) {
        const [token, spender, amount] = args as [Address, Address, bigint];
        return amount === 0n ? undefined : { kind: 'permit2', spender: getAddress(spender), amount, token: getAddress(token) };
      } else {
        const [spender, amount] = args as [Address, bigint];
        return amount === 0n ? undefined : { kind: 'erc20', spender: getAddress(spender), amount, token: target };
      }
    case 'increaseAllowance':
    case 'increaseApproval': {
      const [spender, amount] = args as [Address, bigint];
      return amount === 0n ? undefined : { kind: 'erc20-increase', spender: getAddress(spender), amount, token: target };
    }
    case 'setApprovalForAll': {
      const [operator, approved] = args as [Address, boolean];
      return approved ? { kind: 'operator', spender: getAddress(operator), token: target } : undefined;
    }
  }
}
