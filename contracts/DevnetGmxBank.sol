// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {GmxKeys, GmxRoleModule, IGmxErc20, IGmxRoleStore, IGmxWeth} from "DevnetGmxCommon.sol";

/// @notice GMX v2's Bank/StrictBank for the devnet, used as the OrderVault and as a market's token (where GMX
/// keeps the pool and the positions' collateral): CONTROLLERs move tokens out; `recordTransferIn` returns what
/// arrived since the last record (how GMX learns the amount a multicall's sendTokens/sendWnt paid in).
contract DevnetGmxBank is GmxRoleModule {
    string public name;
    IGmxWeth public immutable wnt;
    mapping(address => uint256) public tokenBalances;

    error TokenTransferError(address token, address receiver, uint256 amount);

    constructor(IGmxRoleStore roleStore_, IGmxWeth wnt_, string memory name_) GmxRoleModule(roleStore_) {
        wnt = wnt_;
        name = name_;
    }

    /// Native coin only from the WNT contract (unwrapping).
    receive() external payable {
        if (msg.sender != address(wnt)) revert TokenTransferError(address(0), address(this), msg.value);
    }

    function recordTransferIn(address token) external onlyRole(GmxKeys.CONTROLLER, "CONTROLLER") returns (uint256) {
        uint256 previous = tokenBalances[token];
        uint256 current = IGmxErc20(token).balanceOf(address(this));
        tokenBalances[token] = current;
        return current > previous ? current - previous : 0;
    }

    function syncTokenBalance(address token) external onlyRole(GmxKeys.CONTROLLER, "CONTROLLER") returns (uint256) {
        uint256 current = IGmxErc20(token).balanceOf(address(this));
        tokenBalances[token] = current;
        return current;
    }

    function transferOut(address token, address receiver, uint256 amount) external onlyRole(GmxKeys.CONTROLLER, "CONTROLLER") {
        _transfer(token, receiver, amount);
    }

    /// WNT unwrapped and sent as native coin; if the receiver refuses it, sent as WNT (as GMX falls back).
    function transferOutNativeToken(address receiver, uint256 amount) external onlyRole(GmxKeys.CONTROLLER, "CONTROLLER") {
        if (amount == 0) return;
        wnt.withdraw(amount);
        (bool ok,) = receiver.call{value: amount, gas: 50_000}("");
        if (!ok) {
            wnt.deposit{value: amount}();
            _transfer(address(wnt), receiver, amount);
            return;
        }
        tokenBalances[address(wnt)] = wnt.balanceOf(address(this));
    }

    function _transfer(address token, address receiver, uint256 amount) private {
        if (amount == 0) return;
        (bool ok, bytes memory ret) = token.call(abi.encodeCall(IGmxErc20.transfer, (receiver, amount)));
        if (!ok || (ret.length > 0 && !abi.decode(ret, (bool)))) revert TokenTransferError(token, receiver, amount);
        tokenBalances[token] = IGmxErc20(token).balanceOf(address(this));
    }
}
