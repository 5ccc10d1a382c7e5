// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @notice A stand-in for the OP-stack GasPriceOracle predeploy (0x420000000000000000000000000000000000000F) on
/// the devnet's base chain. It computes the L1 data fee with the Ecotone formula of the real contract
/// (GasPriceOracle.sol, `_getL1FeeEcotone`), from parameters its owner sets instead of the L1Block predeploy:
///   l1GasUsed = 16 × non-zero bytes + 4 × zero bytes + 68 × 16   (the 68 bytes stand for the signature)
///   fee = l1GasUsed × (16 × baseFeeScalar × l1BaseFee + blobBaseFeeScalar × blobBaseFee) / (16 × 10^6)
/// Fjord replaced the calldata count with a FastLZ-compressed size in `getL1Fee`, which this stand-in does not
/// implement; `getL1FeeUpperBound` is Fjord's, exactly. The devnet puts the runtime code at the predeploy's
/// address (anvil_setCode), so storage starts empty: `initialize` sets the owner and parameters once.
contract DevnetGasPriceOracle {
    uint256 public constant DECIMALS = 6;
    /// Fjord's linear regression of the compressed size (GasPriceOracle.sol `_fjordLinearRegression`).
    int256 private constant COST_INTERCEPT = -42_585_600;
    uint256 private constant COST_FASTLZ_COEF = 836_500;
    uint256 private constant MIN_TRANSACTION_SIZE = 100;

    address public owner;
    uint256 public l1BaseFee;
    uint256 public blobBaseFee;
    uint32 public baseFeeScalar;
    uint32 public blobBaseFeeScalar;

    error NotOwner();
    error AlreadyInitialized();

    function initialize(address owner_, uint256 l1BaseFee_, uint256 blobBaseFee_, uint32 baseFeeScalar_, uint32 blobBaseFeeScalar_) external {
        if (owner != address(0)) revert AlreadyInitialized();
        owner = owner_;
        _set(l1BaseFee_, blobBaseFee_, baseFeeScalar_, blobBaseFeeScalar_);
    }

    function setParameters(uint256 l1BaseFee_, uint256 blobBaseFee_, uint32 baseFeeScalar_, uint32 blobBaseFeeScalar_) external {
        if (msg.sender != owner) revert NotOwner();
        _set(l1BaseFee_, blobBaseFee_, baseFeeScalar_, blobBaseFeeScalar_);
    }

    function isEcotone() external pure returns (bool) {
        return true;
    }

    function isFjord() external pure returns (bool) {
        return true;
    }

    function decimals() external pure returns (uint256) {
        return DECIMALS;
    }

    /// The L1 data fee in wei of a serialized (signed) transaction, Ecotone's formula.
    function getL1Fee(bytes calldata data) external view returns (uint256) {
        return (getL1GasUsed(data) * _scaledFee()) / (16 * 10 ** DECIMALS);
    }

    /// Ecotone's L1 gas of a transaction: its calldata gas plus 68 non-zero bytes for the signature.
    function getL1GasUsed(bytes calldata data) public pure returns (uint256) {
        uint256 total = 0;
        for (uint256 i = 0; i < data.length; i++) total += data[i] == 0 ? 4 : 16;
        return total + 68 * 16;
    }

    /// Fjord's upper bound of the L1 fee of an unsigned transaction of `unsignedTxSize` bytes.
    function getL1FeeUpperBound(uint256 unsignedTxSize) external view returns (uint256) {
        uint256 txSize = unsignedTxSize + 68;
        uint256 flzUpperBound = txSize + txSize / 255 + 16;
        int256 estimated = COST_INTERCEPT + int256(COST_FASTLZ_COEF * flzUpperBound);
        uint256 estimatedSize = estimated < int256(MIN_TRANSACTION_SIZE * 1e6) ? MIN_TRANSACTION_SIZE * 1e6 : uint256(estimated);
        return (estimatedSize * _scaledFee()) / (10 ** (DECIMALS * 2));
    }

    function _scaledFee() private view returns (uint256) {
        return uint256(baseFeeScalar) * 16 * l1BaseFee + uint256(blobBaseFeeScalar) * blobBaseFee;
    }

    function _set(uint256 l1BaseFee_, uint256 blobBaseFee_, uint32 baseFeeScalar_, uint32 blobBaseFeeScalar_) private {
        l1BaseFee = l1BaseFee_;
        blobBaseFee = blobBaseFee_;
        baseFeeScalar = baseFeeScalar_;
        blobBaseFeeScalar = blobBaseFeeScalar_;
    }
}
