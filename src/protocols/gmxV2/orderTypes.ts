/**
 * GMX's Order.OrderType (Order.sol), as the contracts number them, and the names the API gives the ones perp-v2
 * creates. The API's names are GMX's in snake case.
 */
export const ORDER_TYPES = {
  market_swap: 0,
  limit_swap: 1,
  market_increase: 2,
  limit_increase: 3,
  market_decrease: 4,
  limit_decrease: 5,
  stop_loss_decrease: 6,
  liquidation: 7,
  stop_increase: 8,
} as const;
export type OrderTypeName = keyof typeof ORDER_TYPES;

const NAMES = Object.fromEntries(Object.entries(ORDER_TYPES).map(([k, v]) => [v, k])) as Record<number, OrderTypeName>;
export const orderTypeName = (n: number): OrderTypeName | `unknown_${number}` => NAMES[n] ?? `unknown_${n}`;

export const isIncreaseType = (t: number): boolean => t === ORDER_TYPES.market_increase || t === ORDER_TYPES.limit_increase || t === ORDER_TYPES.stop_increase;
