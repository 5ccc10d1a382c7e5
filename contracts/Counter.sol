// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @notice Test target for executions: records who called last, so tests can tell the smart wallet was the caller.
contract Counter {
    uint256 public number;
    address public lastCaller;

    event Incremented(address caller, uint256 newValue);

    function increment() external {
        _set(number + 1);
        emit Incremented(msg.sender, number);
    }

    function incrementBy(uint256 amount) external {
        _set(number + amount);
        emit Incremented(msg.sender, number);
    }

    function setNumber(uint256 newNumber) external {
        _set(newNumber);
    }

    /// @notice Always reverts: lets tests exercise a failed call with a known reason.
    function fail() external pure {
        require(false, "Counter: forced failure");
    }

    function _set(uint256 newNumber) private {
        number = newNumber;
        lastCaller = msg.sender;
    }
}
