/**
 * Aave v3's per-reserve configuration bitmap (`Pool.getConfiguration(asset).data`), decoded as
 * ReserveConfiguration.sol (core-v3 1.19) lays it out: one read tells what the configurator has set.
 */
export interface ReserveConfiguration {
  ltv: number;
  liquidationThreshold: number;
  liquidationBonus: number;
  decimals: number;
  active: boolean;
  frozen: boolean;
  borrowingEnabled: boolean;
  stableBorrowingEnabled: boolean;
  paused: boolean;
  flashLoanEnabled: boolean;
  reserveFactor: number;
  borrowCap: bigint;
  supplyCap: bigint;
  liquidationProtocolFee: number;
}

const bits = (data: bigint, start: number, width: number): bigint => (data >> BigInt(start)) & ((1n << BigInt(width)) - 1n);
const flag = (data: bigint, at: number): boolean => bits(data, at, 1) === 1n;

export function decodeReserveConfiguration(data: bigint): ReserveConfiguration {
  return {
    ltv: Number(bits(data, 0, 16)),
    liquidationThreshold: Number(bits(data, 16, 16)),
    liquidationBonus: Number(bits(data, 32, 16)),
    decimals: Number(bits(data, 48, 8)),
    active: flag(data, 56),
    frozen: flag(data, 57),
    borrowingEnabled: flag(data, 58),
    stableBorrowingEnabled: flag(data, 59),
    paused: flag(data, 60),
    flashLoanEnabled: flag(data, 63),
    reserveFactor: Number(bits(data, 64, 16)),
    borrowCap: bits(data, 80, 36),
    supplyCap: bits(data, 116, 36),
    liquidationProtocolFee: Number(bits(data, 152, 16)),
  };
}
