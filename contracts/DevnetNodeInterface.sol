// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @notice A stand-in for Arbitrum's NodeInterface (0x00000000000000000000000000000000000000C8) on the devnet's
/// arbitrum chain. On Arbitrum it is no contract: the node answers calls to that address itself. Nitro's
/// `gasEstimateL1Component` (execution/nodeInterface/NodeInterface.go, with arbos/l1pricing PosterDataCost for a
/// message without a transaction) prices the data as
///   units = 16 × (brotli-compressed size of data + 140)      (140: TxFixedCost, a transaction without its data)
///   feeForL1 = pricePerUnit × units, padded by 10 % (GasEstimationL1PricePadding, 11000 bips)
///   gasForL1 = feeForL1 / L2 base fee
/// and returns (gasForL1, L2 base fee, l1BaseFeeEstimate = pricePerUnit). The stand-in has no brotli: it counts
/// the data uncompressed, an upper bound of the compressed size. `pricePerUnit` is set by the owner; the L2 base
/// fee is the block's, or `minBaseFee` when that is lower (an eth_call may run with base fee 0). The devnet
/// puts the runtime code at the address (anvil_setCode), so storage starts empty: `initialize` sets it once.
contract DevnetNodeInterface {
    uint256 public constant TX_FIXED_COST = 140;
    uint256 public constant DATA_GAS_PER_BYTE = 16;
    uint256 public constant PRICE_PADDING_BIPS = 11_000;

    address public owner;
    uint256 public pricePerUnit;
    uint256 public minBaseFee;

    error NotOwner();
    error AlreadyInitialized();

    function initialize(address owner_, uint256 pricePerUnit_, uint256 minBaseFee_) external {
        if (owner != address(0)) revert AlreadyInitialized();
        owner = owner_;
        pricePerUnit = pricePerUnit_;
        minBaseFee = minBaseFee_;
    }

    function setParameters(uint256 pricePerUnit_, uint256 minBaseFee_) external {
        if (msg.sender != owner) revert NotOwner();
        pricePerUnit = pricePerUnit_;
        minBaseFee = minBaseFee_;
    }

    function gasEstimateL1Component(address, bool, bytes calldata data)
        external
        view
        returns (uint64 gasEstimateForL1, uint256 baseFee, uint256 l1BaseFeeEstimate)
    {
        baseFee = block.basefee > minBaseFee ? block.basefee : minBaseFee;
        uint256 units = DATA_GAS_PER_BYTE * (data.length + TX_FIXED_COST);
        uint256 feeForL1 = (pricePerUnit * units * PRICE_PADDING_BIPS) / 10_000;
        gasEstimateForL1 = uint64(feeForL1 / baseFee);
        l1BaseFeeEstimate = pricePerUnit;
    }
}
