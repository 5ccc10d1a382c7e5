// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {GmxKeys, IGmxRoleStore, IGmxWeth} from "DevnetGmxCommon.sol";
import {DevnetGmxBank} from "DevnetGmxBank.sol";

/// @notice GMX v2's MarketToken for the devnet: the market's Bank (its pool and the positions' collateral) and the
/// ERC-20 of its liquidity (GM), 18 decimals as GMX's. CONTROLLERs mint and burn it (deposits and withdrawals).
contract DevnetGmxMarketToken is DevnetGmxBank {
    string public constant symbol = "GM";
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    error InsufficientBalance(address account, uint256 balance, uint256 amount);
    error InsufficientAllowance(address owner, address spender, uint256 allowance, uint256 amount);

    constructor(IGmxRoleStore roleStore_, IGmxWeth wnt_, string memory name_) DevnetGmxBank(roleStore_, wnt_, name_) {}

    function mint(address account, uint256 amount) external onlyRole(GmxKeys.CONTROLLER, "CONTROLLER") {
        totalSupply += amount;
        balanceOf[account] += amount;
        emit Transfer(address(0), account, amount);
    }

    function burn(address account, uint256 amount) external onlyRole(GmxKeys.CONTROLLER, "CONTROLLER") {
        _move(account, address(0), amount);
        totalSupply -= amount;
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        _move(msg.sender, to, amount);
        return true;
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            if (allowed < amount) revert InsufficientAllowance(from, msg.sender, allowed, amount);
            allowance[from][msg.sender] = allowed - amount;
        }
        _move(from, to, amount);
        return true;
    }

    function _move(address from, address to, uint256 amount) private {
        uint256 held = balanceOf[from];
        if (held < amount) revert InsufficientBalance(from, held, amount);
        balanceOf[from] = held - amount;
        if (to != address(0)) balanceOf[to] += amount;
        emit Transfer(from, to, amount);
    }
}
