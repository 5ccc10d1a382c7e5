/**
 * GMX's SDK (@gmx-io/sdk 1.4.0, unpacked, never installed: scripts/lib/gmxSdk.ts) as the oracle the perp-v2 client's
 * arithmetic is compared with: its own utilities, called on inputs built from the same values. The SDK's input types
 * are wide (MarketInfo has ~80 fields); the builders here fill only what the compared functions read.
 */
import { requireGmxSdk } from '../../scripts/lib/gmxSdk.ts';

/* eslint-disable @typescript-eslint/no-explicit-any -- the SDK's CommonJS build is untyped here */
type Fn = (...args: any[]) => any;
const load = (file: string) => requireGmxSdk<Record<string, Fn | any>>(`build/cjs/src/${file}`);

export const sdk = {
  dataStore: load('configs/dataStore.js'),
  hash: load('utils/hash.js'),
  positions: load('utils/positions.js'),
  fees: load('utils/fees/index.js'),
  prices: load('utils/prices.js'),
  trade: load('utils/trade/trade.js'),
  markets: load('utils/markets.js'),
  orders: load('types/orders.js'),
};
