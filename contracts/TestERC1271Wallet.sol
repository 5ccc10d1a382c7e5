// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @notice The smallest ERC-1271 smart wallet, for tests of contract payers: a signature is valid when its
/// owner signed the hash itself with ECDSA. (The service's own SimpleAccount v0.7 wallets implement no
/// ERC-1271 at all, so they cannot sign an EIP-3009 authorization.) Not deployed by the devnet: tests deploy it.
contract TestERC1271Wallet {
    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return 0xffffffff;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        address signer = ecrecover(hash, v, r, s);
        return signer != address(0) && signer == owner ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }
}
