// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {GmxKeys, GmxRoleModule, IGmxErc20, IGmxRoleStore} from "DevnetGmxCommon.sol";

/// @notice GMX v2's (Synthetics) Router for the devnet: the spender users approve; ROUTER_PLUGINs (the
/// ExchangeRouter) move an account's tokens through `pluginTransfer`.
contract DevnetGmxRouter is GmxRoleModule {
    error TokenTransferError(address token, address receiver, uint256 amount);

    constructor(IGmxRoleStore roleStore_) GmxRoleModule(roleStore_) {}

    function pluginTransfer(address token, address account, address receiver, uint256 amount)
        external
        onlyRole(GmxKeys.ROUTER_PLUGIN, "ROUTER_PLUGIN")
    {
        (bool ok, bytes memory ret) = token.call(abi.encodeCall(IGmxErc20.transferFrom, (account, receiver, amount)));
        if (!ok || (ret.length > 0 && !abi.decode(ret, (bool)))) revert TokenTransferError(token, receiver, amount);
    }
}
