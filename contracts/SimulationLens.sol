// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @notice Never deployed: its runtime code is put at the EntryPoint's address by state override for one
/// eth_call, so that the wallet, which only takes calls from its EntryPoint, runs the calls as inside handleOps.
/// `observe` reads, runs the wallet call, and reads again, all in one call at one block: what a simulation
/// changes (balances, a lending position) is measured on the state the calls themselves leave.
contract SimulationLens {
    struct Read {
        address target;
        bytes data;
    }

    struct Outcome {
        bool success;
        bytes data;
    }

    /// @dev A failing wallet call reverts with its own revert data, as a plain simulation would.
    function observe(address wallet, bytes calldata walletCall, Read[] calldata reads)
        external
        returns (Outcome[] memory before, Outcome[] memory afterwards)
    {
        before = _readAll(reads);
        (bool ok, bytes memory result) = wallet.call(walletCall);
        if (!ok) {
            assembly {
                revert(add(result, 32), mload(result))
            }
        }
        afterwards = _readAll(reads);
    }

    /// @notice An account's native coin balance: reads addressed to the zero address in `observe`'s list come
    /// here (the chain worker points them at the lens), so a simulation measures native ETH as it does tokens.
    function nativeBalance(address account) external view returns (uint256) {
        return account.balance;
    }

    function _readAll(Read[] calldata reads) private view returns (Outcome[] memory out) {
        out = new Outcome[](reads.length);
        for (uint256 i = 0; i < reads.length; i++) {
            (bool success, bytes memory data) = reads[i].target.staticcall(reads[i].data);
            out[i] = Outcome(success, data);
        }
    }
}
