// SPDX-License-Identifier: GPL-3.0
pragma solidity 0.8.28;

/// @dev EntryPoint v0.7's PackedUserOperation (core/UserOperationLib.sol of @account-abstraction/contracts 0.7.0).
struct PackedUserOperation {
    address sender;
    uint256 nonce;
    bytes initCode;
    bytes callData;
    bytes32 accountGasLimits;
    uint256 preVerificationGas;
    bytes32 gasFees;
    bytes paymasterAndData;
    bytes signature;
}

/// @dev The EntryPoint v0.7 functions this paymaster calls (IStakeManager's, as BasePaymaster calls them).
interface ICompactPaymasterEntryPoint {
    function depositTo(address account) external payable;
    function withdrawTo(address payable withdrawAddress, uint256 withdrawAmount) external;
    function addStake(uint32 unstakeDelaySec) external payable;
    function unlockStake() external;
    function withdrawStake(address payable withdrawAddress) external;
    function balanceOf(address account) external view returns (uint256);
    function supportsInterface(bytes4 interfaceId) external view returns (bool);
}

/// @notice eth-infinitism's VerifyingPaymaster v0.7 (samples/VerifyingPaymaster.sol, @account-abstraction/contracts
/// 0.7.0, with BasePaymaster and Ownable folded in) with a compact paymasterData: 76 bytes instead of 129.
///   paymasterAndData[0:20]   paymaster (this), [20:36] verification gas limit, [36:52] postOp gas limit (EntryPoint's)
///   paymasterAndData[52:58]  validUntil, uint48 big-endian (was abi.encode(uint48, uint48): 64 bytes)
///   paymasterAndData[58:64]  validAfter, uint48 big-endian
///   paymasterAndData[64:128] the signer's signature as EIP-2098 (r, yParityAndS) (was 65 bytes r, s, v)
/// The signed hash is the reference's getHash, unchanged (the off-chain code signs both with getSponsorshipHash).
/// What it does not have of the reference: postOp (the reference's reverts: it returns no context, so the EntryPoint
/// never calls it) and 65-byte signatures.
contract CompactVerifyingPaymaster {
    /// @dev UserOperationLib's offsets in paymasterAndData.
    uint256 private constant PAYMASTER_VALIDATION_GAS_OFFSET = 20;
    uint256 private constant PAYMASTER_DATA_OFFSET = 52;
    uint256 private constant PAYMASTER_AND_DATA_LENGTH = PAYMASTER_DATA_OFFSET + 12 + 64;
    /// @dev secp256k1n / 2: a larger s is the other of a signature's two forms (OpenZeppelin ECDSA's check).
    uint256 private constant HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    ICompactPaymasterEntryPoint public immutable entryPoint;
    address public immutable verifyingSigner;
    address public owner;

    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    constructor(ICompactPaymasterEntryPoint _entryPoint, address _verifyingSigner) {
        // BasePaymaster's _validateEntryPointInterface: IEntryPoint's ERC-165 id.
        require(_entryPoint.supportsInterface(0x915074d8), "IEntryPoint interface mismatch");
        require(_verifyingSigner != address(0), "CompactVerifyingPaymaster: no signer");
        entryPoint = _entryPoint;
        verifyingSigner = _verifyingSigner;
        owner = msg.sender;
        emit OwnershipTransferred(address(0), msg.sender);
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "Ownable: caller is not the owner");
        _;
    }

    function transferOwnership(address newOwner) external onlyOwner {
        require(newOwner != address(0), "Ownable: new owner is the zero address");
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    /// @notice The reference's getHash: every field of the operation but paymasterData and the account's signature.
    function getHash(PackedUserOperation calldata userOp, uint48 validUntil, uint48 validAfter) public view returns (bytes32) {
        return
            keccak256(
                abi.encode(
                    userOp.sender,
                    userOp.nonce,
                    keccak256(userOp.initCode),
                    keccak256(userOp.callData),
                    userOp.accountGasLimits,
                    uint256(bytes32(userOp.paymasterAndData[PAYMASTER_VALIDATION_GAS_OFFSET:PAYMASTER_DATA_OFFSET])),
                    userOp.preVerificationGas,
                    userOp.gasFees,
                    block.chainid,
                    address(this),
                    validUntil,
                    validAfter
                )
            );
    }

    /// @notice IPaymaster: only the EntryPoint calls it. A wrong signature is not a revert: it returns
    /// SIG_VALIDATION_FAILED (the EntryPoint's AA34), as the reference does.
    function validatePaymasterUserOp(PackedUserOperation calldata userOp, bytes32, uint256)
        external
        view
        returns (bytes memory context, uint256 validationData)
    {
        require(msg.sender == address(entryPoint), "Sender not EntryPoint");
        bytes calldata data = userOp.paymasterAndData;
        require(data.length == PAYMASTER_AND_DATA_LENGTH, "CompactVerifyingPaymaster: invalid paymasterAndData length");
        uint48 validUntil = uint48(bytes6(data[52:58]));
        uint48 validAfter = uint48(bytes6(data[58:64]));
        bytes32 r = bytes32(data[64:96]);
        bytes32 vs = bytes32(data[96:128]);
        // EIP-2098: the top bit of vs is the y parity, the rest is s.
        uint256 s = uint256(vs) & ~uint256(1 << 255);
        uint8 v = uint8((uint256(vs) >> 255) + 27);
        // toEthSignedMessageHash, as the reference (MessageHashUtils).
        bytes32 hash = keccak256(abi.encodePacked("\x19Ethereum Signed Message:\n32", getHash(userOp, validUntil, validAfter)));
        // ecrecover gives address(0) for a signature it cannot recover; verifyingSigner is never zero.
        bool failed = s > HALF_ORDER || ecrecover(hash, v, r, bytes32(s)) != verifyingSigner;
        // Helpers._packValidationData(sigFailed, validUntil, validAfter).
        validationData = (failed ? 1 : 0) | (uint256(validUntil) << 160) | (uint256(validAfter) << 208);
        return ("", validationData);
    }

    /// @notice IPaymaster: never called (validation returns no context); reverts as BasePaymaster's does.
    function postOp(uint8, bytes calldata, uint256, uint256) external pure {
        revert("must override");
    }

    // ── BasePaymaster's deposit and stake management ──────────────────────────────────────────────────────────

    function deposit() public payable {
        entryPoint.depositTo{value: msg.value}(address(this));
    }

    function withdrawTo(address payable withdrawAddress, uint256 amount) public onlyOwner {
        entryPoint.withdrawTo(withdrawAddress, amount);
    }

    function addStake(uint32 unstakeDelaySec) external payable onlyOwner {
        entryPoint.addStake{value: msg.value}(unstakeDelaySec);
    }

    function getDeposit() public view returns (uint256) {
        return entryPoint.balanceOf(address(this));
    }

    function unlockStake() external onlyOwner {
        entryPoint.unlockStake();
    }

    function withdrawStake(address payable withdrawAddress) external onlyOwner {
        entryPoint.withdrawStake(withdrawAddress);
    }
}
