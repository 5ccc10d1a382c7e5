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
/// Where it differs from the reference: no 65-byte signatures; a signature that does not recover (ECDSA.recover
/// reverts on it in the reference: AA33) returns SIG_VALIDATION_FAILED (AA34), as another signer's does in both;
/// postOp reverts without the EntryPoint check (the reference's reverts too: no context is returned, so the
/// EntryPoint never calls it); Ownable's errors are strings and there is no renounceOwnership.
contract CompactVerifyingPaymaster {
    /// @dev UserOperationLib's offsets in paymasterAndData.
    uint256 private constant PAYMASTER_VALIDATION_GAS_OFFSET = 20;
    uint256 private constant PAYMASTER_DATA_OFFSET = 52;
    uint256 private constant PAYMASTER_AND_DATA_LENGTH = PAYMASTER_DATA_OFFSET + 12 + 64;
    /// @dev secp256k1n / 2: a larger s is the other of a signature's two forms (OpenZeppelin ECDSA's check). In
    /// EIP-2098's form s < 2^255, so only a sliver of signatures have a second form to refuse; and a second form
    /// would change the userOpHash the account signed anyway. Kept for parity with the reference.
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
        bytes32 hash = _hash(userOp, data, validUntil, validAfter);
        bytes32 r = bytes32(data[64:96]);
        bytes32 vs = bytes32(data[96:128]);
        // EIP-2098: the top bit of vs is the y parity, the rest is s.
        uint256 s = uint256(vs) & ~uint256(1 << 255);
        uint8 v = uint8((uint256(vs) >> 255) + 27);
        // ecrecover gives address(0) for a signature it cannot recover; verifyingSigner is never zero.
        bool failed = s > HALF_ORDER || ecrecover(hash, v, r, bytes32(s)) != verifyingSigner;
        // Helpers._packValidationData(sigFailed, validUntil, validAfter).
        validationData = (failed ? 1 : 0) | (uint256(validUntil) << 160) | (uint256(validAfter) << 208);
        return ("", validationData);
    }

    /// @dev toEthSignedMessageHash(getHash(userOp, validUntil, validAfter)), the same words hashed in scratch memory
    /// (getHash's abi.encode and calldata struct reads cost ~3k more per operation). The dynamic fields come through
    /// Solidity's checked calldata accessors; only the copies and hashing are assembly.
    function _hash(PackedUserOperation calldata userOp, bytes calldata data, uint48 validUntil, uint48 validAfter)
        private
        view
        returns (bytes32 hash)
    {
        bytes calldata initCode = userOp.initCode;
        bytes calldata callData = userOp.callData;
        address sender = userOp.sender;
        uint256 nonce = userOp.nonce;
        bytes32 accountGasLimits = userOp.accountGasLimits;
        uint256 paymasterGasLimits = uint256(bytes32(data[PAYMASTER_VALIDATION_GAS_OFFSET:PAYMASTER_DATA_OFFSET]));
        uint256 preVerificationGas = userOp.preVerificationGas;
        bytes32 gasFees = userOp.gasFees;
        assembly ("memory-safe") {
            let p := mload(0x40)
            calldatacopy(p, initCode.offset, initCode.length)
            let initCodeHash := keccak256(p, initCode.length)
            calldatacopy(p, callData.offset, callData.length)
            let callDataHash := keccak256(p, callData.length)
            mstore(p, sender)
            mstore(add(p, 0x20), nonce)
            mstore(add(p, 0x40), initCodeHash)
            mstore(add(p, 0x60), callDataHash)
            mstore(add(p, 0x80), accountGasLimits)
            mstore(add(p, 0xa0), paymasterGasLimits)
            mstore(add(p, 0xc0), preVerificationGas)
            mstore(add(p, 0xe0), gasFees)
            mstore(add(p, 0x100), chainid())
            mstore(add(p, 0x120), address())
            mstore(add(p, 0x140), validUntil)
            mstore(add(p, 0x160), validAfter)
            let opHash := keccak256(p, 0x180)
            // "\x19Ethereum Signed Message:\n32" ‖ opHash (MessageHashUtils.toEthSignedMessageHash).
            mstore(0x00, "\x19Ethereum Signed Message:\n32")
            mstore(0x1c, opHash)
            hash := keccak256(0x00, 0x3c)
        }
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
