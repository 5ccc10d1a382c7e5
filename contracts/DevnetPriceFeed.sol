// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @notice A Chainlink-style price feed for the devnet's lending protocols: AggregatorV3 (`latestRoundData`,
/// read by Compound v3) and the legacy `latestAnswer` (read by Aave v3's oracle). Its owner sets the answer,
/// so tests can move a price and watch a position's health follow.
contract DevnetPriceFeed {
    uint8 public immutable decimals;
    string public description;
    uint256 public constant version = 1;
    address public immutable owner;

    int256 public latestAnswer;
    uint256 public latestTimestamp;
    uint80 public latestRound;

    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    error NotOwner();

    constructor(uint8 decimals_, string memory description_, int256 answer, address owner_) {
        decimals = decimals_;
        description = description_;
        owner = owner_;
        _set(answer);
    }

    function setAnswer(int256 answer) external {
        if (msg.sender != owner) revert NotOwner();
        _set(answer);
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        return (latestRound, latestAnswer, latestTimestamp, latestTimestamp, latestRound);
    }

    function _set(int256 answer) private {
        latestRound += 1;
        latestAnswer = answer;
        latestTimestamp = block.timestamp;
        emit AnswerUpdated(answer, latestRound, block.timestamp);
    }
}
