// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @notice A call whose success depends on state anyone can flip: for testing simulation versus inclusion.
contract Gate {
    bool public open;
    uint256 public passes;

    function setOpen(bool open_) external {
        open = open_;
    }

    function pass() external {
        require(open, "Gate: closed");
        passes += 1;
    }
}
